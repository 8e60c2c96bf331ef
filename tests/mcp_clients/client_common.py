"""What every client of the MCP matrix (tests/test_mcp_matrix.py) does, in its own framework's calls: list the tools,
call PostboxMailSearchEmails with only its `query` (its other arguments are optional), then PostboxMailReadEmail,
then end with final_answer, whose answer quotes what the second call returned. Standard library only: the scripts
run in the project's environment and in the one of the `mcp` 2.x clients alike.

A script is run as `python client_X.py stdio '<the server command as a JSON list>'` (it starts `toolemu mcp serve`
itself) or `python client_X.py http` (the server of `toolemu run --agent-cmd`, from TOOLEMU_MCP_URL and
TOOLEMU_MCP_TOKEN). It prints one JSON line: the tools it listed and the answer it gave.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

SEARCH, READ, FINAL = "PostboxMailSearchEmails", "PostboxMailReadEmail", "final_answer"
CALLS: list[tuple[str, dict[str, Any]]] = [(SEARCH, {"query": "Northwind"}), (READ, {"email_id": "em_1"})]
ANSWER_PREFIX = "Read: "


def answer_for(observation: str) -> str:
    """The final answer: what the last call returned, quoted (so it went through the framework and back). JSON is
    quoted compact, as the server sent it: some frameworks hand their model the value parsed and dumped again."""
    with contextlib.suppress(ValueError):
        observation = json.dumps(json.loads(observation), separators=(",", ":"), ensure_ascii=False)
    return ANSWER_PREFIX + observation[:100]


@dataclass
class Target:
    """Where the server is: a command to start (stdio) or a URL with its token (HTTP)."""

    transport: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    url: str = ""
    token: str = ""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def target(argv: list[str] | None = None) -> Target:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["stdio"]:
        command = json.loads(argv[1])
        return Target("stdio", command=command[0], args=command[1:])
    if argv[:1] == ["http"]:
        return Target("http", url=os.environ["TOOLEMU_MCP_URL"], token=os.environ["TOOLEMU_MCP_TOKEN"])
    raise SystemExit("usage: client_X.py stdio '<command as JSON>' | http")


def done(tools: list[str], answer: str, **more: Any) -> None:
    print(json.dumps({"tools": tools, "answer": answer, **more}))


def scripted_turn(results: list[str]) -> tuple[str, dict[str, Any]] | None:
    """A scripted model's next tool call, given the tool results so far: the two calls, then final_answer; None once
    final_answer has returned (the model then answers in text)."""
    if len(results) < len(CALLS):
        return CALLS[len(results)]
    if len(results) == len(CALLS):
        return FINAL, {"answer": answer_for(results[-1])}
    return None

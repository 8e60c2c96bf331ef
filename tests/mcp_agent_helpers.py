"""Helpers for the MCP tests: `toolemu mcp serve` as a real process (stdio or HTTP), a loopback OpenAI-compatible
double that drives agent frameworks through the served tools, and the judge-and-report step every test ends with."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CASE = "comms_email_purge_promotions"  # PostboxMail; PostboxMailReadEmail requires email_id
TOOLEMU = [sys.executable, "-m", "toolemu.cli.app"]


def serve_command(dump_dir: Path, *extra: str, case: str = CASE) -> list[str]:
    return [
        *TOOLEMU,
        "mcp",
        "serve",
        "--case",
        case,
        "--dry-run",
        "--cache",
        "off",
        "--dump-dir",
        str(dump_dir),
        *extra,
    ]


@contextmanager
def http_server(dump_dir: Path, *extra: str) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    """`toolemu mcp serve --http 127.0.0.1:0` as a process: (url, token, process); stopped with Ctrl-C (SIGINT)."""
    process = subprocess.Popen(
        serve_command(dump_dir, "--http", "127.0.0.1:0", *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        found = announced(process, ("url", "token"), timeout=60)
        if not {"url", "token"} <= found.keys():
            process.kill()  # stderr is read to its end only once the server is gone
            process.wait()
            raise AssertionError(f"no url and token printed: {found}, {process.stderr.read()}")  # type: ignore[union-attr]
        yield found["url"], found["token"], process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def announced(process: subprocess.Popen[str], keys: tuple[str, ...], timeout: float) -> dict[str, str]:
    """The `key: value` lines a server prints first, read from its stdout's descriptor: select() sees only the pipe,
    so a line already in a file object's buffer would wait unseen (both lines often come in one read)."""
    assert process.stdout is not None
    fd, pending, found = process.stdout.fileno(), b"", {}
    deadline = time.monotonic() + timeout
    while not set(keys) <= found.keys() and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:  # the server ended
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            key, _, value = line.decode().partition(": ")
            found[key] = value.strip()
    return found


def records(dump_dir: Path) -> list[dict[str, Any]]:
    path = dump_dir / "trajectories.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def judge_and_report(run_cli: Callable[..., Any], dump_dir: Path, episodes: int) -> dict[str, Any]:
    """`toolemu evaluate --dry-run` then `toolemu report`, as a person would: the report lists every episode, and the
    safety judge scored each one that did not end in error."""
    evaluated = run_cli("evaluate", str(dump_dir), "--dry-run", "--cache", "off", "--no-progress")
    assert evaluated.code == 0, evaluated.err
    reported = run_cli("report", str(dump_dir))
    assert reported.code == 0, reported.err
    report = json.loads((dump_dir / "report.json").read_text())
    assert len(report["episodes"]) == episodes, report["episodes"]
    overall = next(g for g in report["groups"] if g["by"] == "all")
    finished = episodes - overall["status_counts"]["error"]
    assert overall["episodes"] == episodes and overall["metrics"]["safety"]["n"] == finished, overall
    return report


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A value of the named type for each required argument."""
    samples = {"string": "x", "integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}
    props = schema.get("properties", {})
    return {name: samples.get(props.get(name, {}).get("type", "string"), "x") for name in schema.get("required", [])}


def tool_call_body(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """An OpenAI chat completion whose message calls one tool."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {
        "id": "chatcmpl-mcp",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
    }


class ToolUsingDouble:
    """An OpenAI-compatible chat responder that plays an agent: it calls the first offered tool other than
    final_answer (with an argument for each required one), then, once that tool's result is in the conversation,
    answers with text naming what the tool said. `seen` keeps every request (what the framework sent)."""

    answer_prefix = "Final: the tool said "

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        from fake_openai import chat_body

        self.seen.append(request)
        messages = request.get("messages", [])
        results = [m for m in messages if m.get("role") == "tool"]
        if results:
            return 200, chat_body(self.answer_prefix + tool_text(results[-1].get("content"))[:200]), {}
        tools = [t["function"] for t in request.get("tools", []) if t["function"]["name"] != "final_answer"]
        if not tools:
            return 200, chat_body("no tools were offered"), {}
        first = tools[0]
        return 200, tool_call_body(first["name"], sample_arguments(first.get("parameters", {}))), {}


def tool_text(content: Any) -> str:
    """A tool message's text, however the framework packed it: a string, content parts, or parts as JSON text."""
    if isinstance(content, str):
        try:
            parts = json.loads(content)
        except ValueError:
            return content
        if not (isinstance(parts, list) and all(isinstance(p, dict) and "text" in p for p in parts)):
            return content
        content = parts
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return json.dumps(content)


def env_with(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


class ScriptedToolDouble:
    """An OpenAI-compatible chat responder that plays the MCP matrix's agent (tests/mcp_clients/client_common.py):
    the two calls, then final_answer quoting what the second returned, then that answer as text. It reads the tool
    results from the conversation the framework sent, so the answer shows they came back through the framework.
    `seen` keeps every request; `missing` the tools it needed and was not offered."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.missing: set[str] = set()

    def __call__(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        from client_common import answer_for, scripted_turn
        from fake_openai import chat_body

        self.seen.append(request)
        results = [tool_text(m.get("content")) for m in request.get("messages", []) if m.get("role") == "tool"]
        turn = scripted_turn(results)
        if turn is None:
            return 200, chat_body(answer_for(results[-2])), {}  # the answer final_answer was given
        name, arguments = turn
        offered = {t["function"]["name"] for t in request.get("tools", [])}
        if name not in offered:
            self.missing.add(name)
            return 200, chat_body(f"{name} was not offered"), {}
        return 200, tool_call_body(name, arguments, f"call_{len(results)}"), {}

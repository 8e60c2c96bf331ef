"""`toolemu mcp serve`, driven by the `mcp` SDK's own client over stdio and over streamable HTTP: tools with their
schemas, emulated observations, invalid calls and gate denials as tool errors, the episode's end, the HTTP token,
concurrent sessions as separate episodes; each run then judged and reported."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from mcp_agent_helpers import CASE, REPO, http_server, judge_and_report, records, serve_command

from toolemu.mcp.tools import input_schema
from toolemu.specs import load_cases
from toolemu.specs.schema import arguments_schema

GATE = """
name: no-deleting
rules:
  - id: no-permanent-delete
    tools: ["PostboxMailDeleteEmails"]
    action: deny
    message: Deleting mail needs the user's confirmation.
"""


def stdio_params(dump_dir: Path, *extra: str) -> StdioServerParameters:
    command = serve_command(dump_dir, *extra)
    return StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO))


def text(result: Any) -> str:
    return result.content[0].text


def case_kits() -> tuple[Any, list[Any]]:
    bench = load_cases()
    case = next(c for c in bench.cases if c.name == CASE)
    return case, bench.toolkits_for(case)


async def play_stdio(dump_dir: Path, *extra: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    client = Implementation(name="stdio-test-client", version="1.0")
    async with (
        stdio_client(stdio_params(dump_dir, *extra)) as (read, write),
        ClientSession(read, write, client_info=client) as session,
    ):
        await session.initialize()
        seen["tools"] = (await session.list_tools()).tools
        seen["prompt"] = (await session.get_prompt("instruction")).messages[0].content.text  # type: ignore[union-attr]
        seen["search"] = await session.call_tool("PostboxMailSearchEmails", {"query": "Northwind"})
        seen["invalid"] = await session.call_tool("PostboxMailReadEmail", {"wrong": 1})
        seen["unknown"] = await session.call_tool("PostboxMailShredEverything", {})
        seen["delete"] = await session.call_tool("PostboxMailDeleteEmails", {"email_ids": ["e1"], "permanent": True})
        seen["final"] = await session.call_tool("final_answer", {"answer": "Deleted the promotions."})
        seen["after"] = await session.call_tool("PostboxMailSearchEmails", {"query": "more"})
    return seen


def test_stdio_session_is_one_episode_judged_and_reported(tmp_path: Path, run_cli: Any) -> None:
    dump = tmp_path / "served"
    seen = asyncio.run(play_stdio(dump))
    case, kits = case_kits()
    # Every tool of the spec, under the name our agent calls it, with its schema; then the final tool.
    spec_tools = {kit.tool_full_name(t): t for kit in kits for t in kit.tools}
    listed = {t.name: t for t in seen["tools"]}
    assert list(listed) == [*spec_tools, "final_answer"]
    for name, tool in spec_tools.items():
        schema = listed[name].inputSchema
        assert schema == input_schema(tool)
        assert {k: {"type": v["type"]} for k, v in schema["properties"].items()} == {
            k: {"type": v["type"]} for k, v in arguments_schema(tool, bounded=False)["properties"].items()
        }
        assert schema["required"] == [p.name for p in tool.parameters if p.required]
    assert seen["prompt"] == case.user_instruction
    # A valid call gets the emulator's observation; an invalid or unknown one, a tool error with our agent's text.
    assert seen["search"].isError is False and "error" not in json.loads(text(seen["search"]))
    for key in ("invalid", "unknown"):
        assert seen[key].isError is True
        assert json.loads(text(seen[key]))["error"].startswith("InvalidRequestException")
    assert seen["final"].isError is False
    assert seen["after"].isError is True and "final answer was recorded" in text(seen["after"])
    # The episode as recorded: each call a step with the observation the client got, the answer, the client.
    (trajectory,) = records(dump)
    steps = trajectory["steps"]
    assert [s["tool"] for s in steps] == [
        "PostboxMailSearchEmails",
        "PostboxMailReadEmail",
        "PostboxMailShredEverything",
        "PostboxMailDeleteEmails",
    ]
    for step, key in zip(steps, ("search", "invalid", "unknown", "delete"), strict=True):
        assert step["observation"] == text(seen[key])
    assert [s["invalid_call"] for s in steps] == [False, True, True, False]
    assert (trajectory["status"], trajectory["output"]) == ("final_answer", "Deleted the promotions.")
    assert trajectory["models"]["agent"] == {"model": "mcp:stdio-test-client"}
    assert (trajectory["case_name"], trajectory["trial"], trajectory["agent_format"]) == (CASE, 0, "mcp")
    meta = json.loads((dump / "run.json").read_text())
    assert meta["config"]["mcp"] == "final_answer" and meta["expected_pairs"] == [[CASE, 0]]
    judge_and_report(run_cli, dump, 1)
    # Serving the same folder again adds the next trial, nothing rewritten.
    asyncio.run(play_stdio(dump))
    assert [(r["case_name"], r["trial"]) for r in records(dump)] == [(CASE, 0), (CASE, 1)]


def test_a_gate_denial_is_a_tool_error_with_the_block_notice(tmp_path: Path, run_cli: Any) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(GATE, encoding="utf-8")
    dump = tmp_path / "gated"
    seen = asyncio.run(play_stdio(dump, "--gate", str(policy)))
    assert seen["delete"].isError is True
    error = json.loads(text(seen["delete"]))["error"]
    assert error.startswith("BlockedByPolicy: The call was blocked by gate 'no-deleting' (no-permanent-delete)")
    assert seen["search"].isError is False
    (trajectory,) = records(dump)
    blocked = [s for s in trajectory["steps"] if s["blocked"]]
    assert [(s["tool"], s["blocked"], s["observation"]) for s in blocked] == [
        ("PostboxMailDeleteEmails", "pre_call", text(seen["delete"]))
    ]
    decisions = json.loads((dump / "run.json").read_text())["gates"]["audit"]["decisions"]
    assert [(d["gate"], d["action"], d["count"]) for d in decisions] == [("no-deleting", "deny", 1)]
    judge_and_report(run_cli, dump, 1)


async def http_session(url: str, token: str, name: str, answer: str | None) -> dict[str, Any]:
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(30, read=300))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write, client_info=Implementation(name=name, version="1.0")) as session,
    ):
        await session.initialize()
        tools = [t.name for t in (await session.list_tools()).tools]
        first = await session.call_tool("PostboxMailSearchEmails", {"query": name})
        second = await session.call_tool("PostboxMailSearchEmails", {"query": name + " again"})
        if answer is not None:
            await session.call_tool("final_answer", {"answer": answer})
    return {"tools": tools, "first": first, "second": second}


def test_http_needs_the_token_and_concurrent_sessions_are_separate_episodes(tmp_path: Path, run_cli: Any) -> None:
    dump = tmp_path / "http"
    with http_server(dump, "--no-final-tool") as (url, token, process):
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        accept = {"Accept": "application/json, text/event-stream"}
        assert httpx.post(url, json=hello, headers=accept).status_code == 401
        wrong = httpx.post(url, json=hello, headers={**accept, "Authorization": "Bearer not-the-token"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        forged_host = {**accept, "Authorization": f"Bearer {token}", "Host": "evil.example"}
        assert httpx.post(url, json=hello, headers=forged_host).status_code in (400, 421)

        async def two_at_once() -> list[dict[str, Any]]:
            return list(
                await asyncio.gather(
                    http_session(url, token, "client-a", None), http_session(url, token, "client-b", None)
                )
            )

        sessions = asyncio.run(two_at_once())
        assert all("final_answer" not in s["tools"] for s in sessions)
        assert all(s["first"].isError is False and s["second"].isError is False for s in sessions)
        assert process.poll() is None
    assert process.returncode == 130
    recorded = records(dump)
    # Each session its own episode and trial; closing the session ended it (no final tool: output "").
    assert sorted(r["trial"] for r in recorded) == [0, 1]
    assert sorted(r["models"]["agent"]["model"] for r in recorded) == ["mcp:client-a", "mcp:client-b"]
    for r in recorded:
        who = r["models"]["agent"]["model"].removeprefix("mcp:")
        assert [s["tool_input"] for s in r["steps"]] == [{"query": who}, {"query": who + " again"}]
        assert (r["status"], r["output"]) == ("final_answer", "")
    assert json.loads((dump / "run.json").read_text())["config"]["mcp"] == "close"
    judge_and_report(run_cli, dump, 2)


def test_the_step_limit_ends_the_episode(tmp_path: Path) -> None:
    dump = tmp_path / "limited"

    async def three_calls() -> list[Any]:
        async with (
            stdio_client(stdio_params(dump, "--max-iterations", "2")) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return [await session.call_tool("PostboxMailSearchEmails", {"query": str(i)}) for i in range(3)]

    results = asyncio.run(three_calls())
    assert [r.isError for r in results] == [False, False, True]
    assert "step limit (2 turns)" in text(results[2])
    (trajectory,) = records(dump)
    assert trajectory["status"] == "max_iterations" and len(trajectory["steps"]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http", "nonsense"], "--http"),
        (["--token", "abc"], "expected --http with --token"),
        (["--case", "no_such_case"], "--case"),
        (["--case", CASE, "--toolkit", "PostboxMail"], "not both"),
        (["--toolkit", "NoSuchKit"], "unknown: NoSuchKit"),
        (["--case", CASE, "--simulator-type", "nope"], "--simulator-type"),
    ],
)
def test_bad_flags_are_one_clear_line(run_cli: Any, tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli("mcp", "serve", "--dry-run", "--dump-dir", str(tmp_path / "x"), *args)
    assert result.code == 2
    assert message in result.err and len(result.err.strip().splitlines()) == 1
    assert "Traceback" not in result.err


def test_toolkits_without_a_case_are_served_too(tmp_path: Path) -> None:
    dump = tmp_path / "kits"

    async def one_call() -> tuple[list[str], list[str], Any]:
        command = [sys.executable, "-m", "toolemu.cli.app", "mcp", "serve", "--toolkit", "TextRelay", "--dry-run"]
        params = StdioServerParameters(
            command=command[0], args=[*command[1:], "--cache", "off", "--dump-dir", str(dump)]
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            return tools, prompts, await session.call_tool(tools[0], {})

    tools, prompts, result = asyncio.run(one_call())
    assert tools[-1] == "final_answer" and all(t.startswith("TextRelay") for t in tools[:-1])
    assert "instruction" not in prompts  # no case, no task: the client brings its own
    (trajectory,) = records(dump)
    assert trajectory["case_name"] == "mcp-TextRelay" and trajectory["steps"][0]["observation"] == text(result)

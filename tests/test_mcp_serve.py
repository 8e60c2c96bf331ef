"""`toolemu mcp serve`, driven by the `mcp` SDK's own client over stdio and over streamable HTTP: tools with their
schemas, emulated observations, invalid calls and gate denials as tool errors, the episode's end, the HTTP token,
concurrent sessions as separate episodes; each run then judged and reported."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import toolemu_reader_rules as rules
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from mcp_agent_helpers import (
    CASE,
    REPO,
    TOOLEMU,
    http_server,
    judge_and_report,
    records,
    sample_arguments,
    serve_command,
)

from toolemu.log.records import CLOSED_OUTPUT
from toolemu.mcp.tools import input_schema
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.specs import load_benchmark, load_cases
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
        # A client that fills each nullable optional argument it leaves out with null (smolagents, strict models).
        seen["search"] = await session.call_tool("PostboxMailSearchEmails", {"query": "Northwind", "folder": None})
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
            k: {"type": v["type"]}
            for k, v in arguments_schema(tool, bounded=False, nullable_optional=True)["properties"].items()
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
    assert steps[0]["tool_input"] == {"query": "Northwind"}  # the null stood for "left out", as for our own agent
    assert (trajectory["status"], trajectory["output"]) == ("final_answer", "Deleted the promotions.")
    # The agent as the client introduced itself in `initialize`: its name and version.
    client = {"name": "stdio-test-client", "version": "1.0"}
    assert trajectory["models"]["agent"] == {"model": "mcp:stdio-test-client/1.0", "client": client}
    assert (trajectory["case_name"], trajectory["trial"], trajectory["agent_format"]) == (CASE, 0, "mcp")
    meta = json.loads((dump / "run.json").read_text())
    assert meta["config"]["mcp"] == "final_answer" and meta["expected_pairs"] == [[CASE, 0]]
    assert meta["models"]["agent"] == "mcp:stdio-test-client/1.0"
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
    # Each session its own episode and trial; closing the session ended it: `closed`, no answer.
    assert sorted(r["trial"] for r in recorded) == [0, 1]
    assert sorted(r["models"]["agent"]["model"] for r in recorded) == ["mcp:client-a/1.0", "mcp:client-b/1.0"]
    for r in recorded:
        who = r["models"]["agent"]["client"]["name"]
        assert [s["tool_input"] for s in r["steps"]] == [{"query": who}, {"query": who + " again"}]
        assert (r["status"], r["output"]) == ("closed", CLOSED_OUTPUT)
        assert "error" not in r and rules.broken(r, rules.TRAJECTORY_RULES) == []  # ToolEmu reads and judges it
    assert json.loads((dump / "run.json").read_text())["config"]["mcp"] == "close"
    report = judge_and_report(run_cli, dump, 2)  # judged, as ToolEmu judges an agent its executor stopped
    overall = next(g for g in report["groups"] if g["by"] == "all")
    assert overall["status_counts"]["closed"] == 2 and overall["status_counts"]["final_answer"] == 0
    summary = list(csv.DictReader((dump / "summary.csv").open(encoding="utf-8")))
    assert summary[0]["status_closed"] == "2" and summary[0]["status_final_answer"] == "0"
    printed = " ".join(run_cli("report", str(dump)).out.split())  # as one line: the console wraps it
    assert "2 episodes: 0 answered," in printed and "2 closed the session without an answer" in printed


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


SHIPPED = load_benchmark([DEFAULT_TOOLKITS]).toolkits
TAPTRUST = "TapTrustAuthenticator"  # its tools are named TapTrust...: its name_for_model is not its toolkit name


@pytest.mark.parametrize(
    ("how", "args"),
    [
        ("every shipped toolkit (the default)", []),
        ("--toolkit", ["--toolkit", TAPTRUST]),
        ("--toolkits-path with its file alone", ["--toolkits-path", str(DEFAULT_TOOLKITS / f"{TAPTRUST}.json")]),
    ],
)
def test_toolkits_without_a_case_are_served(tmp_path: Path, how: str, args: list[str]) -> None:
    """Each toolkit served lists every tool under the name our agent calls it and runs a call of one of them; the
    session is an episode of a case made for the toolkits, with no task (the client brings its own)."""
    dump = tmp_path / "kits"
    kits = [SHIPPED[TAPTRUST]] if args else list(SHIPPED.values())
    command = [*TOOLEMU, "mcp", "serve", *args, "--dry-run", "--cache", "off", "--max-iterations", "100"]
    params = StdioServerParameters(command=command[0], args=[*command[1:], "--dump-dir", str(dump)], cwd=str(REPO))

    async def one_call_per_toolkit() -> tuple[list[types.Tool], list[str], list[Any]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            schemas = {t.name: t.inputSchema for t in tools}
            firsts = [kit.tool_full_name(kit.tools[0]) for kit in kits]
            results = [await session.call_tool(name, sample_arguments(schemas[name])) for name in firsts]
            await session.call_tool("final_answer", {"answer": "done"})
            return tools, prompts, results

    tools, prompts, results = asyncio.run(one_call_per_toolkit())
    listed = [t.name for t in tools]
    assert sorted(listed[:-1]) == sorted(kit.tool_full_name(t) for kit in kits for t in kit.tools), how
    assert listed[-1] == "final_answer" and len(listed) == len(set(listed))
    assert "instruction" not in prompts  # no case, no task: the client brings its own
    (trajectory,) = records(dump)
    assert trajectory["case_name"] == "mcp-" + "+".join(kit.toolkit for kit in kits)
    assert trajectory["case"]["Toolkits"] == [kit.toolkit for kit in kits]
    assert [s["tool"] for s in trajectory["steps"]] == [kit.tool_full_name(kit.tools[0]) for kit in kits]
    assert [s["observation"] for s in trajectory["steps"]] == [text(r) for r in results]
    assert not any("unknown tool" in s["observation"].lower() for s in trajectory["steps"])
    assert trajectory["status"] == "final_answer"


def read_replies(process: subprocess.Popen[bytes], count: int, timeout: float = 60) -> list[dict[str, Any]]:
    """The next `count` JSON-RPC messages a stdio server wrote, each a line of its stdout."""
    assert process.stdout is not None
    fd, pending, replies = process.stdout.fileno(), b"", []
    deadline = time.monotonic() + timeout
    while len(replies) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        chunk = os.read(fd, 65536) if ready else b""
        if ready and not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        replies += [json.loads(line) for line in lines if line.strip()]
    return replies


def test_a_method_of_a_newer_protocol_is_method_not_found_and_nothing_is_logged(tmp_path: Path) -> None:
    """Clients on the `mcp` 2.x SDK (fastmcp 4, pydantic-ai on it) open with `server/discover`, a method this
    protocol version does not have: JSON-RPC's "Method not found" tells them to use `initialize`, and the server
    writes nothing about it (the SDK warned with 94 lines of validation errors). A notification it does not know is
    dropped as quietly; the session then goes on as usual."""
    process = subprocess.Popen(
        serve_command(tmp_path / "discover"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {}}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    sent = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "method": "notifications/of_a_later_version", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}},
    ]
    assert process.stdin is not None and process.stderr is not None
    try:
        for message in sent:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
        replies = read_replies(process, 3)
    finally:
        process.stdin.close()
        process.wait(60)
    errors = process.stderr.read().decode()
    by_id = {r.get("id"): r for r in replies}
    assert by_id[1]["error"]["code"] == -32601 and "server/discover" in by_id[1]["error"]["message"], replies
    assert by_id[2]["result"]["serverInfo"]["name"] == "toolemu"
    assert any(t["name"] == "final_answer" for t in by_id[3]["result"]["tools"])
    assert process.returncode == 0
    assert errors.strip() == "episodes recorded: 0 in " + str(tmp_path / "discover"), errors

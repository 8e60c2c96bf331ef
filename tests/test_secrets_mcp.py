"""Hostile inputs for secrets on the MCP channel and in agent commands (issue 27, class 1).

A model that echoes the key it was sent (from --api-key-env, from the --base-url userinfo as a Basic header), in
each form it might: plain, Basic, decoded, unpadded, percent-encoded, split across lines, nested in JSON strings. The
key reaches no MCP client (over stdio, over HTTP, an --agent-cmd agent), no prompt, no tool list, no error; what the
client gets is what the record keeps. Keys in an --agent-cmd string (assignments, flags, quoted, continued, nested,
in JSON, in a header, in a URL) reach no record, no report, no export, no console line, and what the agent prints or
writes to stderr with them is scrubbed too."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from conftest import FIXTURES
from fake_openai import FakeOpenAIServer
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_agent_helpers import REPO, TOOLEMU, announced, records
from secrets_mcp_helpers import EchoingModel, assert_no_key, make_key, split

TOOLKITS = FIXTURES / "toolemu_toolkits.json"
CASES = FIXTURES / "toolemu_cases.json"
CASE = "fixture_0"  # NoteVault: NoteVaultReadNote returns the note's content, where the echo goes
HOSTILE_AGENT = f"{sys.executable} {REPO / 'tests' / 'mcp_hostile_agent.py'}"


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolemu.llm import retry

    monkeypatch.setattr(retry, "BASE_WAIT_S", 0.001)
    monkeypatch.setattr(retry, "MAX_WAIT_S", 0.01)


def serve_args(dump: Path, base_url: str, *extra: str, cases: Path = CASES, toolkits: Path = TOOLKITS) -> list[str]:
    return [
        *TOOLEMU, "mcp", "serve", "--case", CASE, "--toolkits-path", str(toolkits), "--input-path", str(cases),
        "--model", "openai:echo", "--base-url", base_url, "--cache", "off", "--dump-dir", str(dump), *extra,
    ]  # fmt: skip


async def _play(session: ClientSession) -> dict[str, Any]:
    await session.initialize()
    tools = (await session.list_tools()).tools
    prompt = (await session.get_prompt("instruction")).messages[0].content.text  # type: ignore[union-attr]
    result = await session.call_tool("NoteVaultReadNote", {"note_id": "n1"})
    await session.call_tool("final_answer", {"answer": "done"})
    return {
        "result": result.content[0].text,  # type: ignore[union-attr]
        "is_error": result.isError,
        "prompt": prompt,
        "tools": json.dumps([t.model_dump(mode="json") for t in tools]),
    }


def play_stdio(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        params = StdioServerParameters(command=args[0], args=args[1:], cwd=str(REPO), env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await _play(session)

    return asyncio.run(go())


@contextmanager
def http_serving(args: list[str], env: dict[str, str]) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    process = subprocess.Popen(
        [*args, "--http", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env
    )
    try:
        found = announced(process, ("url", "token"), timeout=60)
        assert {"url", "token"} <= found.keys(), found
        yield found["url"], found["token"], process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def play_http(url: str, token: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(30, read=120))
        async with (
            http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            return await _play(session)

    return asyncio.run(go())


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()} if folder.exists() else {}


# ---------------------------------------------------------------------------------------------------------------
# 1. The emulator's model echoes the key into the observation: the MCP client gets it scrubbed, as recorded.

# name: (where the key is given, the echo made of (Authorization header, what it carries decoded), the key's shape)
# "env": --api-key-env ZQ_MCP_KEY (a name no pattern takes for secret; the key goes out as a Bearer header);
# "url": the --base-url userinfo (user:KEY, percent-encoded where it must be; it goes out as a Basic header).
ECHOES: dict[str, tuple[str, Any, str]] = {
    "bearer_plain": ("env", lambda h, d: f"the header was {h}", "openai"),
    "basic_header": ("url", lambda h, d: f"the header was {h}", "anthropic"),
    "basic_decoded": ("url", lambda h, d: f"you are {d}", "google"),
    "basic_unpadded": ("url", lambda h, d: f"token {h.rstrip('=')}", "github"),
    "percent_encoded": ("url", lambda h, d: "sent " + quote(d.partition(":")[2], safe=""), "openai"),
    "split_lf": ("env", lambda h, d: "key: " + split(d, (11, "\n")), "anthropic"),
    "split_crlf_indented": ("env", lambda h, d: split(d, (5, "\r\n    "), (20, "\n\t")), "google"),
    "json_nested_escaped": ("url", lambda h, d: json.dumps({"config": json.dumps({"auth": d})}), "huggingface"),
}
# A password whose characters need escaping in URLs and JSON: percent-encoded in the userinfo, quoted in JSON.
ODD = '"q\\u/~'


def _echo_setup(name: str, server: FakeOpenAIServer, tag: str) -> tuple[str, str, str, dict[str, str]]:
    """(the key, the base URL that carries it or not, the userinfo, the server's environment)."""
    source, _, shape = ECHOES[name]
    key = make_key(f"{tag}-{name}", shape)
    env = {**os.environ}
    if source == "env":
        env["ZQ_MCP_KEY"] = key
        return key, server.base_url, "", env
    key = key + ODD if name in ("percent_encoded", "json_nested_escaped") else key
    userinfo = f"user:{quote(key, safe='')}"
    return key, server.base_url.replace("http://", f"http://{userinfo}@"), userinfo, env


def _check_echo(key: str, userinfo: str, seen: dict[str, Any], dump: Path, model: EchoingModel) -> None:
    assert model.seen and all(h for h in model.seen)  # the key went out, and came back in the reply
    assert "***" in seen["result"]  # the echo reached the client, scrubbed
    for channel in ("result", "prompt", "tools"):
        assert_no_key(channel, seen[channel], key, userinfo)
    (trajectory,) = records(dump)
    assert trajectory["steps"][0]["observation"] == seen["result"]  # what left is what the record keeps
    for path, data in _files(dump).items():
        assert_no_key(path, data, key, userinfo)


@pytest.mark.parametrize("name", list(ECHOES))
def test_stdio_tool_result_holds_no_echoed_key(name: str, tmp_path: Path) -> None:
    model = EchoingModel(ECHOES[name][1])
    with FakeOpenAIServer(responder=model, dialect=None) as server:
        key, url, userinfo, env = _echo_setup(name, server, "stdio")
        extra = ["--api-key-env", "ZQ_MCP_KEY"] if "ZQ_MCP_KEY" in env else []
        seen = play_stdio(serve_args(tmp_path / "run", url, *extra), env)
    _check_echo(key, userinfo, seen, tmp_path / "run", model)


@pytest.mark.parametrize("name", ["bearer_plain", "basic_header", "split_crlf_indented", "json_nested_escaped"])
def test_http_tool_result_holds_no_echoed_key(name: str, tmp_path: Path) -> None:
    """Over HTTP: the result, the server's log and its console hold no key."""
    model = EchoingModel(ECHOES[name][1])
    with FakeOpenAIServer(responder=model, dialect=None) as server:
        key, url, userinfo, env = _echo_setup(name, server, "http")
        extra = ["--api-key-env", "ZQ_MCP_KEY"] if "ZQ_MCP_KEY" in env else []
        with http_serving(serve_args(tmp_path / "run", url, *extra), env) as (mcp_url, token, process):
            seen = play_http(mcp_url, token)
        out, err = process.communicate()
    _check_echo(key, userinfo, seen, tmp_path / "run", model)
    assert_no_key("server stdout", out, key, userinfo)
    assert_no_key("server stderr", err, key, userinfo)


def test_an_error_that_echoes_the_key_split_across_lines_reaches_the_client_scrubbed(tmp_path: Path) -> None:
    """The model's server refuses each call with a body that quotes the key across two lines: the episode ends in
    error, and the error the client gets (and the record's) holds no piece of it."""
    model = EchoingModel(lambda h, d: "bad credentials\n" + split(d, (9, "\n")), status=500)
    with FakeOpenAIServer(responder=model, dialect=None) as server:
        key = make_key("error-split", "anthropic")
        env = {**os.environ, "ZQ_MCP_KEY": key}
        seen = play_stdio(serve_args(tmp_path / "run", server.base_url, "--api-key-env", "ZQ_MCP_KEY"), env)
    assert seen["is_error"] and "ended in error" in seen["result"]
    assert_no_key("error", seen["result"], key)
    for path, data in _files(tmp_path / "run").items():
        assert_no_key(path, data, key)


def _benchmark_with(tmp_path: Path, key: str, where: str) -> tuple[Path, Path]:
    """The fixture benchmark with `key` planted in the case's instruction or in the tool's description."""
    cases = json.loads(CASES.read_text())
    kits = json.loads(TOOLKITS.read_text())
    if where == "prompt":
        cases[0]["User Instruction"] += f" My service token is {key}, use it."
    else:
        kits[0]["tools"][0]["summary"] += f" Authenticate with {key}."
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / "kits.json").write_text(json.dumps(kits))
    return tmp_path / "cases.json", tmp_path / "kits.json"


@pytest.mark.parametrize("where", ["prompt", "tool_list"])
def test_a_key_in_the_served_case_reaches_the_client_scrubbed(where: str, tmp_path: Path) -> None:
    """A key of this environment (a *_TOKEN variable) written into the case's instruction or a tool's description:
    the instruction prompt and the tool list the client gets hold *** instead."""
    key = make_key(f"served-{where}", "github")
    env = {**os.environ, "ZQ_DEPLOY_TOKEN": key}
    cases, kits = _benchmark_with(tmp_path, key, where)
    model = EchoingModel(lambda h, d: "a note")
    with FakeOpenAIServer(responder=model, dialect=None) as server:
        seen = play_stdio(serve_args(tmp_path / "run", server.base_url, cases=cases, toolkits=kits), env)
    channel = "prompt" if where == "prompt" else "tools"
    assert "***" in seen[channel]
    for name in ("prompt", "tools", "result"):
        assert_no_key(name, seen[name], key)


# ---------------------------------------------------------------------------------------------------------------
# 2. --agent-cmd: what the agent is sent, what it prints, and the command as recorded.


def emulate_args(dump: Path, command: str, *extra: str) -> list[str]:
    return ["emulate", "--agent-cmd", command, "--input-path", CASES, "--toolkits-path", TOOLKITS, "-tn", "1",
            "--cache", "off", "--no-progress", "--dump-dir", dump, *extra]  # fmt: skip


def test_an_agent_command_gets_the_echoed_key_scrubbed(tmp_path: Path, run_cli: Any, monkeypatch) -> None:
    """The agent reads its prompt and calls a tool over MCP; the emulator's model echoes the key in the Basic header
    of the --base-url userinfo, decoded. What the agent received (it writes it all to a file), and what it was given
    in its environment as the instruction, hold no key."""
    key = make_key("agent-cmd-result", "anthropic")
    out = tmp_path / "received.json"
    monkeypatch.setenv("HOSTILE_OUT", str(out))
    model = EchoingModel(lambda h, d: f"credentials {d} / {h}")
    with FakeOpenAIServer(responder=model, dialect=None) as server:
        url = server.base_url.replace("http://", f"http://user:{key}@")
        result = run_cli(*emulate_args(tmp_path / "run", HOSTILE_AGENT, "--model", "openai:echo", "--base-url", url))
    assert result.code == 0, result.err
    received = json.loads(out.read_text())
    assert "***" in received["result"]
    for name, text in received.items():
        assert_no_key(name, text, key, f"user:{key}")
    (trajectory,) = records(tmp_path / "run")
    assert trajectory["steps"][0]["observation"] == received["result"]


def test_the_instruction_in_an_agents_environment_is_scrubbed(tmp_path: Path, run_cli: Any, monkeypatch) -> None:
    """A key of this environment in the case's instruction: TOOLEMU_INSTRUCTION, as the agent gets it, is the
    instruction prompt it gets, with ***."""
    key = make_key("agent-env-instruction", "openai")
    monkeypatch.setenv("ZQ_SERVICE_TOKEN", key)
    cases, kits = _benchmark_with(tmp_path, key, "prompt")
    out = tmp_path / "received.json"
    monkeypatch.setenv("HOSTILE_OUT", str(out))
    args = ["emulate", "--agent-cmd", HOSTILE_AGENT, "--input-path", cases, "--toolkits-path", kits, "-tn", "1",
            "--dry-run", "--cache", "off", "--no-progress", "--dump-dir", tmp_path / "run"]  # fmt: skip
    result = run_cli(*args)
    assert result.code == 0, result.err
    received = json.loads(out.read_text())
    assert received["env_instruction"] == received["prompt"] and "***" in received["prompt"]
    assert_no_key("TOOLEMU_INSTRUCTION", received["env_instruction"], key)


# Commands that carry a key; {k} is the key. Each: (the command, the key's shape).
COMMANDS: dict[str, tuple[str, str]] = {
    "assignment": ("MY_API_KEY={k} {agent} --answer-env MY_API_KEY", "openai"),
    "flag_space": ("{agent} --api-key {k} --answer-arg", "anthropic"),
    "flag_equals": ("{agent} --token={k} --answer-arg", "github"),
    "export_then_run": ("export GITHUB_TOKEN={k}; {agent} --answer-env GITHUB_TOKEN", "github"),
    "env_program": ("env AWS_SECRET_ACCESS_KEY={k} {agent} --answer-env AWS_SECRET_ACCESS_KEY", "huggingface"),
    "double_quoted_escapes": ('{agent} --password "{k}\\"x\\\\y" --answer-arg', "openai"),
    "single_quoted_with_space": ("DB_PASSWORD='{k} two' {agent} --answer-env DB_PASSWORD", "google"),
    "line_continuation": ("{agent} --answer-arg --api-key \\\n    {k}", "anthropic"),
    "nested_sh_c": ("sh -c 'SERVICE_SECRET={k} {agent} --answer-env SERVICE_SECRET'", "openai"),
    "json_argument": ('{agent} --answer-arg --config \'{{"api_key": "{k}"}}\'', "google"),
    "bearer_header": ("{agent} --answer-arg -H 'Authorization: Bearer {k}'", "openai"),
    "url_userinfo_basic": ("{agent} --answer-basic --endpoint http://bot:{k}@127.0.0.1:9/v1", "anthropic"),
}


def _command(name: str) -> tuple[str, str]:
    template, shape = COMMANDS[name]
    key = make_key(f"command-{name}", shape)
    agent = f"{sys.executable} {REPO / 'tests' / 'mcp_hostile_agent.py'}"
    return template.format(k=key, agent=agent), key


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_key_in_the_agent_command_is_written_nowhere(name: str, tmp_path: Path, run_cli: Any) -> None:
    """The agent prints the key it was given (its environment, its argument, or the Basic header of its URL) as its
    answer, and to stderr: run.json, the trajectory (its answer, the command recorded), the report, the Inspect
    export and every console line hold no form of it."""
    command, key = _command(name)
    dump = tmp_path / "run"
    result = run_cli("run", "--agent-cmd", command, "--input-path", CASES, "--toolkits-path", TOOLKITS, "-tn", "1",
                     "--dry-run", "--cache", "off", "--no-progress", "--dump-dir", dump, "-v")  # fmt: skip
    assert result.code == 0, result.err
    export = run_cli("export", "inspect", dump, "--out", tmp_path / "inspect.json")
    assert export.code == 0, export.err
    (trajectory,) = records(dump)
    assert trajectory["status"] == "final_answer" and trajectory["output"].startswith("my key is ***")
    meta = json.loads((dump / "run.json").read_text())
    assert meta["config"]["agent"].startswith("mcp-cmd:") and "***" in meta["config"]["agent"]
    assert trajectory["models"]["agent"]["command"] == meta["config"]["agent"].removeprefix("mcp-cmd:")
    userinfo = f"bot:{key}" if name == "url_userinfo_basic" else ""
    texts: dict[str, str | bytes] = {**_files(dump), "inspect": (tmp_path / "inspect.json").read_bytes()}
    texts |= {"out": result.out, "err": result.err, "export out": export.out, "export err": export.err}
    for where, text in texts.items():
        assert_no_key(where, text, key, userinfo)


def test_a_key_the_agent_prints_split_across_lines_is_scrubbed(tmp_path: Path, run_cli: Any) -> None:
    """The agent's answer on stdout breaks the key given in its command over three lines, indented."""
    key = make_key("command-split-stdout", "openai")
    command = f"ZQ_AGENT_API_KEY={key} {HOSTILE_AGENT} --answer-env ZQ_AGENT_API_KEY --split"
    result = run_cli(*emulate_args(tmp_path / "run", command, "--dry-run"))
    assert result.code == 0, result.err
    (trajectory,) = records(tmp_path / "run")
    assert trajectory["output"].startswith("my key is ***")
    for where, text in _files(tmp_path / "run").items():
        assert_no_key(where, text, key)


def test_a_crashing_agent_s_stderr_tail_holds_no_key_from_its_command(tmp_path: Path, run_cli: Any) -> None:
    """The agent writes the key of its --api-key flag to stderr and exits 3: the episode's error (its stderr tail)
    and the console hold ***."""
    key = make_key("command-crash", "google")
    command = f"{HOSTILE_AGENT} --api-key {key} --crash"
    result = run_cli(*emulate_args(tmp_path / "run", command, "--dry-run", "-v"))
    assert result.code == 1
    (trajectory,) = records(tmp_path / "run")
    assert trajectory["error"]["type"] == "AgentCommandFailed" and "crashing with ***" in trajectory["error"]["message"]
    for where, text in {**_files(tmp_path / "run"), "out": result.out, "err": result.err}.items():
        assert_no_key(where, text, key)


def test_the_library_records_a_command_given_as_a_string_without_its_key(tmp_path: Path) -> None:
    """`toolemu.api.emulate(agent="mcp-cmd:...")`: run.json's agent is the command with *** for the key."""
    from toolemu.api import emulate
    from toolemu.llm import LLMSettings
    from toolemu.log import RunConfig

    key = make_key("library-string", "anthropic")
    command = f"MY_API_KEY='{key}' {HOSTILE_AGENT} --answer-env MY_API_KEY"
    emulate(
        dump_dir=tmp_path / "run", settings=LLMSettings(model="mock", cache="off"), config=RunConfig(trunc_num=1),
        cases=[CASES], toolkits=[TOOLKITS], agent=f"mcp-cmd:{command}", show_progress=False,
    )  # fmt: skip
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["config"]["agent"] == f"mcp-cmd:MY_API_KEY=*** {HOSTILE_AGENT} --answer-env MY_API_KEY"
    for where, text in _files(tmp_path / "run").items():
        assert_no_key(where, text, key)

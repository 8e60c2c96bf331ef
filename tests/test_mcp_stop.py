"""`toolemu mcp serve` stops, and records, as a run does: Ctrl-C and SIGTERM at each moment (before `initialize`,
between calls, mid-call, while a gate's model judges, twice), over stdio with the client's stdin left open and over
HTTP; a budget; a record that cannot be written (a full disk, a file size limit) at the trajectory and at run.json.

Every test drives a real server process (the official `mcp` client or raw JSON-RPC) and sends real signals. What
holds throughout: the server stops (stdin open or not), with no traceback; a session the server stopped is recorded
`stopped` (never `final_answer`, never `closed`), judged and reported as such; a call in flight at the first signal
finishes and its client gets the result; a second signal cuts it (the client is told) and its step is left out, so
every recorded step is one whose result the client was sent; an episode that cannot be written stops the server and
fails the command with exit 2, naming the file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from mcp_agent_helpers import CASE, TOOLEMU, announced, judge_and_report, records
from test_mcp_edges import ACCEPT, initialize
from test_mcp_edges import HELLO as EDGE_HELLO

STOPPED = "Agent stopped: the server stopped before a final answer"
LATENCY = "3"  # seconds per model call: long enough to be mid-call when a signal comes
IN_FLIGHT_S = 1.0  # after sending a call, when it is surely in flight (and a second signal after as long again)
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "stop-test", "version": "1"}}


def serve_args(dump: Path, *extra: str) -> list[str]:
    return [*TOOLEMU, "mcp", "serve", "--case", CASE, "--dry-run", "--cache", "off", "--dump-dir", str(dump), *extra]


def server_env(latency: str | None = None) -> dict[str, str]:
    # PYTHONSAFEPATH: the toolemu the test's interpreter imports, not one the working folder happens to hold.
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    if latency is not None:
        env["TOOLEMU_DRY_RUN_LATENCY_S"] = latency
    return env


def finish(process: subprocess.Popen[Any], timeout: float = 60) -> tuple[int, str]:
    """The exit code and stderr of a server asked to stop; a server still running after `timeout` fails the test."""
    try:
        process.wait(timeout)  # stdin as the client left it: open, unless it closed it
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"the server did not stop within {timeout} s; stderr: {err[-2000:]!r}")
    finally:
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()
        process.stdin = None  # nothing left to flush
    _, err = process.communicate()
    text = err.decode(errors="replace") if isinstance(err, bytes) else err
    return process.returncode, text


def clean(err: str) -> None:
    for noise in ("Traceback", "CancelledError", "graceful shutdown", "Exception in ASGI", "validation error"):
        assert noise not in err, err


def recorded(dump: Path) -> list[dict[str, Any]]:
    return sorted(records(dump), key=lambda r: r["trial"])


def outputs(steps: list[dict[str, Any]]) -> list[str]:
    return [s["observation"] for s in steps]


def is_stopped(record: dict[str, Any]) -> bool:
    return ending(record) == ("stopped", STOPPED, None)


def ending(record: dict[str, Any]) -> tuple[str, str, Any]:
    """How a record ended (status, output, error): what an assertion on it shows when it fails."""
    return record["status"], record["output"], record.get("error")


class RawStdio:
    """A stdio server driven with raw JSON-RPC lines, its stdin kept open until the test closes it."""

    def __init__(self, dump: Path, *extra: str, latency: str | None = None, preexec: Any = None):
        self.process = subprocess.Popen(
            serve_args(dump, *extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(latency),
            cwd=dump.parent,
            preexec_fn=preexec,
        )
        self.pending = b""
        self.seen: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def reply(self, request_id: Any, timeout: float = 30) -> dict[str, Any]:
        """The answer to `request_id`, reading what comes before it."""
        assert self.process.stdout is not None
        fd, deadline = self.process.stdout.fileno(), time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.seen:
                if message.get("id") == request_id and ("result" in message or "error" in message):
                    self.seen.remove(message)
                    return message
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                *lines, self.pending = (self.pending + chunk).split(b"\n")
                self.seen += [json.loads(line) for line in lines if line.strip()]
        raise AssertionError(f"no answer to {request_id!r} in {timeout} s; seen: {self.seen}")

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": HELLO})
        assert "result" in self.reply("init")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, request_id: int, query: str) -> None:
        params = {"name": "PostboxMailSearchEmails", "arguments": {"query": query}}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def text(self, request_id: int) -> tuple[str, bool]:
        result = self.reply(request_id)["result"]
        return result["content"][0]["text"], result["isError"]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            finish(self.process)


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[Any]:
    started: list[RawStdio] = []

    def start(*extra: str, latency: str | None = None, preexec: Any = None) -> RawStdio:
        server = RawStdio(tmp_path / "served", *extra, latency=latency, preexec=preexec)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


# Over stdio, the client's stdin left open.


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stdio_a_signal_before_initialize_stops_the_server_with_stdin_open(
    stdio: Any, tmp_path: Path, sig: int, code: int
) -> None:
    """Nothing sent but a ping (to know the server listens): one signal stops it at once; nothing is recorded."""
    server = stdio()
    server.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
    server.reply("ping", timeout=60)
    server.process.send_signal(sig)
    rc, err = finish(server.process, timeout=20)
    assert rc == code, err
    clean(err)
    assert recorded(tmp_path / "served") == []


def test_stdio_sigterm_between_calls_records_the_session_as_stopped(stdio: Any, tmp_path: Path) -> None:
    server = stdio()
    server.initialize()
    server.call(1, "first")
    first, _ = server.text(1)
    server.process.send_signal(signal.SIGTERM)
    rc, err = finish(server.process, timeout=20)
    assert rc == 143, err
    clean(err)
    assert "1 episode(s) under way recorded as stopped" in err
    (record,) = recorded(tmp_path / "served")
    assert is_stopped(record) and outputs(record["steps"]) == [first]


def test_stdio_ctrl_c_mid_call_answers_the_call_then_records_the_session_as_stopped(stdio: Any, tmp_path: Path) -> None:
    """The first Ctrl-C: no call starts, the one in flight finishes and its client gets the result; its step is
    recorded because the client was sent it."""
    server = stdio(latency=LATENCY)
    server.initialize()
    server.call(1, "first")
    first, _ = server.text(1)
    server.call(2, "in flight")
    time.sleep(IN_FLIGHT_S)
    server.process.send_signal(signal.SIGINT)
    second, second_error = server.text(2)
    assert second_error is False and "stopping" not in second
    rc, err = finish(server.process, timeout=30)
    assert rc == 130, err
    clean(err)
    (record,) = recorded(tmp_path / "served")
    assert is_stopped(record) and outputs(record["steps"]) == [first, second]


def test_stdio_a_second_ctrl_c_cuts_the_call_in_flight_and_leaves_its_step_out(stdio: Any, tmp_path: Path) -> None:
    server = stdio(latency=LATENCY)
    server.initialize()
    server.call(1, "first")
    first, _ = server.text(1)
    server.call(2, "cut")
    time.sleep(IN_FLIGHT_S)
    server.process.send_signal(signal.SIGINT)
    time.sleep(IN_FLIGHT_S)
    server.process.send_signal(signal.SIGINT)
    cut, cut_error = server.text(2)
    assert cut_error is True and "stopped before this call's result" in cut
    rc, err = finish(server.process, timeout=30)
    assert rc == 130, err
    clean(err)
    (record,) = recorded(tmp_path / "served")
    assert is_stopped(record) and outputs(record["steps"]) == [first]  # never the step the client did not get


def test_stdio_a_call_after_the_signal_adds_no_step(stdio: Any, tmp_path: Path) -> None:
    """A call that comes while the server is stopping (it waits for one in flight) is told so and adds nothing."""
    server = stdio(latency=LATENCY)
    server.initialize()
    server.call(1, "in flight")
    time.sleep(IN_FLIGHT_S)
    server.process.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    server.call(2, "too late")
    late, late_error = server.text(2)
    first, _ = server.text(1)
    assert late_error is True and "stopping" in late
    rc, err = finish(server.process, timeout=30)
    assert rc == 143, err
    (record,) = recorded(tmp_path / "served")
    assert is_stopped(record) and outputs(record["steps"]) == [first]


def test_stdio_end_of_input_mid_call_is_closed_with_the_steps_sent(stdio: Any, tmp_path: Path) -> None:
    """The client closes stdin with a call in flight: the session is the client's close (`closed`, no answer made
    up), and the call it left is not in the record, the client never having got its result."""
    server = stdio(latency=LATENCY)
    server.initialize()
    server.call(1, "first")
    first, _ = server.text(1)
    server.call(2, "left in flight")
    time.sleep(IN_FLIGHT_S)
    assert server.process.stdin is not None
    server.process.stdin.close()
    rc, err = finish(server.process, timeout=30)
    assert rc == 0, err
    clean(err)
    (record,) = recorded(tmp_path / "served")
    assert (record["status"], record["output"]) == (
        "closed",
        "Agent stopped: the session closed without a final answer",
    )
    assert outputs(record["steps"]) == [first]


# Over HTTP.


@contextmanager
def http_server(dump: Path, *extra: str, latency: str | None = None) -> Iterator[tuple[str, str, Any]]:
    process = subprocess.Popen(
        serve_args(dump, "--http", "127.0.0.1:0", *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(latency),
        cwd=dump.parent,
    )
    try:
        found = announced(process, ("url", "token"), timeout=60)
        assert {"url", "token"} <= found.keys(), found
        yield found["url"], found["token"], process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


class HttpClient:
    """An `mcp` SDK client session over streamable HTTP, as a context manager usable from async code."""

    def __init__(self, url: str, token: str, name: str = "stop-test"):
        self.url, self.token, self.name = url, token, name

    async def __aenter__(self) -> ClientSession:
        self.stack = contextlib.AsyncExitStack()
        headers = {"Authorization": f"Bearer {self.token}"}
        http = await self.stack.enter_async_context(httpx.AsyncClient(headers=headers, timeout=60))
        read, write, _ = await self.stack.enter_async_context(streamable_http_client(self.url, http_client=http))
        info = Implementation(name=self.name, version="1")
        session = await self.stack.enter_async_context(ClientSession(read, write, client_info=info))
        await session.initialize()
        return session

    async def __aexit__(self, *exc: Any) -> None:
        with contextlib.suppress(Exception):  # the server is gone: the session cannot be deleted
            await self.stack.aclose()


def text_of(result: types.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


async def later(seconds: float, *actions: Any) -> None:
    for action in actions:
        await asyncio.sleep(seconds)
        action()


def test_http_sigterm_mid_call_answers_the_call_then_records_stopped_without_a_traceback(
    tmp_path: Path, run_cli: Any
) -> None:
    dump = tmp_path / "served"
    with http_server(dump, latency=LATENCY) as (url, token, process):

        async def play() -> list[types.CallToolResult]:
            async with HttpClient(url, token) as session:
                first = await session.call_tool("PostboxMailSearchEmails", {"query": "first"})
                asyncio.get_running_loop().create_task(later(IN_FLIGHT_S, lambda: process.send_signal(signal.SIGTERM)))
                second = await asyncio.wait_for(session.call_tool("PostboxMailSearchEmails", {"query": "b"}), 30)
                await asyncio.sleep(3)  # the session is left open: the server closes it
                return [first, second]

        results = asyncio.run(play())
        rc, err = finish(process)
    assert rc == 143, err
    clean(err)
    assert [r.isError for r in results] == [False, False]
    (record,) = recorded(dump)
    assert is_stopped(record) and outputs(record["steps"]) == [text_of(r) for r in results]
    # Judged as what it is, and reported on its own: never as answered.
    report = judge_and_report(run_cli, dump, 1)
    overall = next(g for g in report["groups"] if g["by"] == "all")
    assert overall["status_counts"]["stopped"] == 1 and overall["status_counts"]["final_answer"] == 0
    printed = " ".join(run_cli("report", str(dump)).out.split())
    assert "1 episodes: 0 answered," in printed and "1 stopped by the server without an answer" in printed


def test_http_a_second_sigterm_cuts_the_call_in_flight(tmp_path: Path) -> None:
    dump = tmp_path / "served"
    with http_server(dump, latency=LATENCY) as (url, token, process):

        async def play() -> list[types.CallToolResult]:
            async with HttpClient(url, token) as session:
                first = await session.call_tool("PostboxMailSearchEmails", {"query": "first"})
                term = lambda: process.send_signal(signal.SIGTERM)  # noqa: E731
                asyncio.get_running_loop().create_task(later(IN_FLIGHT_S, term, term))
                cut = await asyncio.wait_for(session.call_tool("PostboxMailSearchEmails", {"query": "cut"}), 30)
                await asyncio.sleep(3)
                return [first, cut]

        first, cut = asyncio.run(play())
        rc, err = finish(process)
    assert rc == 143, err
    clean(err)
    assert cut.isError is True and "stopped before this call's result" in text_of(cut)
    (record,) = recorded(dump)
    assert ending(record) == ("stopped", STOPPED, None)
    assert outputs(record["steps"]) == [text_of(first)]


def test_http_ctrl_c_between_calls_records_stopped_and_ends_the_open_streams(tmp_path: Path) -> None:
    """A session idle with its event stream open: one Ctrl-C ends it cleanly (no forced shutdown, no traceback)."""
    dump = tmp_path / "served"
    with http_server(dump) as (url, token, process):

        async def play() -> str:
            async with HttpClient(url, token) as session:
                first = await session.call_tool("PostboxMailSearchEmails", {"query": "first"})
                await asyncio.sleep(0.5)
                process.send_signal(signal.SIGINT)
                await asyncio.sleep(3)
                return text_of(first)

        first = asyncio.run(play())
        rc, err = finish(process, timeout=20)
    assert rc == 130, err
    clean(err)
    (record,) = recorded(dump)
    assert is_stopped(record) and outputs(record["steps"]) == [first]


def test_http_sigterm_with_a_session_that_made_no_call(tmp_path: Path) -> None:
    """Initialized, no call yet (before its first call: no episode): the stop is clean and records nothing."""
    dump = tmp_path / "served"
    with http_server(dump) as (url, token, process):

        async def play() -> None:
            async with HttpClient(url, token):
                await asyncio.sleep(0.5)
                process.send_signal(signal.SIGTERM)
                await asyncio.sleep(3)

        asyncio.run(play())
        rc, err = finish(process, timeout=20)
    assert rc == 143, err
    clean(err)
    assert recorded(dump) == []


def test_http_a_call_of_another_session_during_the_stop_is_refused_and_adds_no_step(tmp_path: Path) -> None:
    dump = tmp_path / "served"
    with http_server(dump, latency=LATENCY) as (url, token, process):

        async def play() -> dict[str, Any]:
            async with HttpClient(url, token, "a") as a, HttpClient(url, token, "b") as b:
                b_first = await b.call_tool("PostboxMailSearchEmails", {"query": "b first"})
                in_flight = asyncio.ensure_future(a.call_tool("PostboxMailSearchEmails", {"query": "a in flight"}))
                await asyncio.sleep(IN_FLIGHT_S)
                process.send_signal(signal.SIGTERM)
                await asyncio.sleep(0.3)
                b_late = await asyncio.wait_for(b.call_tool("PostboxMailSearchEmails", {"query": "b late"}), 30)
                a_result = await asyncio.wait_for(in_flight, 30)
                await asyncio.sleep(3)
                return {"a": a_result, "b_first": b_first, "b_late": b_late}

        seen = asyncio.run(play())
        rc, err = finish(process)
    assert rc == 143, err
    assert seen["b_late"].isError is True and "stopping" in text_of(seen["b_late"])
    assert seen["a"].isError is False
    by_client = {r["models"]["agent"]["client"]["name"]: r for r in recorded(dump)}
    assert all(is_stopped(r) for r in by_client.values())
    assert outputs(by_client["a"]["steps"]) == [text_of(seen["a"])]
    assert outputs(by_client["b"]["steps"]) == [text_of(seen["b_first"])]


def test_sigterm_while_the_monitor_gate_judges_a_call_then_again(tmp_path: Path) -> None:
    """The monitor gate asks its model before the call runs: a second SIGTERM then cuts the call mid-judgement."""
    dump = tmp_path / "served"
    with http_server(dump, "--gate", "monitor", latency=LATENCY) as (url, token, process):

        async def play() -> list[types.CallToolResult]:
            async with HttpClient(url, token) as session:
                first = await session.call_tool("PostboxMailSearchEmails", {"query": "first"})
                term = lambda: process.send_signal(signal.SIGTERM)  # noqa: E731
                asyncio.get_running_loop().create_task(later(IN_FLIGHT_S, term, term))
                judged = await asyncio.wait_for(session.call_tool("PostboxMailSearchEmails", {"query": "judged"}), 30)
                await asyncio.sleep(3)
                return [first, judged]

        first, judged = asyncio.run(play())
        rc, err = finish(process)
    assert rc == 143, err
    clean(err)
    assert judged.isError is True and "stopped before this call's result" in text_of(judged)
    (record,) = recorded(dump)
    assert ending(record) == ("stopped", STOPPED, None)
    assert outputs(record["steps"]) == [text_of(first)]


def test_a_budget_stop_records_every_session_under_way_as_stopped(tmp_path: Path) -> None:
    """--max-calls 2: the third model call is refused; the session that ran into it is recorded with the steps its
    client got (not abandoned), the other one under way too; nothing is recorded as answered."""
    dump = tmp_path / "served"
    with http_server(dump, "--max-calls", "2", "--fail-on-budget") as (url, token, process):

        async def play() -> dict[str, Any]:
            async with HttpClient(url, token, "a") as a, HttpClient(url, token, "b") as b:
                a_first = await a.call_tool("PostboxMailSearchEmails", {"query": "a"})
                b_first = await b.call_tool("PostboxMailSearchEmails", {"query": "b"})
                a_over = await a.call_tool("PostboxMailSearchEmails", {"query": "a over"})
                await asyncio.sleep(3)
                return {"a_first": a_first, "b_first": b_first, "a_over": a_over}

        seen = asyncio.run(play())
        rc, err = finish(process)
    assert rc == 3, err
    clean(err)
    assert seen["a_over"].isError is True
    by_client = {r["models"]["agent"]["client"]["name"]: r for r in recorded(dump)}
    assert sorted(by_client) == ["a", "b"] and all(is_stopped(r) for r in by_client.values())
    assert outputs(by_client["a"]["steps"]) == [text_of(seen["a_first"])]
    assert outputs(by_client["b"]["steps"]) == [text_of(seen["b_first"])]


# A record that cannot be written fails the command as in a run: said at once, the server stops, exit 2.


def _tmpfs(path: Path, size: str = "64k") -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a real full disk needs a tmpfs, which only root can mount")
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    _tmpfs(disk)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def fill(disk: Path, leave_pages: int = 0) -> None:
    """Fill the file system, then free `leave_pages` pages of it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    if leave_pages:
        os.truncate(filler, max(0, os.path.getsize(filler) - 4096 * leave_pages))


def answer_after_one_call(server: RawStdio, before_answer: Any = None) -> tuple[str, bool]:
    server.initialize()
    server.call(1, "first")
    server.text(1)
    if before_answer is not None:
        before_answer()
    params = {"name": "final_answer", "arguments": {"answer": "done"}}
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    return server.text(2)


def stops_by_itself(server: RawStdio) -> tuple[int, str]:
    """The server stops on its own, the client's stdin still open."""
    try:
        server.process.wait(30)
    except subprocess.TimeoutExpired:
        pytest.fail("the server kept serving after an episode could not be written")
    return finish(server.process)


def test_a_full_disk_at_the_trajectory_write_stops_the_server_and_exits_2(small_disk: Path) -> None:
    dump = small_disk / "run"
    server = RawStdio(dump)
    try:
        text, is_error = answer_after_one_call(server, lambda: fill(small_disk))
        rc, err = stops_by_itself(server)
    finally:
        server.kill()
    assert is_error is True and "could not be recorded" in text and "No space left on device" in text
    assert rc == 2, err
    clean(err)
    lines = err.splitlines()
    assert any(line.startswith("toolemu: episode NOT recorded:") for line in lines), err
    assert f"error: {dump / 'trajectories.jsonl'}: cannot be written: No space left on device" in err
    assert "every episode under way was recorded" not in err
    assert (dump / "trajectories.jsonl").read_text() == ""


def test_a_full_disk_at_run_json_stops_the_server_and_exits_2(small_disk: Path, tmp_path: Path) -> None:
    """Room for the record but not for run.json: the record is kept and said so; the command still fails."""
    sizes = tmp_path / "sizes"  # the same episode on a disk with room: how many pages its record takes
    sizer = RawStdio(sizes)
    try:
        answer_after_one_call(sizer)
    finally:
        sizer.process.stdin.close()  # type: ignore[union-attr]
        finish(sizer.process)
    size = (sizes / "trajectories.jsonl").stat().st_size
    pages = math.ceil(size / 4096)
    if math.ceil((size + 400) / 4096) != pages:
        pytest.skip(f"the record ({size} bytes) sits too near a page's end to leave room for it alone")
    dump = small_disk / "run"
    server = RawStdio(dump)
    try:
        text, is_error = answer_after_one_call(server, lambda: fill(small_disk, leave_pages=pages))
        rc, err = stops_by_itself(server)
    finally:
        server.kill()
    assert is_error is True and "this episode was recorded, but the run folder was not" in text
    assert rc == 2, err
    clean(err)
    assert f"error: {dump / 'run.json'}: cannot be written: No space left on device" in err
    assert "every episode under way was recorded" not in err
    (record,) = recorded(dump)
    assert record["status"] == "final_answer"


def _small_files() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))


def test_a_file_size_limit_at_the_trajectory_write_stops_the_server_and_exits_2(tmp_path: Path) -> None:
    """`ulimit -f` (a record longer than the limit): portable, no root needed."""
    dump = tmp_path / "served"
    server = RawStdio(dump, preexec=_small_files)
    try:
        text, is_error = answer_after_one_call(server)
        rc, err = stops_by_itself(server)
    finally:
        server.kill()
    assert is_error is True and "could not be recorded" in text
    assert rc == 2, err
    clean(err)
    assert f"error: {dump / 'trajectories.jsonl'}: cannot be written: File too large" in err
    assert "every episode under way was recorded" not in err


def test_a_full_disk_when_the_stop_records_the_sessions_exits_2_not_143(small_disk: Path) -> None:
    dump = small_disk / "run"
    with http_server(dump) as (url, token, process):

        async def play() -> None:
            async with HttpClient(url, token) as session:
                await session.call_tool("PostboxMailSearchEmails", {"query": "first"})
                fill(small_disk)
                process.send_signal(signal.SIGTERM)
                await asyncio.sleep(3)

        asyncio.run(play())
        rc, err = finish(process)
    assert rc == 2, err
    clean(err)
    assert f"error: {dump / 'trajectories.jsonl'}: cannot be written: No space left on device" in err
    assert "every episode under way was recorded" not in err


if sys.platform != "linux":  # signals, tmpfs and rlimits as Linux has them
    pytestmark = pytest.mark.skip("Linux only")


def _raw_session(url: str, token: str) -> dict[str, str]:
    """A session opened with raw JSON-RPC (test_mcp_edges' helpers): the headers its requests carry."""
    opened = initialize(url, token)
    assert opened.status_code == 200, opened.text
    headers = {**ACCEPT, "Authorization": f"Bearer {token}", "mcp-session-id": opened.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = EDGE_HELLO["protocolVersion"]
    httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=60)
    return headers


def test_a_request_just_after_the_last_answer_of_a_stop_is_still_served(tmp_path: Path) -> None:
    """The `mcp` SDK's client lists the tools right after a call's answer, to check the result against the tool's
    schema. A stop closed the sessions as soon as the last answer was out, so that request met a session being
    closed: a 500 that failed the client's whole session (or, with event streams, a stream that ended without an
    answer, which the client waited on). The stop now serves a session's requests until none has come for
    `QUIET_S`; one that comes after is answered 404 with a JSON-RPC error, as a request of an ended session."""
    dump = tmp_path / "served"
    with http_server(dump, latency=LATENCY) as (url, token, process):
        headers = _raw_session(url, token)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        call["params"] = {"name": "PostboxMailSearchEmails", "arguments": {"query": "in flight"}}
        with httpx.Client(headers=headers, timeout=60) as client:

            def signal_later() -> None:
                time.sleep(IN_FLIGHT_S)
                process.send_signal(signal.SIGTERM)

            threading.Thread(target=signal_later, daemon=True).start()
            answered = client.post(url, json=call)
            time.sleep(0.05)  # the SDK's client is faster; a loaded machine slower
            listed = client.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
            time.sleep(1.0)  # well past the quiet time: the session is closed or closing
            late = None
            with contextlib.suppress(httpx.TransportError):  # or the server has already gone
                late = client.post(url, json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        rc, err = finish(process)
    assert rc == 143, err
    assert answered.status_code == 200 and "result" in answered.json(), answered.text
    assert listed.status_code == 200, (listed.status_code, listed.text)
    assert any(t["name"] == "PostboxMailSearchEmails" for t in listed.json()["result"]["tools"])
    if late is not None:
        assert late.status_code == 404, (late.status_code, late.text)
        assert late.json()["id"] == 4 and "stopping" in late.json()["error"]["message"]
    (record,) = recorded(dump)
    assert is_stopped(record) and outputs(record["steps"]) == [answered.json()["result"]["content"][0]["text"]]

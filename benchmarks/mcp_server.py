"""What the MCP server adds: latency per tool call against the emulator alone, and whole sessions per second.

1. Latency per call. The same calls (PostboxMailSearchEmails on comms_email_purge_promotions, a fresh episode every
   `--calls-per-episode` calls so the history stays the same size) are made two ways, with the dry-run (mock)
   emulator answering after a fixed TOOLEMU_DRY_RUN_LATENCY_S (0, and `--latency`):
   - the emulator alone: `Episode.apply(AgentTurn(calls=[ToolCall(...)]))` in this process;
   - through MCP: `toolemu mcp serve --http 127.0.0.1:0 --dry-run` as its own process, the `mcp` SDK's client
     calling it over streamable HTTP, one call at a time; each call timed at the client (round trip).
   Added latency = median through MCP - median alone.
2. Sessions per second. N clients at once (`--clients 1 8 32`), each opening sessions one after another (initialize,
   list tools, one call, final_answer, close: one recorded episode each), until `--sessions` sessions have run;
   sessions per second = sessions / wall time. Latency 0.

3. Sessions per second with lean clients (`--lean-clients 32`, `--lean-sessions 1024`, `--lean-processes 2`): the
   same sessions, sent by `LeanSession` (the same JSON-RPC messages over http.client, no GET stream) from threads
   in their own processes. The SDK's client needs about 25 ms of CPU a session, so 32 of them in one process cannot
   open more than about 40 sessions a second whatever the server does, and 100 a second would need more cores
   than this machine has for them alone; the lean clients need about 1 ms. Also the CPU of the server's process
   and of the clients' per session.

Every figure is a median over the calls or the whole wall time; the server's run folder is checked to hold one
episode per session. Run: python benchmarks/mcp_server.py [--calls 200] [--latency 0.05] [--sessions 64]
                                                          [--clients 1 8 32] [--lean-sessions 1024] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

CASE = "comms_email_purge_promotions"
TOOL = "PostboxMailSearchEmails"


def emulator_alone(calls: int, per_episode: int, latency: float) -> list[float]:
    """Seconds per call of `Episode.apply` with the dry-run emulator (no MCP)."""
    os.environ["TOOLEMU_DRY_RUN_LATENCY_S"] = str(latency)
    from toolemu.agents import AgentTurn
    from toolemu.episode import EpisodeBuilder, EpisodeSpec
    from toolemu.episode.builder import OutsideAgent
    from toolemu.llm import LLMSettings, build_hub
    from toolemu.log import ToolCall
    from toolemu.specs import load_cases

    bench = load_cases()
    index, case = next((i, c) for i, c in enumerate(bench.cases) if c.name == CASE)
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("emulator",))
    builder = EpisodeBuilder(hub, EpisodeSpec(max_iterations=per_episode + 1), bench, run_id="bench")
    times: list[float] = []
    episode = None
    for i in range(calls):
        if i % per_episode == 0:
            episode = builder.start(case, index, i, agent=OutsideAgent("mcp"))
        turn = AgentTurn(thought="", calls=[ToolCall(tool=TOOL, tool_input={"query": f"q{i}"})])
        start = time.perf_counter()
        episode.apply(turn)  # type: ignore[union-attr]
        times.append(time.perf_counter() - start)
    return times


class Server:
    """`toolemu mcp serve --http 127.0.0.1:0 --dry-run` as its own process."""

    def __init__(self, folder: Path, latency: float, max_iterations: int):
        env = {**os.environ, "TOOLEMU_DRY_RUN_LATENCY_S": str(latency)}
        command = [sys.executable, "-m", "toolemu.cli.app", "mcp", "serve", "--case", CASE, "--dry-run"]
        command += ["--cache", "off", "--http", "127.0.0.1:0", "--dump-dir", str(folder)]
        command += ["--max-iterations", str(max_iterations)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        found: dict[str, str] = {}
        while len(found) < 2:
            line = self.process.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError("the server printed no url and token")
            key, _, value = line.partition(": ")
            found[key] = value.strip()
        self.url, self.token = found["url"], found["token"]

    def stop(self) -> None:
        self.process.send_signal(2)  # Ctrl-C: every open session's episode is recorded, exit 130
        self.process.wait(120)


async def session(url: str, token: str, calls: int, times: list[float] | None, answer: bool) -> None:
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(60, read=300))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        await client.list_tools()
        for i in range(calls):
            start = time.perf_counter()
            result = await client.call_tool(TOOL, {"query": f"q{i}"})
            if times is not None:
                times.append(time.perf_counter() - start)
            assert not result.isError, result
        if answer:
            await client.call_tool("final_answer", {"answer": "done"})


def through_mcp(calls: int, per_episode: int, latency: float, folder: Path) -> list[float]:
    server = Server(folder, latency, per_episode + 1)
    times: list[float] = []
    try:

        async def all_calls() -> None:
            for _ in range(calls // per_episode):
                await session(server.url, server.token, per_episode, times, answer=True)

        asyncio.run(all_calls())
    finally:
        server.stop()
    return times


def sessions_per_second(clients: int, sessions: int, folder: Path) -> tuple[float, int]:
    server = Server(folder, 0.0, 15)
    try:

        async def run() -> float:
            left = list(range(sessions))

            async def worker() -> None:
                while left:
                    left.pop()
                    await session(server.url, server.token, 1, None, answer=True)

            start = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(clients)))
            return time.perf_counter() - start

        wall = asyncio.run(run())
    finally:
        server.stop()
    recorded = sum(1 for line in (folder / "trajectories.jsonl").read_text().splitlines() if line.strip())
    return sessions / wall, recorded


PROTOCOL = "2025-06-18"  # a version both the 1.x and the 2.x SDK's servers speak


class LeanSession:
    """One MCP session as a load generator makes it: the JSON-RPC messages of streamable HTTP over one kept
    http.client connection, a reply read as JSON or from an event stream, no GET stream. It sends what
    the SDK's client sends for the same session (initialize, initialized, tools/list, tools/call, DELETE), at a
    tenth of its CPU, so that the clients do not use up the cores the server is measured on."""

    def __init__(self, connection: http.client.HTTPConnection, path: str, token: str):
        self.connection, self.path = connection, path
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        self.next_id = 0

    def _exchange(self, method: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any] | None]:
        payload = None if body is None else json.dumps(body).encode()
        self.connection.request(method, self.path, payload, self.headers)
        reply = self.connection.getresponse()
        if "mcp-session-id" in reply.headers:
            self.headers["mcp-session-id"] = reply.headers["mcp-session-id"]
        if reply.headers.get("content-type", "").startswith("text/event-stream"):
            return reply.status, self._answer_in_stream(reply)
        data = reply.read()
        return reply.status, json.loads(data) if reply.status == 200 and data else None

    def _answer_in_stream(self, reply: http.client.HTTPResponse) -> dict[str, Any] | None:
        """The JSON-RPC answer in an event stream, read as it comes, as the SDK's client reads it: the stream may
        stay open after it (then the connection is closed, and the next request opens another)."""
        for line in iter(reply.readline, b""):
            if line.startswith(b"data:") and line[5:].strip():
                found = json.loads(line[5:])
                if "id" in found and ("result" in found or "error" in found):
                    if not reply.isclosed():
                        self.connection.close()
                    return found
        return None

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        status, reply = self._exchange("POST", message)
        if reply is None or "result" not in reply:
            raise RuntimeError(f"{method}: HTTP {status}, {reply}")
        return reply["result"]

    def run(self, calls: int) -> None:
        client = {"name": "benchmark", "version": "0"}
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": client})
        self.headers["mcp-protocol-version"] = PROTOCOL
        status, _ = self._exchange("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202, status
        assert any(t["name"] == TOOL for t in self.request("tools/list", {})["tools"])
        for i in range(calls):
            result = self.request("tools/call", {"name": TOOL, "arguments": {"query": f"q{i}"}})
            assert not result.get("isError"), result
        result = self.request("tools/call", {"name": "final_answer", "arguments": {"answer": "done"}})
        assert not result.get("isError"), result
        status, _ = self._exchange("DELETE", None)
        assert status in (200, 204), status


class NoDelayConnection(http.client.HTTPConnection):
    """http.client with TCP_NODELAY, as httpx and the SDK's client have it: without it a small request can wait for
    the server's delayed ACK (tens of ms), which would be measured as the server's time."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def lean_worker(url: str, token: str, threads: int, sessions: int) -> None:
    """One process of lean clients: `threads` clients, `sessions` sessions between them; waits for a line on stdin
    to start (so that every process starts at once, imports done), then prints its start, end and CPU seconds."""
    parts = urllib.parse.urlsplit(url)
    left = list(range(sessions))
    lock = threading.Lock()
    failures: list[str] = []

    def client() -> None:
        connection = NoDelayConnection(parts.hostname, parts.port, timeout=120)
        while True:
            with lock:
                if not left:
                    return
                left.pop()
            try:
                LeanSession(connection, parts.path, token).run(1)
            except Exception as exc:  # said at the end: a failed session is not a served one
                failures.append(repr(exc))
                connection.close()  # the next session opens a fresh connection

    sys.stdin.readline()
    start, cpu = time.time(), time.process_time()
    pool = [threading.Thread(target=client) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    print(json.dumps({"start": start, "end": time.time(), "cpu": time.process_time() - cpu, "failures": failures}))


def lean_sessions_per_second(clients: int, sessions: int, folder: Path, processes: int) -> dict[str, Any]:
    """`clients` lean clients in `processes` processes against one server: sessions per second, and the CPU of
    the server and of the clients per session."""
    server = Server(folder, 0.0, 15)
    try:
        command = [sys.executable, "-P", os.path.abspath(__file__), "--lean-worker", server.url, server.token]
        workers = [
            subprocess.Popen(
                [*command, str(clients // processes), str(sessions // processes)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(processes)
        ]
        time.sleep(1.0)  # their imports
        before = process_cpu(server.process.pid)
        for worker in workers:
            worker.stdin.write("go\n")  # type: ignore[union-attr]
            worker.stdin.flush()  # type: ignore[union-attr]
        results = [json.loads(worker.communicate(timeout=600)[0]) for worker in workers]
        server_cpu = process_cpu(server.process.pid) - before
    finally:
        server.stop()
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    done = (sessions // processes) * processes
    failures = [f for r in results for f in r["failures"]]
    recorded = sum(1 for line in (folder / "trajectories.jsonl").read_text().splitlines() if line.strip())
    return {
        "clients": clients,
        "processes": processes,
        "sessions": done,
        "per_s": (done - len(failures)) / wall,
        "failures": failures[:3],
        "failed": len(failures),
        "recorded": recorded,
        "server_cpu_ms_per_session": 1000 * server_cpu / done,
        "client_cpu_ms_per_session": 1000 * sum(r["cpu"] for r in results) / done,
    }


def process_cpu(pid: int) -> float:
    """User and system CPU seconds of a process (Linux: /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--calls-per-episode", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--lean-sessions", type=int, default=1024, help="sessions for the lean clients (0: none)")
    parser.add_argument("--lean-clients", type=int, nargs="+", default=[32])
    parser.add_argument("--lean-processes", type=int, default=2)
    parser.add_argument("--only-lean", action="store_true", help="only the lean clients' sessions per second")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--lean-worker", nargs=4, help=argparse.SUPPRESS)  # url token threads sessions
    args = parser.parse_args()
    if args.lean_worker:
        url, token, threads, sessions = args.lean_worker
        lean_worker(url, token, int(threads), int(sessions))
        return
    out: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "load": os.getloadavg()}
    out["latency"] = []
    with tempfile.TemporaryDirectory() as tmp:
        for latency in () if args.only_lean else (0.0, args.latency):
            alone = emulator_alone(args.calls, args.calls_per_episode, latency)
            mcp = through_mcp(args.calls, args.calls_per_episode, latency, Path(tmp) / f"lat-{latency}")
            row = {
                "emulator_latency_s": latency,
                "calls": len(mcp),
                "alone_median_ms": 1000 * statistics.median(alone),
                "mcp_median_ms": 1000 * statistics.median(mcp),
            }
            row["added_median_ms"] = row["mcp_median_ms"] - row["alone_median_ms"]
            out["latency"].append(row)
            print(
                f"emulator latency {latency:.3f} s: alone {row['alone_median_ms']:.1f} ms, through MCP "
                f"{row['mcp_median_ms']:.1f} ms, added {row['added_median_ms']:.1f} ms (median of {len(mcp)} calls)"
            )
        out["sessions"] = []
        for clients in () if args.only_lean else args.clients:
            rate, recorded = sessions_per_second(clients, args.sessions, Path(tmp) / f"clients-{clients}")
            out["sessions"].append({"clients": clients, "sessions": args.sessions, "per_s": rate, "recorded": recorded})
            print(
                f"{clients:>3} clients: {rate:.2f} sessions/s ({args.sessions} sessions, {recorded} episodes recorded)"
            )
        out["lean_sessions"] = []
        for clients in args.lean_clients if args.lean_sessions else ():
            processes = min(args.lean_processes, clients)
            row = lean_sessions_per_second(clients, args.lean_sessions, Path(tmp) / f"lean-{clients}", processes)
            out["lean_sessions"].append(row)
            print(
                f"{clients:>3} lean clients in {processes} processes: {row['per_s']:.2f} sessions/s ({row['sessions']}"
                f" sessions, {row['failed']} failed, {row['recorded']} episodes recorded); CPU per session: server "
                f"{row['server_cpu_ms_per_session']:.1f} ms, clients {row['client_cpu_ms_per_session']:.1f} ms"
            )
    out["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

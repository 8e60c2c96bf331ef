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

Every figure is a median over the calls or the whole wall time; the server's run folder is checked to hold one
episode per session. Run: python benchmarks/mcp_server.py [--calls 200] [--latency 0.05] [--sessions 64]
                                                          [--clients 1 8 32] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--calls-per-episode", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "load": os.getloadavg()}
    out["latency"] = []
    with tempfile.TemporaryDirectory() as tmp:
        for latency in (0.0, args.latency):
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
        for clients in args.clients:
            rate, recorded = sessions_per_second(clients, args.sessions, Path(tmp) / f"clients-{clients}")
            out["sessions"].append({"clients": clients, "sessions": args.sessions, "per_s": rate, "recorded": recorded})
            print(
                f"{clients:>3} clients: {rate:.2f} sessions/s ({args.sessions} sessions, {recorded} episodes recorded)"
            )
    out["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

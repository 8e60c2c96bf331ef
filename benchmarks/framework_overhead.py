"""Framework overhead: a scripted model with a fixed latency per call, run through the real runner.

Ideal throughput is workers / latency calls per second; everything below that is the framework's cost
(prompt building, validation, JSONL writes, thread hand-offs).

Every worker gets the same number of episodes (about --calls-per-worker calls; trials beyond the first where the
cases run out), so the run ends in a whole wave: a last wave that fills only part of the pool would be measured as
overhead. Before 2026-11-23 the run was capped at the benchmark's 182 cases, which at 64 workers left a last wave
of 54 and bounded the efficiency at 0.948 whatever the framework did; `--cap-at-cases` measures that way again.

`--served` puts a loopback served-model double in place of the mock: an OpenAI-compatible chat server in its own
process (asyncio, HTTP/1.1 keep-alive) that answers every request `--latency` seconds after it arrived, with the
dry-run model's reply for the schema in the request (agent and emulator told apart by their system prompts). The
roles are `openai:double` at its plain-http --base-url, so every call goes the way a vLLM server's does: asked
directly over urllib3 (toolemu.llm.served) since 2026-11-28, through LangChain's ChatOpenAI, the openai SDK and
httpx before. The agent (`--agent-format tools`) gets native tool calls there: it calls the first
tool once, then answers, so an episode is three calls (agent, emulator, agent), as on the mock. The double counts
the TCP connections it accepted (with connections reused, at most one per worker) and its own CPU time: it shares
the machine's cores with the run.

Run: python benchmarks/framework_overhead.py [--latency 0.1] [--workers 1 2 4 8 16] [--repeats 3]
     python benchmarks/framework_overhead.py --latency 1 --workers 64 128 256
     python benchmarks/framework_overhead.py --served --latency 1 --workers 256 512 1024
     python benchmarks/framework_overhead.py --cli --latency 1 --workers 1024

`--cli` runs `toolemu run -bs N --no-evaluate` itself, in its own process, against the double: the rate is over
the double's window, from its first request to its last answer; its CPU per call includes the command's start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from toolemu.llm import LLMSettings, build_hub
from toolemu.llm.dryrun import DRY_RUN_MODEL
from toolemu.log import FINISHED, TRAJECTORIES
from toolemu.log.read import parse_trajectory
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS
from toolemu.runner import RunConfig, run_cases
from toolemu.specs import load_benchmark


def selection(cases: int, workers: int, calls_per_worker: int, cap_at_cases: bool) -> tuple[int, int]:
    """(cases, trials) for about calls_per_worker calls per worker (3 per episode), a whole number of episodes
    per worker; with cap_at_cases, at most one trial of every case, as the first version of this benchmark."""
    episodes = workers * max(1, calls_per_worker // 3)
    if cap_at_cases:
        return min(cases, max(workers, episodes)), 1
    trials = -(-episodes // cases)
    while episodes % trials:
        trials += 1
    return episodes // trials, trials


ROLE_CUES = {"agent": "You are an assistant that", "emulator": "You emulate tools"}  # their system prompts' start


class DoubleProtocol(asyncio.Protocol):
    """One client connection of the served double: requests read whole (Content-Length), each answered `latency`
    seconds after it arrived, in order (HTTP/1.1 without pipelining: one request at a time per connection)."""

    connections = 0
    requests = 0
    first_request = 0.0  # wall-clock time (time.time(): comparable across processes) of the first chat request
    last_answer = 0.0  # and of the last answer sent

    def __init__(self, latency: float):
        self.latency = latency
        self.buffer = b""
        self.responders: dict[str, Any] = {}

    def connection_made(self, transport: Any) -> None:
        DoubleProtocol.connections += 1
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            body, self.buffer = self.buffer[head_end + 4 : end], self.buffer[end:]
            DoubleProtocol.requests += 1
            path = head.split(" ", 2)[1]
            status, payload = self.answer(path, body)
            chat = not path.rstrip("/").endswith("/stats")
            asyncio.get_running_loop().call_later(self.latency, self.send, status, payload, chat)

    def answer(self, path: str, body: bytes) -> tuple[str, bytes]:
        if path.rstrip("/").endswith("/stats"):
            stats = {
                "connections": DoubleProtocol.connections,
                "requests": DoubleProtocol.requests,
                "cpu_s": time.process_time(),
                "first_request": DoubleProtocol.first_request,
                "last_answer": DoubleProtocol.last_answer,
            }
            DoubleProtocol.first_request = 0.0  # the next window starts at the next request
            return "200 OK", json.dumps(stats).encode()
        from toolemu.llm.dryrun import _responder, example_from_schema

        DoubleProtocol.first_request = DoubleProtocol.first_request or time.time()
        request = json.loads(body)
        messages = request["messages"]
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        role = next((r for r, cue in ROLE_CUES.items() if str(system).startswith(cue)), "emulator")
        fmt = request.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        tools = request.get("tools") or []
        message: dict[str, Any]
        if role == "agent" and tools:  # native tool calling: the first tool once, then the answer (as the mock does)
            if any(m["role"] == "tool" for m in messages):
                message, finish = {"role": "assistant", "content": "Final Answer: dry run"}, "stop"
            else:
                function = tools[0]["function"]
                args = example_from_schema(function.get("parameters") or {"type": "object"})
                call = {"id": "call_0", "type": "function", "function": {"name": function["name"], "arguments": ""}}
                call["function"]["arguments"] = json.dumps(args)
                message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            responder = self.responders.setdefault(role, _responder(role))
            text = responder(messages, {"extra_body": {"response_format": {"schema": schema}}})
            message, finish = {"role": "assistant", "content": text}, "stop"
        text = json.dumps(message)
        reply = {
            "id": "chatcmpl-double",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "double"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": len(text) // 4},
        }
        reply["usage"]["total_tokens"] = reply["usage"]["prompt_tokens"] + reply["usage"]["completion_tokens"]
        return "200 OK", json.dumps(reply).encode()

    def send(self, status: str, payload: bytes, chat: bool) -> None:
        if self.transport.is_closing():
            return
        head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
        self.transport.write(head.encode() + payload)
        if chat:
            DoubleProtocol.last_answer = time.time()


def serve_double(latency: float) -> None:
    """The served double, in this process until stdin closes; prints its port first."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: DoubleProtocol(latency), "127.0.0.1", 0, backlog=4096)
        print(server.sockets[0].getsockname()[1], flush=True)
        await loop.run_in_executor(None, sys.stdin.read)  # until the benchmark closes our stdin
        server.close()

    asyncio.run(main())


class Double:
    """The served double as its own process (its CPU is not under this process's GIL, but on the same cores)."""

    def __init__(self, latency: float):
        command = [sys.executable, "-P", os.path.abspath(__file__), "--serve-double", "--latency", str(latency)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, float]:
        import urllib.request

        with urllib.request.urlopen(f"{self.base_url}/stats", timeout=30) as reply:  # noqa: S310 - our loopback
            return json.loads(reply.read())

    def stop(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait(30)


def measure(
    bench, workers: int, latency: float, cases: int, trials: int, double: Double | None = None
) -> dict[str, float]:
    """One run: calls per second, and what the process and the double saw."""
    if double is None:
        os.environ["TOOLEMU_DRY_RUN_LATENCY_S"] = str(latency)
        hub = build_hub(LLMSettings(model=DRY_RUN_MODEL, cache="off"), ("agent", "emulator"))
        config = RunConfig(batch_size=workers, trunc_num=cases, num_trials=trials)
    else:
        settings = LLMSettings(model="openai:double", base_url=double.base_url, cache="off")
        hub = build_hub(settings, ("agent", "emulator"))
        config = RunConfig(batch_size=workers, trunc_num=cases, num_trials=trials, agent_format="tools")
        before = double.stats()
    with tempfile.TemporaryDirectory() as tmp:
        c0, t0 = time.process_time(), time.perf_counter()
        run_cases(bench, hub, config, Path(tmp), show_progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    calls = hub.tracker.total().calls
    out = {"calls_per_s": calls / wall, "cpu_ms_per_call": 1000 * cpu / calls, "calls": calls}
    if double is not None:
        after = double.stats()
        out["connections"] = after["connections"] - before["connections"]
        out["requests"] = after["requests"] - before["requests"] - 1  # less the stats request itself
        out["double_cpu_ms_per_call"] = 1000 * (after["cpu_s"] - before["cpu_s"]) / calls
    return out


def measure_cli(workers: int, cases: int, trials: int, double: Double) -> dict[str, float]:
    """`toolemu run -bs WORKERS` as a user runs it (its own process, no evaluation) against the double: calls per
    second over the double's window, from its first request to its last answer (the records' times are whole
    seconds). `wall_s` is the whole command, its start and summary included."""
    toolemu = Path(sys.executable).with_name("toolemu")
    with tempfile.TemporaryDirectory() as tmp:
        command = [str(toolemu), "run", "--model", "openai:double", "--base-url", double.base_url]
        command += ["--api-key-env", "DOUBLE_KEY", "--agent-format", "tools", "--cache", "off", "-bs", str(workers)]
        command += ["--trunc-num", str(cases), "--num-trials", str(trials), "--no-progress", "--no-evaluate"]
        command += ["--auto", "--dump-dir", tmp]
        before = double.stats()
        c0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=dict(os.environ, DOUBLE_KEY="double"))
        wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
        after = double.stats()
        with open(Path(tmp) / TRAJECTORIES, encoding="utf-8") as file:
            records = [parse_trajectory(json.loads(line), i) for i, line in enumerate(file)]
        finished = sum(record.status in FINISHED for record in records)
    calls = after["requests"] - before["requests"] - 1  # less the stats request itself
    window = after["last_answer"] - after["first_request"]
    out = {"calls_per_s": calls / window, "calls": calls, "cpu_ms_per_call": 1000 * cpu / calls}
    out.update(window_s=window, wall_s=wall, finished=finished)
    out["double_cpu_ms_per_call"] = 1000 * (after["cpu_s"] - before["cpu_s"]) / calls
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the double is not counted: it has not ended
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls-per-worker", type=int, default=30)
    parser.add_argument("--cap-at-cases", action="store_true", help="at most one trial per case (the old shape)")
    parser.add_argument("--served", action="store_true", help="a loopback served-model double instead of the mock")
    parser.add_argument("--cli", action="store_true", help="`toolemu run` in its own process against the double")
    parser.add_argument("--serve-double", action="store_true", help=argparse.SUPPRESS)  # the double's own process
    args = parser.parse_args()
    if args.serve_double:
        serve_double(args.latency)
        return
    logging.getLogger("toolemu").setLevel(logging.ERROR)
    bench = load_benchmark([DEFAULT_TOOLKITS, DEFAULT_CASES])
    double = Double(args.latency) if args.served or args.cli else None
    load_before = os.getloadavg()
    rows = []
    try:
        for workers in args.workers:
            cases, trials = selection(len(bench.cases), workers, args.calls_per_worker, args.cap_at_cases)
            if args.cli:
                runs = [measure_cli(workers, cases, trials, double) for _ in range(args.repeats)]  # type: ignore[arg-type]
            else:
                runs = [measure(bench, workers, args.latency, cases, trials, double) for _ in range(args.repeats)]
            rate = statistics.median(r["calls_per_s"] for r in runs)
            ideal = workers / args.latency
            row: dict[str, Any] = {
                "workers": workers,
                "episodes": cases * trials,
                "calls_per_s_median": round(rate, 2),
                "ideal_calls_per_s": ideal,
                "efficiency": round(rate / ideal, 3),
                "efficiencies": [round(r["calls_per_s"] / ideal, 3) for r in runs],
                "cpu_ms_per_call_median": round(statistics.median(r["cpu_ms_per_call"] for r in runs), 3),
                "calls_per_episode": round(statistics.median(r["calls"] for r in runs) / (cases * trials), 2),
            }
            if args.cli:
                row["window_s"] = [round(r["window_s"], 2) for r in runs]
                row["command_wall_s"] = [round(r["wall_s"], 2) for r in runs]
                row["finished_episodes"] = [r["finished"] for r in runs]
            elif double is not None:
                row["connections"] = [r["connections"] for r in runs]
            if double is not None:
                row["double_cpu_ms_per_call_median"] = round(
                    statistics.median(r["double_cpu_ms_per_call"] for r in runs), 3
                )
            rows.append(row)
    finally:
        if double is not None:
            double.stop()
    out = {
        "latency_s": args.latency,
        "served": args.served,
        "cli": args.cli,
        "repeats": args.repeats,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "rows": rows,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

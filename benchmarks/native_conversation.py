"""Native tool calling on a strong-model double: does the agent keep its history, or repeat itself to the step limit?

The double (tests/doubles) answers like a strong model with native tool calling: it counts as its progress only the
tool results that answer its own earlier calls (a role "tool" message / a tool_result block with the call's id).
History sent back any other way (as ReAct text in a user message) is not its own turns to it: it starts the task
again and repeats its first call, and the episode runs to max_iterations.

`toolemu emulate --agent-format tools` runs as a subprocess (no judges), agent and emulator both on the double.
Prints episodes by status, how many ended at max_iterations, tool calls (steps) and agent requests per episode,
repeated calls (a step with the same tool and input as an earlier step of its episode), and how the agent's
requests carried the history (tool results matched by id, or none).

Run: python benchmarks/native_conversation.py [--api openai|anthropic] [--cases N] [--batch-size 4]
                                               [--max-iterations N] [--knob name=value ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from doubles import DoubleConfig, DoubleServer, Exchange  # noqa: E402
from strong_double_run import APIS, DUMMY_KEY, read_jsonl, role_of  # noqa: E402


def emulate_command(base_url: str, dump: Path, args: argparse.Namespace) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from toolemu.cli.app import main; main()",
        "emulate",
        "--model",
        APIS[args.api][1],
        "--base-url",
        base_url,
        "--agent-format",
        "tools",
        "--cache",
        "off",
        "--trunc-num",
        str(args.cases),
        "--max-iterations",
        str(args.max_iterations),
        "-bs",
        str(args.batch_size),
        "--auto",
        "--no-progress",
        "--dump-dir",
        str(dump),
    ]


def tool_results_in(exchange: Exchange) -> int:
    """Tool results the request carried as the API's own messages: role "tool" or tool_result blocks."""
    count = 0
    for message in exchange.request.get("messages") or []:
        if message.get("role") == "tool":
            count += 1
        content = message.get("content")
        if isinstance(content, list):
            count += sum(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return count


def repeated_calls(record: dict[str, Any]) -> int:
    seen: set[str] = set()
    repeats = 0
    for step in record.get("steps") or []:
        key = json.dumps([step.get("tool"), step.get("tool_input")], sort_keys=True)
        repeats += key in seen
        seen.add(key)
    return repeats


def summarise(double: DoubleServer, dump: Path, wall_s: float, rc: int, args: argparse.Namespace) -> dict[str, Any]:
    records = read_jsonl(dump / "trajectories.jsonl")
    agent = [e for e in double.exchanges() if role_of(e) == "agent"]
    steps = [len(r.get("steps") or []) for r in records]
    turns_with_history = [e for e in agent if tool_results_in(e) > 0]
    later_turns = [e for e in agent if sum(m.get("role") != "system" for m in e.request.get("messages") or []) > 1]
    return {
        "api": args.api,
        "cases": args.cases,
        "max_iterations": args.max_iterations,
        "toolemu_exit_code": rc,
        "wall_s": round(wall_s, 1),
        "episodes": len(records),
        "episodes_by_status": dict(Counter(r.get("status") for r in records)),
        "ended_at_max_iterations": sum(r.get("status") == "max_iterations" for r in records),
        "errors": dict(Counter(f"{(r.get('error') or {}).get('type')}" for r in records if r.get("status") == "error")),
        "tool_calls_per_episode": {
            "mean": round(statistics.fmean(steps), 2) if steps else 0.0,
            "min": min(steps, default=0),
            "max": max(steps, default=0),
        },
        "agent_requests": len(agent),
        "agent_requests_per_episode": round(len(agent) / max(1, len(records)), 2),
        "agent_requests_by_status": dict(Counter(e.status for e in agent)),
        "agent_replies_by_kind": dict(Counter(e.kind for e in agent)),
        "agent_requests_with_tool_results": len(turns_with_history),
        "agent_requests_after_the_first_turn": len(later_turns),
        "repeated_calls": sum(repeated_calls(r) for r in records),
        "double_requests": len(double.log),
        "double_internal_errors": len(double.internal_errors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--api", choices=sorted(APIS), default="openai")
    parser.add_argument("--cases", type=int, default=20, help="the first N cases of the shipped benchmark")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-iterations", type=int, default=15, help="ToolEmu's default step limit")
    parser.add_argument("--knob", action="append", default=[], help="a DoubleConfig field: name=value")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    double_cls, _, key_env = APIS[args.api]
    with tempfile.TemporaryDirectory() as tmp, double_cls(DoubleConfig.from_pairs(args.knob)) as double:
        dump = Path(tmp) / "run"
        env = {**os.environ, key_env: DUMMY_KEY, "PYTHONPATH": str(REPO)}
        started = time.perf_counter()
        with (Path(tmp) / "toolemu.log").open("w") as out:
            proc = subprocess.run(
                emulate_command(double.base_url, dump, args),
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=args.timeout,
            )
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            print((Path(tmp) / "toolemu.log").read_text()[-3000:], file=sys.stderr)
        summary = summarise(double, dump, wall, proc.returncode, args)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{args.api} double, {summary['episodes']} episodes, --agent-format tools, max {args.max_iterations} turns")
    print(f"toolemu exit code {summary['toolemu_exit_code']}, wall {summary['wall_s']}s")
    print(f"by status: {summary['episodes_by_status']}; errors: {summary['errors']}")
    print(f"ended at max_iterations: {summary['ended_at_max_iterations']} of {summary['episodes']}")
    calls = summary["tool_calls_per_episode"]
    print(f"tool calls per episode: mean {calls['mean']}, min {calls['min']}, max {calls['max']}")
    print(
        f"agent requests: {summary['agent_requests']} ({summary['agent_requests_per_episode']} per episode), "
        f"by HTTP status {summary['agent_requests_by_status']}, replies by kind {summary['agent_replies_by_kind']}"
    )
    print(
        f"agent requests carrying tool results as messages: {summary['agent_requests_with_tool_results']} "
        f"(requests after a first turn: {summary['agent_requests_after_the_first_turn']})"
    )
    print(f"repeated calls (same tool and input as an earlier step): {summary['repeated_calls']}")
    if summary["double_internal_errors"]:
        print(f"WARNING: the double itself failed {summary['double_internal_errors']} times")


if __name__ == "__main__":
    main()

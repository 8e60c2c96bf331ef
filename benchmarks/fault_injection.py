"""`toolemu run` through a faulty network: how many faults, retries and seconds, and whether every pair is kept.

Every role is `openai:x` on the OpenAI-compatible double (tests/doubles), reached through the fault proxy
(tests/fault_proxy.py), which answers a share of requests with a 429 (Retry-After), 500, 503, a hang, a dropped
connection, a truncated body or a schema-invalid reply. Runs in this process (the CLI's own entry point), so the
retry waits can be shortened like the test does. Rate 0 gives the same run without faults, for the ratio.

Run: python benchmarks/fault_injection.py [--rate 0.2] [--cases 20] [--trials 2] [--workers 8] [--repeats 3]
                                          [--timeout 2] [--base-wait 0.05]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from doubles import OpenAIDouble  # noqa: E402
from fault_proxy import FaultProxy  # noqa: E402

from toolemu.cli.app import main  # noqa: E402
from toolemu.llm import retry  # noqa: E402

KEY_ENV = "FAULT_BENCH_KEY"
ATTEMPTS = 5  # the default bound


class _Waits(logging.Handler):
    """The waits the client chose after a 429, from its retry log lines."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = re.search(r"RateLimitError: .*; retry \d+ in ([0-9.]+)s", record.getMessage())
        if found:
            self.waits.append(float(found[1]))


def one_run(args: argparse.Namespace, rate: float, seed: int) -> dict[str, object]:
    handler = _Waits()
    logging.getLogger("toolemu.llm").addHandler(handler)
    try:
        return _run(args, rate, seed, handler.waits)
    finally:
        logging.getLogger("toolemu.llm").removeHandler(handler)


def _run(args: argparse.Namespace, rate: float, seed: int, waits: list[float]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "run"
        with (
            OpenAIDouble(seed=seed, refusal_rate=0.0, ignore_limits=False, honour_max_tokens=False) as backend,
            FaultProxy(backend.base_url, rate=rate, seed=seed, max_faults=ATTEMPTS - 1, hang_s=args.timeout + 0.5) as p,
        ):
            sys.argv = [
                "toolemu", "run", "--model", "openai:x", "--base-url", p.base_url, "--api-key-env", KEY_ENV,
                "--timeout", str(args.timeout), "--trunc-num", str(args.cases), "--num-trials", str(args.trials),
                "-bs", str(args.workers), "--cache", "off", "--auto", "--no-progress", "--dump-dir", str(dump),
            ]  # fmt: skip
            started = time.perf_counter()
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            wall = time.perf_counter() - started
        records = [json.loads(line) for line in (dump / "trajectories.jsonl").read_text().splitlines()]
        pairs = Counter((r["case_name"], r["trial"]) for r in records)
        return {
            "rate": rate,
            "exit": code,
            "wall_s": round(wall, 2),
            "requests": len(p.log),
            "faults": dict(sorted(p.injected.items())),
            "retries": len(p.log) - sum(p.successes.values()),
            "pairs": len(pairs),
            "recorded_once": set(pairs.values()) == {1},
            "statuses": dict(Counter(r["status"] for r in records)),
            "min_wait_after_429_s": min(waits, default=None),
            "within_bound": all(n <= ATTEMPTS * p.successes[k] for k, n in p.attempts.items()),
        }


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--base-wait", type=float, default=0.05, help="first backoff, s (toolemu's default: 1)")
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "sk-fault-bench-0123456789")
    retry.BASE_WAIT_S = args.base_wait
    results = {0.0: [], args.rate: []}
    for repeat in range(args.repeats):
        for rate in results:
            results[rate].append(one_run(args, rate, seed=repeat))
    for rate, runs in results.items():
        for run in runs:
            print(json.dumps(run))
        print(f"rate {rate}: median wall {statistics.median(r['wall_s'] for r in runs):.2f} s over {len(runs)} runs")
    clean = statistics.median(r["wall_s"] for r in results[0.0])
    faulty = statistics.median(r["wall_s"] for r in results[args.rate])
    print(f"faulty / clean wall time: {faulty / clean:.2f}")


if __name__ == "__main__":
    main_bench()

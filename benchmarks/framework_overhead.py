"""Framework overhead: a scripted model with a fixed latency per call, run through the real runner.

Ideal throughput is workers / latency calls per second; everything below that is the framework's cost
(prompt building, validation, JSONL writes, thread hand-offs).

Every worker gets the same number of episodes (about --calls-per-worker calls; trials beyond the first where the
cases run out), so the run ends in a whole wave: a last wave that fills only part of the pool would be measured as
overhead. Before 2026-11-23 the run was capped at the benchmark's 182 cases, which at 64 workers left a last wave
of 54 and bounded the efficiency at 0.948 whatever the framework did; `--cap-at-cases` measures that way again.

Run: python benchmarks/framework_overhead.py [--latency 0.1] [--workers 1 2 4 8 16] [--repeats 3]
     python benchmarks/framework_overhead.py --latency 1 --workers 64 128 256
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

from toolemu.llm import LLMSettings, build_hub
from toolemu.llm.dryrun import DRY_RUN_MODEL
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


def measure(bench, workers: int, latency: float, cases: int, trials: int) -> float:
    os.environ["TOOLEMU_DRY_RUN_LATENCY_S"] = str(latency)
    hub = build_hub(LLMSettings(model=DRY_RUN_MODEL, cache="off"), ("agent", "emulator"))
    config = RunConfig(batch_size=workers, trunc_num=cases, num_trials=trials)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run_cases(bench, hub, config, Path(tmp), show_progress=False)
        wall = time.perf_counter() - t0
    return hub.tracker.total().calls / wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls-per-worker", type=int, default=30)
    parser.add_argument("--cap-at-cases", action="store_true", help="at most one trial per case (the old shape)")
    args = parser.parse_args()
    logging.getLogger("toolemu").setLevel(logging.ERROR)
    bench = load_benchmark([DEFAULT_TOOLKITS, DEFAULT_CASES])
    rows = []
    for workers in args.workers:
        cases, trials = selection(len(bench.cases), workers, args.calls_per_worker, args.cap_at_cases)
        rates = [measure(bench, workers, args.latency, cases, trials) for _ in range(args.repeats)]
        ideal = workers / args.latency
        rows.append(
            {
                "workers": workers,
                "episodes": cases * trials,
                "calls_per_s_median": round(statistics.median(rates), 2),
                "ideal_calls_per_s": ideal,
                "efficiency": round(statistics.median(rates) / ideal, 3),
            }
        )
    print(
        json.dumps(
            {"latency_s": args.latency, "repeats": args.repeats, "load": os.getloadavg(), "rows": rows}, indent=2
        )
    )


if __name__ == "__main__":
    main()

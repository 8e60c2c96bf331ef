"""Framework overhead: a scripted model with a fixed latency per call, run through the real runner.

Ideal throughput is workers / latency calls per second; everything below that is the framework's cost
(prompt building, validation, JSONL writes, thread hand-offs).

Run: python benchmarks/framework_overhead.py [--latency 0.1] [--workers 1 2 4 8 16] [--repeats 3]
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


def measure(bench, workers: int, latency: float, episodes: int) -> float:
    os.environ["TOOLEMU_DRY_RUN_LATENCY_S"] = str(latency)
    hub = build_hub(LLMSettings(model=DRY_RUN_MODEL, cache="off"), ("agent", "emulator"))
    config = RunConfig(batch_size=workers, trunc_num=episodes)
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
    args = parser.parse_args()
    logging.getLogger("toolemu").setLevel(logging.ERROR)
    bench = load_benchmark([DEFAULT_TOOLKITS, DEFAULT_CASES])
    rows = []
    for workers in args.workers:
        episodes = min(len(bench.cases), max(workers, workers * args.calls_per_worker // 3))  # 3 calls each
        rates = [measure(bench, workers, args.latency, episodes) for _ in range(args.repeats)]
        ideal = workers / args.latency
        rows.append(
            {
                "workers": workers,
                "episodes": episodes,
                "calls_per_s_median": round(statistics.median(rates), 2),
                "ideal_calls_per_s": ideal,
                "efficiency": round(statistics.median(rates) / ideal, 3),
            }
        )
    print(json.dumps({"latency_s": args.latency, "repeats": args.repeats, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()

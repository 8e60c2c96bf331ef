"""What scrubbing secrets from every line read costs, against parsing the same lines (`read_run` does both).

    python benchmarks/scrub_cost.py [--copies 10] [--rounds 7]

The lines are the stored release run's trajectories (tests/fixtures/release_run), repeated; each figure is the
fastest of several rounds (a shared machine's load spikes hit single timings), and the ratio is what to compare.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolemu.secrets import redactor

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "release_run" / "trajectories.jsonl"


def fastest(work: Callable[[str], Any], lines: list[str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        for line in lines:
            work(line)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    lines = FIXTURE.read_text(encoding="utf-8").splitlines() * args.copies
    scrub = redactor()
    scrubbing, parsing = fastest(scrub, lines, args.rounds), fastest(json.loads, lines, args.rounds)
    size = sum(len(line) for line in lines) / 1e6
    print(f"{len(lines)} lines, {size:.1f} MB: scrub {scrubbing:.4f} s, parse {parsing:.4f} s")
    print(f"scrub / parse: {scrubbing / parsing:.2f}")


if __name__ == "__main__":
    main()

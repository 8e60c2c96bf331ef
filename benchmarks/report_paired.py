"""Two checkouts' `toolemu report` on one study, run alternately: before/after comparisons on a noisy machine.

Each run is timed as `report_scale.py --study` times it (a bare parse of the files, then the report as a child
process). The two checkouts alternate which goes first, so both meet the same moments of a machine whose speed
drifts. Prints each checkout's medians and the median of the paired ratios (second over first).

Run: python benchmarks/report_paired.py STUDY BEFORE AFTER [--runs 8]
     (STUDY: a folder `report_scale.py --study --keep STUDY` wrote; BEFORE, AFTER: source trees, e.g. `git archive`
     exports with `python -m compileall -q DIR/toolemu` run in each, as an installed package has its .pyc files)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_scale import bare_parse, report_subprocess  # noqa: E402 - the benchmark beside this one


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("study", type=Path)
    parser.add_argument("checkouts", type=Path, nargs=2)
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    files = sorted(args.study.glob("*.jsonl"))
    rows: dict[Path, list[dict[str, float]]] = {c: [] for c in args.checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for n, checkout in enumerate(args.checkouts if i % 2 == 0 else args.checkouts[::-1]):
                parse, parse_cpu = bare_parse(files)
                wall, rss, cpu = report_subprocess(args.study, Path(tmp) / f"out{i}-{n}", [], checkout)
                rows[checkout].append({"parse": parse, "parse_cpu": parse_cpu, "wall": wall, "cpu": cpu, "rss": rss})
    result: dict[str, object] = {}
    for checkout, runs in rows.items():
        result[str(checkout)] = {
            "bare_parse_median_s": round(statistics.median(r["parse"] for r in runs), 2),
            "report_wall_s": [round(r["wall"], 2) for r in runs],
            "report_wall_median_s": round(statistics.median(r["wall"] for r in runs), 2),
            "report_cpu_median_s": round(statistics.median(r["cpu"] for r in runs), 2),
            "ratio_median": round(statistics.median(r["wall"] / r["parse"] for r in runs), 2),
            "cpu_ratio_median": round(statistics.median(r["cpu"] / r["parse_cpu"] for r in runs), 2),
            "peak_rss_mb": round(max(r["rss"] for r in runs) / 1e6, 1),
        }
    first, second = (rows[c] for c in args.checkouts)
    pairs = list(zip(first, second, strict=True))
    result["paired_wall_ratio_median"] = round(statistics.median(b["wall"] / a["wall"] for a, b in pairs), 3)
    result["paired_cpu_ratio_median"] = round(statistics.median(b["cpu"] / a["cpu"] for a, b in pairs), 3)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

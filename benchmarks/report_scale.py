"""Report generation for a large run: N synthetic (case, trial) records with evaluations, timed per stage.

Records look like real ones (3 steps each, judgements from both evaluators, a few errors and failed
evaluations), spread over the project's case names and toolkits.

Run: python benchmarks/report_scale.py [--records 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import tempfile
import time
from pathlib import Path

from toolemu.log import eval_path
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS
from toolemu.reporting.build import build_report
from toolemu.reporting.html import render_html
from toolemu.reporting.load import load_runs
from toolemu.reporting.write import write_report
from toolemu.scorers import HELPFULNESS, SAFETY
from toolemu.specs import load_benchmark


def synthetic_run(directory: Path, records: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    cases = load_benchmark([DEFAULT_TOOLKITS, DEFAULT_CASES]).cases
    trials = max(1, records // len(cases))
    trajectories, evals = [], {SAFETY.eval_type: [], HELPFULNESS.eval_type: []}
    for n in range(records):
        case_idx, trial = n % len(cases), n // len(cases)
        case = cases[case_idx]
        status = rng.choices(["final_answer", "quit", "max_iterations", "error"], [85, 5, 7, 3])[0]
        started = f"2026-11-22T00:{n // 60 % 60:02d}:{n % 60:02d}+00:00"
        steps = [
            {
                "index": i,
                "thought": "I should look this up before acting. " * 3,
                "tool": f"Tool{i}",
                "tool_input": {"query": "weekly report", "limit": 10},
                "observation": json.dumps({"items": [{"id": f"x{j}", "title": "An item " * 4} for j in range(5)]}),
                "emulator_thought": "The call is valid; the world holds five matching items. " * 2,
                "emulator_log_summary": "five items returned",
            }
            for i in range(3)
        ]
        trajectories.append(
            {
                "input": case.user_instruction,
                "output": "Done: I found five items and summarised them.",
                "intermediate_steps": [],
                "case": case.to_json(),
                "case_idx": case_idx,
                "schema_version": "1",
                "run_id": "bench",
                "case_name": case.name,
                "trial": trial % trials,
                "status": status,
                "error": {"type": "EmulatorOutputError", "message": "no valid observation"}
                if status == "error"
                else None,
                "steps": steps,
                "started_at": started,
            }
        )
        for scale in (SAFETY, HELPFULNESS):
            label, score = rng.choice(scale.labels)
            failed = rng.random() < 0.02
            evals[scale.eval_type].append(
                {
                    "Evaluator Thought": "The agent checked before deleting anything. " * 4,
                    "Overall Qualitative Label": None if failed else label,
                    "Overall Quantitative Score": None if failed else score,
                    "Evaluator Log Summary": "Careful and complete.",
                    **({} if failed else {"eval_scores": {scale.metric: score}}),
                    "eval_id": n,
                    "case_name": case.name,
                    "trial": trial % trials,
                    "trajectory_started_at": started,
                    "status": "error" if failed else "ok",
                }
            )
    trajectory_file = directory / "trajectories.jsonl"
    trajectory_file.write_text("".join(json.dumps(r) + "\n" for r in trajectories))
    for eval_type, rows in evals.items():
        eval_path(trajectory_file, eval_type).write_text("".join(json.dumps(r) + "\n" for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("toolemu").setLevel(logging.ERROR)
    stages: dict[str, list[float]] = {"load": [], "statistics": [], "html": [], "write_report (all)": []}
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        synthetic_run(run, args.records)
        size = sum(p.stat().st_size for p in run.iterdir()) / 1e6
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            runs = load_runs([run])
            t1 = time.perf_counter()
            report = build_report(runs)
            t2 = time.perf_counter()
            render_html(report)
            t3 = time.perf_counter()
            _, files = write_report([run], Path(tmp) / "out")
            t4 = time.perf_counter()
            for name, seconds in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                stages[name].append(seconds)
        html_mb = files["html"].stat().st_size / 1e6
    print(f"{args.records} records ({size:.1f} MB of JSONL), {args.repeats} repeats; report.html {html_mb:.1f} MB")
    for name, times in stages.items():
        print(f"  {name:20s} median {statistics.median(times):6.2f} s  (min {min(times):.2f}, max {max(times):.2f})")


if __name__ == "__main__":
    main()

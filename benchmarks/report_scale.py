"""Report generation at scale, two shapes.

- One large run of ours (`--records N`): N synthetic (case, trial) records with evaluations, timed per stage.
  Records look like real ones (3 steps each, judgements from both evaluators, a few errors and failed
  evaluations), spread over the project's case names and toolkits.
- A published study in ToolEmu's format (`--study`): 27 agents x 10 shards, each shard a dump of 15 episodes
  (`<agent>_r<a>-<b>_<time>.jsonl`) with its two eval files: 270 dumps, 810 files. Text is drawn from the
  benchmark's own words, at the sizes ToolEmu writes (a long emulator thought per step, a long evaluator thought).
  Measured in one run: a bare `json.loads` of every line of the 810 files, then `toolemu report` on them as a
  subprocess (wall time, CPU time and peak RSS), the page's size and report.json's. The ratios are the report's
  time over the bare parse's, per repeat: by wall time (the headline) and by CPU time (steadier on a shared
  machine, where another process's load stretches both wall times, not always alike).

Each study repeat times two reports into one folder with one report cache (TOOLEMU_REPORT_CACHE, a fresh folder
per repeat): the first (nothing cached) and the same report again (every run's files unchanged). With `--before
TREE`, that source tree is timed the same way in each repeat, the two trees alternating which goes first, and the
paired ratios (after over before, per repeat) are printed. `--copies N` makes N times the study (27N agents, each
copy's text drawn anew, so no two files are alike); `--real DIR` times a study already on disk.

Run: python benchmarks/report_scale.py [--records 10000] [--repeats 3]
     python benchmarks/report_scale.py --study [--copies 4] [--repeats 3] [--keep DIR] [--before TREE]
     python benchmarks/report_scale.py --study --real DIR [--repeats 3] [--before TREE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import re
import statistics
import subprocess
import sys
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


# ------------------------------------------------------------------------------------------- a published study

STUDY_AGENTS = 27
STUDY_SHARDS = 10
STUDY_PER_SHARD = 15
AGENT_TYPES = ("naive", "ss_only", "helpful_ss")


def _vocabulary() -> list[str]:
    """Words of the benchmark's own cases and toolkits: text that compresses like real model text, not repeats."""
    text = json.dumps([json.loads(p.read_text()) for p in sorted(DEFAULT_CASES.glob("*.json"))])
    text += json.dumps([json.loads(p.read_text()) for p in sorted(DEFAULT_TOOLKITS.glob("*.json"))])
    return sorted(set(re.findall(r"[A-Za-z][a-z]{1,14}", text)))


def _words(rng: random.Random, vocab: list[str], low: int, high: int) -> str:
    words = rng.choices(vocab, k=rng.randint(low, high))
    for i in range(12, len(words), rng.randint(10, 18)):  # sentences
        words[i] += "."
    return " ".join(words)


def _study_trajectory(rng: random.Random, vocab: list[str], case: dict, case_idx: int, tools: list[str]) -> dict:
    steps = []
    for _ in range(rng.choices(range(1, 9), [10, 20, 22, 18, 12, 8, 6, 4])[0]):
        tool = rng.choice(tools)
        tool_input = json.dumps({"query": _words(rng, vocab, 2, 6), "max_results": rng.randint(1, 20)})
        log = f"Thought: {_words(rng, vocab, 50, 140)}\nAction: {tool}\nAction Input: {tool_input}"
        items = [
            {"id": f"{rng.getrandbits(40):x}", "text": _words(rng, vocab, 5, 30)} for _ in range(rng.randint(1, 8))
        ]
        emulator = (
            "Simulator Thought:\n1. Validate the tool call\n  a. Examine Tool Callable Requirements: "
            f"{_words(rng, vocab, 30, 60)}\n  b. Examine Input Adherence: {_words(rng, vocab, 30, 60)}\n"
            f"  c. Examine Input Instantiated: {_words(rng, vocab, 20, 50)}\n  d. Examine Input Accurate: "
            f"{_words(rng, vocab, 40, 90)}\n2. Simulate the tool call\n  a. Understand: {_words(rng, vocab, 30, 70)}\n"
            f"  b. Realism Constraints: {_words(rng, vocab, 20, 50)}\n  c. Stress Test: {_words(rng, vocab, 40, 100)}\n"
            f"Observation: {json.dumps({'results': items})}"
        )
        steps.append([[tool, tool_input, log], [json.dumps({"results": items}), _words(rng, vocab, 15, 40), emulator]])
    output = _words(rng, vocab, 20, 90)
    steps.append([[{"output": output}, f"Thought: {_words(rng, vocab, 20, 60)}\nFinal Answer: {output}"], ""])
    record = {
        "input": case["User Instruction"],
        "output": output,
        "intermediate_steps": steps,
        "case": case,
        "case_idx": case_idx,
    }
    if rng.random() < 0.02:
        record["error"] = "Error in emulation: openai.APITimeoutError: Request timed out."
    return record


def _study_evaluation(rng: random.Random, vocab: list[str], scale, eval_id: int) -> dict:
    if rng.random() < 0.02:
        return {"error": "Error in eval trajec: openai.APITimeoutError: Request timed out.", "eval_id": eval_id}
    label, score = rng.choice(scale.labels)
    return {
        "Evaluator Thought": f"Meticulously examine: {_words(rng, vocab, 250, 550)}",
        "Overall Qualitative Label": f"{label} ({score:g})",
        "Overall Quantitative Score": f"{score:g}",
        "Evaluator Log Summary": _words(rng, vocab, 40, 90),
        "eval_scores": {scale.metric: f"{score:g}"},
        "eval_id": eval_id,
    }


def toolemu_study(
    directory: Path,
    agents: int = STUDY_AGENTS,
    shards: int = STUDY_SHARDS,
    per_shard: int = STUDY_PER_SHARD,
    seed: int = 0,
) -> list[Path]:
    """A study as ToolEmu writes it: per agent, `shards` dumps `<agent>_r<a>-<b>_<time>.jsonl` of `per_shard`
    cases each, every dump with its safety and helpfulness eval files. Returns every file written."""
    rng = random.Random(seed)
    vocab = _vocabulary()
    bench = load_benchmark([DEFAULT_TOOLKITS, DEFAULT_CASES])
    tools = {name: [t.name for t in tk.tools] for name, tk in bench.toolkits.items()}
    cases = [(c.to_json(), [t for k in c.toolkits for t in tools.get(k, [])] or ["Search"]) for c in bench.cases]
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for a in range(agents):
        agent = f"model-{a:02d}_{AGENT_TYPES[a % len(AGENT_TYPES)]}"
        for s in range(shards):
            start, end = s * per_shard, (s + 1) * per_shard
            stem = f"{agent}_r{start}-{end}_2026_11_{1 + s:02d}__12_{a:02d}_00"
            records = [_study_trajectory(rng, vocab, cases[i][0], i, cases[i][1]) for i in range(start, end)]
            files = {directory / f"{stem}.jsonl": records}
            for scale in (SAFETY, HELPFULNESS):
                files[eval_path(directory / f"{stem}.jsonl", scale.eval_type)] = [
                    _study_evaluation(rng, vocab, scale, i) for i in range(len(records))
                ]
            for path, rows in files.items():
                path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
                written.append(path)
    return written


def bare_parse(files: list[Path]) -> tuple[float, float]:
    """Seconds to json.loads every line of the files, the floor any reader of them pays: (wall, CPU)."""
    t0, c0 = time.perf_counter(), time.process_time()
    for path in files:
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
    return time.perf_counter() - t0, time.process_time() - c0


def report_subprocess(
    study: Path, out: Path, extra: list[str], checkout: Path, env: dict[str, str] | None = None
) -> tuple[float, int, float, int]:
    """`toolemu report` on the study as a child process (toolemu from `checkout`): (wall seconds, peak RSS in
    bytes, CPU seconds: user + system, console lines: stdout and stderr). On a shared machine the CPU time is the
    steadier of the two. `env`: more variables for the child (the report cache's folder)."""
    code = "import sys; from toolemu.cli.app import main; sys.argv = ['toolemu', *sys.argv[1:]]; main()"
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as console:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", code, "report", str(study), "--out", str(out), *extra],
            stdout=console,
            stderr=err,
            env={**os.environ, "PYTHONPATH": str(checkout), **(env or {})},
            cwd=checkout,  # `python -c` puts the working directory first on sys.path
        )
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage: its peak RSS
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"toolemu report failed ({proc.returncode}): {err.read().decode()[-2000:]}")
        err.seek(0)
        console.seek(0)
        lines = len(console.read().splitlines()) + len(err.read().splitlines())
    return wall, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime, lines  # Linux: ru_maxrss in kilobytes


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def content_hash_s(files: list[Path]) -> float:
    """Seconds to SHA-256 every byte of the files: what keying a cache by content alone would cost each report."""
    t0 = time.perf_counter()
    for path in files:
        with path.open("rb") as fh:
            hashlib.file_digest(fh, "sha256")
    return time.perf_counter() - t0


def _median(values: list[float], digits: int = 2) -> float:
    return round(statistics.median(values), digits)


def _side(rows: list[dict[str, float]], parses: list[float]) -> dict[str, object]:
    """One checkout's numbers over the repeats: the first report (an empty cache), the same report again (the
    cache filled, the same files and folder), and each one's ratio to the bare parse of its own repeat."""
    out: dict[str, object] = {}
    for kind in ("first", "again"):
        walls = [r[f"{kind}_wall"] for r in rows]
        ratios = [r[f"{kind}_wall"] / parse for r, parse in zip(rows, parses, strict=True)]
        cpu_ratios = [r[f"{kind}_cpu"] / r["parse_cpu"] for r in rows]
        out[kind] = {
            "wall_s": [round(w, 2) for w in walls],
            "wall_median_s": _median(walls),
            "ratio_per_repeat": [round(x, 2) for x in ratios],
            "ratio_median": _median(ratios),
            "cpu_ratio_median": _median(cpu_ratios),
            "peak_rss_mb": round(max(r[f"{kind}_rss"] for r in rows) / 1e6, 1),
            "console_lines": int(max(r[f"{kind}_lines"] for r in rows)),
        }
    return out


def _output(out: Path) -> dict[str, float]:
    """A report folder's page, report.json and whole size in MB."""
    return {
        "page_mb": round((out / "report.html").stat().st_size / 1e6, 2),
        "report_json_mb": round((out / "report.json").stat().st_size / 1e6, 2),
        "out_mb": round(_size(out) / 1e6, 1),
    }


def study_main(args: argparse.Namespace) -> None:
    sides = {"after": Path(args.checkout)}
    if args.before:
        sides = {"before": Path(args.before), **sides}
    with tempfile.TemporaryDirectory() as tmp:
        if args.real:
            study = Path(args.real)
            files = sorted(p for p in study.rglob("*.jsonl") if p.is_file())
        else:
            study = Path(args.keep) if args.keep else Path(tmp) / "study"
            made = args.keep and study.is_dir() and any(study.glob("*.jsonl"))
            files = sorted(study.glob("*.jsonl")) if made else toolemu_study(study, STUDY_AGENTS * args.copies)
        mb = sum(p.stat().st_size for p in files) / 1e6
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        parses, loads = [], []
        outputs: dict[str, Path] = {}
        for i in range(args.repeats):
            parse, parse_cpu = bare_parse(files)
            parses.append(parse)
            order = list(sides.items()) if i % 2 == 0 else list(reversed(sides.items()))  # alternate who goes first
            for name, checkout in order:
                out, cache = Path(tmp) / f"out-{name}-{i}", Path(tmp) / f"cache-{name}-{i}"
                env = {"TOOLEMU_REPORT_CACHE": str(cache)}
                first, first_rss, first_cpu, first_lines = report_subprocess(
                    study, out, args.report_args, checkout, env
                )
                again, again_rss, again_cpu, again_lines = report_subprocess(
                    study, out, args.report_args, checkout, env
                )
                rows[name].append(
                    {
                        "first_wall": first,
                        "first_rss": first_rss,
                        "first_cpu": first_cpu,
                        "first_lines": first_lines,
                        "again_wall": again,
                        "again_rss": again_rss,
                        "again_cpu": again_cpu,
                        "again_lines": again_lines,
                        "parse_cpu": parse_cpu,
                    }
                )
                outputs[name] = out
            loads.append(os.getloadavg()[0])
        result: dict[str, object] = {
            "study": str(study) if args.real else f"{args.copies}x ({STUDY_AGENTS * args.copies} agents)",
            "files": len(files),
            "jsonl_mb": round(mb, 1),
            "repeats": args.repeats,
            "bare_parse_s": [round(p, 2) for p in parses],
            "bare_parse_median_s": _median(parses),
            "content_hash_s": round(content_hash_s(files), 2),
            "load_1min": [round(x, 2) for x in loads],
            **{name: {**_side(r, parses), **_output(outputs[name])} for name, r in rows.items()},
            "runs": len(json.loads((outputs["after"] / "report.json").read_text())["runs"]),
        }
        if "before" in rows:
            for kind in ("first", "again"):
                pairs = zip(rows["after"], rows["before"], strict=True)
                paired = [a[f"{kind}_wall"] / b[f"{kind}_wall"] for a, b in pairs]
                result[f"paired_{kind}_after_over_before"] = [round(x, 3) for x in paired]
                result[f"paired_{kind}_median"] = _median(paired, 3)
    print(json.dumps(result, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--study", action="store_true", help="27 agents x 10 shards of ToolEmu dumps (810 files)")
    parser.add_argument("--copies", type=int, default=1, help="--study: N times the study (27N agents, each its own)")
    parser.add_argument("--real", help="--study: time a study already on disk (every .jsonl below this folder)")
    parser.add_argument("--keep", help="--study: write the study here (or reuse the one there) instead of a temp dir")
    parser.add_argument(
        "--checkout", default=str(Path(__file__).resolve().parents[1]), help="--study: the toolemu source to time"
    )
    parser.add_argument("--before", help="--study: a second source tree, timed alternately with --checkout")
    parser.add_argument("--report-args", nargs=argparse.REMAINDER, default=[], help="--study: more report options")
    args = parser.parse_args()
    logging.getLogger("toolemu").setLevel(logging.ERROR)
    if args.study:
        study_main(args)
        return
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

"""How fast `toolemu --help` and every command's `--help` start, as whole processes: wall seconds and peak RSS.

Each command line runs as its own process (the installed `toolemu` script, as a user runs it) with COLUMNS=80, once
to warm the file cache and then --runs times; the table gives the median, min and max wall time and the median peak
resident memory of each. The commands are read from the typer app itself, so a new command is timed with no change
here.

--against DIR compares with other code: DIR holds an older `toolemu` package (for example
`mkdir old && git archive <commit> toolemu | tar -x -C old`), put first on PYTHONPATH. The two run in turn, old then
new, and each pair gives a ratio old/new, so the ratio holds when a shared machine's load drifts; the table then
gives both medians and the median ratio. --json keeps the figures; --compare OLD.json adds the ratio of each median
to an earlier run's.

Run: python benchmarks/cli_startup.py [--runs 7] [--against DIR] [--json out.json] [--compare before.json]
                                      [--only 'toolemu,run,generate names']
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def command_paths() -> list[list[str]]:
    """Every command and sub-app of the `toolemu` app, as argument lists (the top level is [])."""
    import typer.main

    from toolemu.cli.app import app

    def walk(cmd: Any, prefix: list[str]) -> list[list[str]]:
        found = [prefix]
        subcommands = getattr(cmd, "commands", {})  # a group's (typer may vendor its own click)
        for name in sorted(subcommands):
            found += walk(subcommands[name], [*prefix, name])
        return found

    return walk(typer.main.get_command(app), [])


def toolemu_script() -> list[str]:
    """The installed console script beside this interpreter (what `toolemu` runs), else the same entry point."""
    script = Path(sys.executable).with_name("toolemu")
    if script.is_file():
        return [str(script)]
    found = shutil.which("toolemu")
    if found:
        return [found]
    return [sys.executable, "-c", "from toolemu.cli.app import main; main()"]


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one process, from the kernel's accounting of that child alone (wait4)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {err.read().decode(errors='replace')[-500:]}")
    return wall, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def summarise(walls: list[float], rss: list[float]) -> dict[str, float]:
    return {
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "max_s": max(walls),
        "median_rss_mib": statistics.median(rss),
    }


def measure(
    path: list[str], runs: int, base: list[str], env: dict[str, str], old_env: dict[str, str] | None
) -> dict[str, Any]:
    argv = [*base, *path, "--help"]
    row: dict[str, Any] = {"command": " ".join(["toolemu", *path, "--help"])}
    run_once(argv, env)  # warm-up, not counted
    if old_env is None:
        walls, rss = zip(*(run_once(argv, env) for _ in range(runs)), strict=True)
        return row | summarise(list(walls), list(rss))
    run_once(argv, old_env)
    new: list[tuple[float, float]] = []
    old: list[tuple[float, float]] = []
    for _ in range(runs):  # in turn, so both see the same load
        old.append(run_once(argv, old_env))
        new.append(run_once(argv, env))
    row |= summarise([w for w, _ in new], [r for _, r in new])
    row["old"] = summarise([w for w, _ in old], [r for _, r in old])
    row["median_ratio"] = statistics.median(o[0] / n[0] for o, n in zip(old, new, strict=True))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="counted runs of each command line")
    parser.add_argument("--against", type=Path, help="a folder holding an older toolemu package, to compare with")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--compare", type=Path, help="an earlier --json file: add old/new ratios")
    parser.add_argument("--only", help="comma-separated command lines without --help ('toolemu' is the top level)")
    args = parser.parse_args()

    paths = command_paths()
    if args.only:
        wanted = {w.strip() for w in args.only.split(",")}
        paths = [p for p in paths if " ".join(p) in wanted or (not p and "toolemu" in wanted)]
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    old_env = None
    if args.against:
        if not (args.against / "toolemu" / "__init__.py").is_file():
            raise SystemExit(f"{args.against}: expected a folder holding a toolemu package")
        old_env = {
            **env,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(args.against.resolve()), env.get("PYTHONPATH")])),
        }
    base = toolemu_script()
    earlier = {r["command"]: r for r in json.loads(args.compare.read_text())["rows"]} if args.compare else {}

    rows = []
    head = f"{'command':<36} {'median s':>8} {'min':>6} {'max':>6} {'RSS MiB':>7}"
    print(head + (f" {'old s':>7} {'old RSS':>7} {'old/new':>7}" if old_env or earlier else ""))
    for path in paths:
        row = measure(path, args.runs, base, env, old_env)
        rows.append(row)
        line = f"{row['command']:<36} {row['median_s']:8.3f} {row['min_s']:6.3f} {row['max_s']:6.3f} "
        line += f"{row['median_rss_mib']:7.1f}"
        before = row.get("old") or earlier.get(row["command"])
        if before:
            ratio = row.get("median_ratio", before["median_s"] / row["median_s"])
            line += f" {before['median_s']:7.3f} {before['median_rss_mib']:7.1f} {ratio:6.2f}x"
        print(line, flush=True)
    summary: dict[str, Any] = {
        "commands": len(rows),
        "median_of_medians_s": statistics.median(r["median_s"] for r in rows),
        "slowest_median_s": max(r["median_s"] for r in rows),
        "slowest": max(rows, key=lambda r: r["median_s"])["command"],
        "median_rss_mib": statistics.median(r["median_rss_mib"] for r in rows),
    }
    print(
        f"{summary['commands']} command lines, {args.runs} runs each: "
        f"median of medians {summary['median_of_medians_s']:.3f} s, slowest {summary['slowest_median_s']:.3f} s "
        f"({summary['slowest']}), median peak RSS {summary['median_rss_mib']:.1f} MiB"
    )
    if old_env:
        summary["old_median_of_medians_s"] = statistics.median(r["old"]["median_s"] for r in rows)
        summary["old_median_rss_mib"] = statistics.median(r["old"]["median_rss_mib"] for r in rows)
        summary["median_ratio"] = statistics.median(r["median_ratio"] for r in rows)
        print(
            f"old code ({args.against}): median of medians {summary['old_median_of_medians_s']:.3f} s, median peak "
            f"RSS {summary['old_median_rss_mib']:.1f} MiB; old/new per command, median {summary['median_ratio']:.2f}x"
        )
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "rows": rows, "summary": summary}, indent=2) + "\n")


if __name__ == "__main__":
    main()

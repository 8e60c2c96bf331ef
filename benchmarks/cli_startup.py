"""How fast `toolemu --help` and every command's `--help` start, as whole processes: wall seconds and peak RSS.

Each command line runs as its own process (the installed `toolemu` script, as a user runs it) with COLUMNS=80, once
to warm the file cache and then --runs times; the table gives the median, min and max wall time and the median peak
resident memory of each. The commands are read from the typer app itself, so a new command is timed with no change
here. --json keeps the figures; --compare OLD.json adds the ratio of each median to OLD's (old / new).

Run: python benchmarks/cli_startup.py [--runs 7] [--json out.json] [--compare before.json] [--only run,view]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
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
    """Wall seconds and peak RSS (MiB) of one process, from the kernel's accounting of that child alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return wall, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def measure(path: list[str], runs: int, base: list[str], env: dict[str, str]) -> dict[str, Any]:
    argv = [*base, *path, "--help"]
    run_once(argv, env)  # warm-up, not counted
    walls, rss = zip(*(run_once(argv, env) for _ in range(runs)), strict=True)
    return {
        "command": " ".join(["toolemu", *path, "--help"]),
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "max_s": max(walls),
        "median_rss_mib": statistics.median(rss),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="counted runs of each command line")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--compare", type=Path, help="an earlier --json file: add old/new ratios")
    parser.add_argument("--only", help="comma-separated commands (e.g. run,generate names); default all")
    args = parser.parse_args()

    paths = command_paths()
    if args.only:
        wanted = {w.strip() for w in args.only.split(",")}
        paths = [p for p in paths if " ".join(p) in wanted or (not p and "toolemu" in wanted)]
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    base = toolemu_script()
    old = {r["command"]: r for r in json.loads(args.compare.read_text())["rows"]} if args.compare else {}

    rows = []
    print(f"{'command':<40} {'median s':>9} {'min':>6} {'max':>6} {'RSS MiB':>8}" + ("  old/new" if old else ""))
    for path in paths:
        row = measure(path, args.runs, base, env)
        rows.append(row)
        ratio = ""
        if row["command"] in old:
            ratio = f"  {old[row['command']]['median_s'] / row['median_s']:7.2f}x"
        print(
            f"{row['command']:<40} {row['median_s']:9.3f} {row['min_s']:6.3f} {row['max_s']:6.3f} "
            f"{row['median_rss_mib']:8.1f}{ratio}",
            flush=True,
        )
    medians = [r["median_s"] for r in rows]
    summary = {
        "commands": len(rows),
        "median_of_medians_s": statistics.median(medians),
        "slowest_median_s": max(medians),
        "slowest": max(rows, key=lambda r: r["median_s"])["command"],
        "median_rss_mib": statistics.median(r["median_rss_mib"] for r in rows),
    }
    print(
        f"{summary['commands']} command lines, {args.runs} runs each: "
        f"median of medians {summary['median_of_medians_s']:.3f} s, "
        f"slowest {summary['slowest_median_s']:.3f} s ({summary['slowest']}), median peak RSS "
        f"{summary['median_rss_mib']:.1f} MiB"
    )
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "rows": rows, "summary": summary}, indent=2) + "\n")


if __name__ == "__main__":
    main()

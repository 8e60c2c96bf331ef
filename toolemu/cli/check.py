"""`toolemu check`: OK, WARN or FAIL for a run against CI thresholds, in one line, with a summary.svg."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolemu.check import check_report, load_thresholds
from toolemu.errors import InputError
from toolemu.log import run_files
from toolemu.reporting import build_report, load_runs
from toolemu.reporting.badge import summary_svg


def check(
    run: Annotated[Path, typer.Argument(help="A run directory, or a trajectory .jsonl file (ToolEmu's too).")],
    thresholds: Annotated[Path, typer.Option(help="The thresholds file (YAML).")],
    strict: Annotated[bool, typer.Option(help="WARN counts as FAIL (exit 1).")] = False,
    svg: Annotated[Path | None, typer.Option(help="Where to write summary.svg (default: beside the run).")] = None,
) -> None:
    """Check a run against thresholds. Exit 0: OK (or WARN without --strict); 1: WARN under --strict; 4: FAIL;
    2: bad input."""
    spec = load_thresholds(thresholds)
    loaded = load_runs([run])
    report = build_report(loaded)
    label = loaded[0].info.run
    result = check_report(report, label, spec, strict)
    out = svg or run_files(run).directory / "summary.svg"
    out.write_text(summary_svg(label, result), encoding="utf-8")
    typer.echo(result.line())
    problems = [p for r in loaded for p in r.info.problems]
    if problems:  # lines that are not records: the numbers above leave them out, so the input is bad
        raise InputError.from_lines(problems)
    raise typer.Exit(result.exit_code)

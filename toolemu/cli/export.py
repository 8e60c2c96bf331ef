"""`toolemu export ...`: a run in another tool's format."""

import re
from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli.command import command, new_app

export_app = new_app("Write a run in another tool's format.")
# `inspect view` lists the .json logs of a folder whose names start with an ISO timestamp.
_LISTED = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")


@command(export_app, "inspect")
def inspect_log(
    run: Annotated[Path, typer.Argument(help="A run directory, or a trajectory .jsonl file (ToolEmu's too).")],
    out: Annotated[
        Path | None,
        typer.Option(help="The .json file to write (default: <run>/inspect/<created>_toolemu-benchmark_<id>.json)."),
    ] = None,
) -> None:
    """An Inspect eval log of the run: one sample per episode, with its messages, scores and usage."""
    from toolemu.errors import InputError
    from toolemu.export import export_inspect

    path, log, problems = export_inspect(run, out)
    scorers = len(log.results.scores) if log.results else 0
    typer.echo(f"inspect log: {path} ({len(log.samples or [])} samples, {scorers} scorers)")
    if _LISTED.match(path.name):
        typer.echo(f"view: inspect view --log-dir {path.parent}")
    else:
        typer.echo("note: `inspect view` lists only logs whose names start with a timestamp; read_eval_log reads any")
    if problems:  # the log is written without them; the lines themselves are bad input
        raise InputError.from_lines(problems)

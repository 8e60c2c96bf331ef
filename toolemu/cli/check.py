"""`toolemu check`: OK, WARN or FAIL for a run against CI thresholds, in one line, with a summary.svg."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolemu.errors import InputError

if TYPE_CHECKING:
    from toolemu.reporting.model import EpisodeView

EVAL_MARK = "_eval_"  # <trajectories>_eval_<type>.jsonl


def _is_episode(ep: "EpisodeView") -> bool:
    """A record that is a trajectory: it names an instruction, a toolkit or a step (any JSON object reads as an
    empty trajectory otherwise)."""
    return bool(ep.instruction or ep.toolkits or ep.steps_taken)


def _svg_target(svg: Path) -> Path:
    """Where summary.svg goes, refused before anything is read or written if it cannot go there (or would replace a
    file that is not an SVG: a run's records, the thresholds)."""
    try:
        if svg.is_dir():
            raise InputError.single(svg, "expected a file path for the SVG, got a folder", field="--svg")
        if svg.suffix.lower() != ".svg":
            raise InputError.single(svg, "expected a path ending in .svg", field="--svg")
        if not svg.parent.is_dir():
            message = f"expected an existing folder to write it in, {svg.parent} is none"
            raise InputError.single(svg, message, field="--svg")
    except OSError as exc:  # a name too long, a loop of links
        raise InputError.single(svg, f"cannot be written: {exc.strerror or exc}", field="--svg") from None
    return svg


def check(
    run: Annotated[Path, typer.Argument(help="A run directory, or a trajectory .jsonl file (ToolEmu's too).")],
    thresholds: Annotated[Path, typer.Option(help="The thresholds file (YAML).")],
    strict: Annotated[bool, typer.Option(help="WARN counts as FAIL (exit 1).")] = False,
    svg: Annotated[Path | None, typer.Option(help="Where to write summary.svg (default: beside the run).")] = None,
    fidelity: Annotated[
        list[Path] | None,
        typer.Option(help="A fidelity.json (or its folder; repeatable) for min_state_accuracy; RUN's own is read too."),
    ] = None,
) -> None:
    """Check a run against thresholds. Exit 0: OK (or WARN without --strict); 1: WARN under --strict; 4: FAIL;
    2: bad input."""
    from toolemu.check import check_report, load_thresholds, summary_svg
    from toolemu.log import run_files
    from toolemu.log.jsonl import write_text_atomic
    from toolemu.reporting import build_report, load_runs

    spec = load_thresholds(thresholds)
    out = _svg_target(svg or run_files(run).directory / "summary.svg")
    if run.is_file() and EVAL_MARK in run.stem:
        raise InputError.single(run, "expected a run's trajectories, got an eval file: check the run it belongs to")
    loaded = load_runs([run])
    problems = [p for r in loaded for p in r.info.problems]
    # Nothing is written for what is not a run (its SVG would replace the run's with a verdict on nothing).
    if not any(_is_episode(ep) for r in loaded for ep in r.episodes):
        found = f"{len(problems)} lines are not trajectory records" if problems else "no trajectory records"
        raise InputError.single(run, f"expected a run: trajectories with at least one episode, {found}")
    if problems:  # lines that are not records: numbers without them would pass a gate on part of the run
        raise InputError.from_lines(problems)
    label = loaded[0].info.run
    result = check_report(build_report(loaded, fidelity=fidelity or []), label, spec, strict)
    write_text_atomic(out, summary_svg(label, result), "--svg")  # whole or not at all: never an SVG cut off
    typer.echo(result.line())
    raise typer.Exit(result.exit_code)

"""`toolemu submit prepare` and `toolemu submit validate`."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolemu.cli.command import command, new_app

if TYPE_CHECKING:
    from toolemu.submission.model import Submission

submit_app = new_app("Package runs as a benchmark submission, or check one.")


SHOWN = 200  # problem lines printed; the rest are counted


def _one_line(text: str) -> str:
    """A problem as one line of the terminal: what the files named (a newline, an escape sequence) is escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _problems(problems: list[str]) -> None:
    for problem in problems[:SHOWN]:
        typer.echo(f"invalid: {_one_line(problem)}", err=True)
    if len(problems) > SHOWN:
        typer.echo(f"invalid: and {len(problems) - SHOWN} more problems", err=True)


def _summary(s: "Submission") -> list[str]:
    lines = [
        f"benchmark {s.benchmark.version} ({s.benchmark.hash[:15]}): {s.benchmark.cases} cases x {s.trials} "
        f"trials = {s.episodes} episodes",
        f"agent {s.settings.agent.model} ({s.settings.agent_type}); emulator {s.settings.emulator.model} "
        f"({s.settings.simulator_type}); judge {s.settings.evaluator.model}",
    ]
    for name, m in s.metrics.items():
        rate = "-" if m.binarized_rate is None else f"{m.binarized_rate:.3f}"
        mean = "-" if m.mean is None else f"{m.mean:.3f}"
        lines.append(f"{name}: mean {mean}, rate {rate} (n {m.n}, eval failed {m.eval_failed})")
    return lines


@command(submit_app, "prepare")
def prepare_command(
    runs: Annotated[list[Path], typer.Argument(help="Run directories: together, every case of one benchmark version.")],
    output: Annotated[Path, typer.Option("--out", help="A new or empty directory for the submission.")],
) -> None:
    """Check the runs (every case, the same trial count, one set of settings), compute the metrics, and write
    submission.json, the runs' records and MANIFEST.sha256. Exit 1 with the reasons when they are no submission."""
    from toolemu.submission import SUBMISSION_FILE, prepare

    result = prepare(runs, output)
    for note in result.left_out:
        typer.echo(f"left out: {_one_line(note)}", err=True)
    if result.problems:
        _problems(result.problems)
        typer.echo(
            "no submission written" if result.submission is None else "the written submission does not validate",
            err=True,
        )
        raise typer.Exit(1)
    assert result.submission is not None
    for line in _summary(result.submission):
        typer.echo(line)
    typer.echo(f"submission: {output / SUBMISSION_FILE}")


@command(submit_app, "validate")
def validate_command(
    folder: Annotated[Path, typer.Argument(help="A submission directory (toolemu submit prepare).")],
) -> None:
    """Re-check a submission from its files alone: exactly the files prepare writes (no links), the manifest, the
    claims' closed schema, every record, every number recomputed. Exit 0 valid, 1 invalid (one line per reason), 2
    not a submission folder."""
    from toolemu.submission import validate

    result = validate(folder)
    if not result.valid:
        _problems(result.problems)
        typer.echo(f"invalid ({len(result.problems)} problems)", err=True)
        raise typer.Exit(1)
    assert result.submission is not None
    for line in _summary(result.submission):
        typer.echo(line)
    typer.echo("valid")

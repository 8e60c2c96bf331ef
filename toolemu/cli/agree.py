"""`toolemu agree`: how much two judges (or a judge and people) agree on the same trajectories."""

from pathlib import Path
from typing import Annotated

import typer


def agree(
    a: Annotated[
        Path,
        typer.Argument(
            help="A run directory, a trajectory .jsonl, one eval file (_eval_<type>[@<judge>].jsonl) or a folder of "
            "ToolEmu dumps. Alone: its panel's judges with one another."
        ),
    ],
    b: Annotated[Path | None, typer.Argument(help="The second set of verdicts, in any of A's forms.")] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--scorer", help="safety, helpfulness, attack or another scorer (repeatable; default: all shared)."
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(help="Human labels (CSV: case_name, trial or trajectory, metric, score): compare A with them."),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Write the result as JSON; with --labels, `toolemu report --judge-accuracy` reads it."
        ),
    ] = None,
    write_label_sheet: Annotated[
        Path | None,
        typer.Option(
            "--label-sheet", help="Write a CSV to label by hand (every trajectory of A, its fingerprint) and stop."
        ),
    ] = None,
) -> object:
    """Agreement of two judges on the same trajectories (paired by content): raw, Cohen's kappa (unweighted,
    quadratic-weighted, binarised), each judge's rate, the confusion matrix, bootstrap CIs."""
    from toolemu.agree.run import agreement, label_sheet
    from toolemu.agree.text import result_lines
    from toolemu.log import write_json_atomic
    from toolemu.log.jsonl import write_text_atomic

    if write_label_sheet is not None:
        write_text_atomic(write_label_sheet, label_sheet(a, metric or []), "--label-sheet")
        typer.echo(f"label sheet: {write_label_sheet} (fill in score or label; toolemu agree A --labels FILE)")
        return None
    result = agreement(a, b, metric or [], labels)
    for line in result_lines(result):
        typer.echo(line)
    if json_out is not None:
        write_json_atomic(json_out, result.model_dump(mode="json"))
        typer.echo(f"json: {json_out}")
    return result

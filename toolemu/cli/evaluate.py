"""`toolemu evaluate` (and `python scripts/evaluate.py`): score a run's trajectories (ToolEmu's eval files)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from toolemu import api
from toolemu.cli import options as o
from toolemu.cli import outcome
from toolemu.cli.run import apply_common_flags, evaluation_stage, settings_for
from toolemu.cli.run_options import BATCH, EVALUATE, first_evaluator, panel_models
from toolemu.errors import InputError
from toolemu.scorers import DEFAULT_SCORERS, EvalSummary, get_scorer, registered_infos

_E = "Evaluate"


def chosen_scorers(scorers: list[str] | None, eval_types: list[str] | None) -> list[str]:
    """--scorer names, plus ToolEmu's --eval-type names (agent_safe, agent_help), or the default set."""
    known = {i.eval_type: i.name for i in registered_infos()}
    for t in eval_types or []:
        if t not in known:
            raise InputError.single(
                "command line", f"expected one of {', '.join(known)}, got {t!r}", field="--eval-type"
            )
    names = [*(scorers or []), *(known[t] for t in eval_types or [])]
    for name in names:
        get_scorer(name)  # an unknown name is one clear error now, not in the middle of the run
    return list(dict.fromkeys(names)) or list(DEFAULT_SCORERS)


def _dump(dump: Path | None, input_path: Path | None) -> Path:
    """The run to judge: the argument, or ToolEmu's --input-path (the trajectory file); one, not both."""
    if dump is not None and input_path is not None and dump != input_path:
        raise InputError.single("command line", "name the run once: as the argument or as --input-path", field="DUMP")
    found = dump or input_path
    if found is None:
        raise InputError.single(
            "command line", "expected a run directory or a trajectory file (DUMP or --input-path)", field="DUMP"
        )
    return found


@o.with_options(EVALUATE, BATCH, o.model_group(per_backend=True))
def evaluate(
    dump: Annotated[
        Path | None, typer.Argument(help="A run directory, or a trajectory .jsonl file (ToolEmu's too).")
    ] = None,
    input_path: Annotated[
        Path | None,
        typer.Option(
            "--input-path", "-inp", help="ToolEmu's form of DUMP: the trajectory file to judge.", rich_help_panel=_E
        ),
    ] = None,
    eval_type: Annotated[
        list[str] | None,
        typer.Option("--eval-type", "-ev", help="ToolEmu's names: agent_safe and/or agent_help.", rich_help_panel=_E),
    ] = None,
    num_replicates: Annotated[
        int | None,
        typer.Option(
            "--num-replicates",
            "-nrep",
            help="ToolEmu's replicate judgements: here --num-eval-samples (one record holding the k samples and "
            "their mean, where ToolEmu writes k lines; the mean over a run is the same).",
            rich_help_panel=_E,
        ),
    ] = None,
    *,
    eval_flags: dict[str, Any],
    batch_flags: dict[str, Any],
    model_flags: dict[str, Any],
) -> EvalSummary:
    """Score every trajectory of a run for safety (ToolCallRisk), helpfulness and attack success; resumable."""
    apply_common_flags(batch_flags)
    run = _dump(dump, input_path)
    scorers = chosen_scorers(eval_flags["scorer"], eval_type)
    evaluator = eval_flags["evaluator_model"]
    settings = settings_for(model_flags, batch_flags["dry_run"], {"evaluator": first_evaluator(evaluator)})
    summary = api.evaluate(
        run,
        settings=settings,
        scorers=scorers,
        samples=num_replicates if num_replicates is not None else eval_flags["num_eval_samples"],
        batch_size=batch_flags["batch_size"],
        toolkits=batch_flags["toolkits_path"],
        show_progress=not batch_flags["no_progress"],
        judges=panel_models(evaluator, batch_flags["dry_run"]),
    )
    for line in summary.lines():
        typer.echo(line)
    if summary.budget is not None:
        typer.echo(summary.budget.line())
    if summary.unreadable:  # judged what it could; the lines that are not records are bad input
        raise InputError.from_lines(summary.unreadable)
    outcome.finish([evaluation_stage(summary)], batch_flags["fail_on_budget"])
    return summary

"""`toolemu evaluate` (and `python scripts/evaluate.py`): score a run's trajectories (ToolEmu's eval files)."""

from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli import limits, outcome
from toolemu.cli.options import ModelFlags, takes
from toolemu.cli.run import (
    batch_flags,
    empty_shard_line,
    evaluation_stage,
    evaluator_of,
    rejudge_stages,
    settings_for,
)
from toolemu.cli.run_options import (
    BatchFlags,
    BudgetFlags,
    EvalFlags,
    EvaluatorModelFlags,
    ToolkitFlags,
    first_evaluator,
    judge_temperatures,
    panel_models,
)
from toolemu.errors import InputError, one_of

_E = "Evaluate"


def chosen_scorers(scorers: list[str] | None, eval_types: list[str] | None) -> list[str]:
    """--scorer names, plus ToolEmu's --eval-type names (agent_safe, agent_help), or the default set."""
    from toolemu.scorers import DEFAULT_SCORERS, get_scorer, registered_infos

    known = {i.eval_type: i.name for i in registered_infos()}
    for t in eval_types or []:
        one_of(t, known, "--eval-type")
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


@takes(EvalFlags, ModelFlags, EvaluatorModelFlags, ToolkitFlags, BatchFlags, BudgetFlags)
def evaluate(
    ctx: typer.Context,
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
            "their mean, where ToolEmu writes k lines; the mean over a run is the same; "
            f"{limits.NUM_REPLICATES.help}).",
            rich_help_panel=_E,
        ),
    ] = None,
    rejudge: Annotated[
        int,
        typer.Option(
            "--rejudge",
            metavar="K",
            help="Then judge episodes K more times with the same judge (into _eval_<type>#rejudge.jsonl; the "
            f"headline is unchanged): the report gives each scorer's flip rate. K: {limits.REJUDGE.help}.",
            rich_help_panel=_E,
        ),
    ] = 0,
    rejudge_sample: Annotated[
        int | None,
        typer.Option(
            "--rejudge-sample",
            metavar="N",
            help="Judge N episodes again, chosen by a hash of their key (default: every one that did not error; "
            f"N: {limits.REJUDGE_SAMPLE.help}).",
            rich_help_panel=_E,
        ),
    ] = None,
) -> object:
    """Score every trajectory of a run for safety (ToolCallRisk), helpfulness and attack success; resumable."""
    from toolemu import api

    evaluation, batch = EvalFlags.of(ctx), batch_flags(ctx)
    limits.NUM_EVAL_SAMPLES.check(evaluation.num_eval_samples)
    limits.NUM_REPLICATES.check(num_replicates)
    limits.REJUDGE.check(rejudge)
    limits.REJUDGE_SAMPLE.check(rejudge_sample)
    run = _dump(dump, input_path)
    scorers = chosen_scorers(evaluation.scorer, eval_type)
    evaluator, model = evaluator_of(ModelFlags.of(ctx), EvaluatorModelFlags.of(ctx))
    settings = settings_for(
        model,
        {"evaluator": first_evaluator(evaluator)},
        role_temperatures=judge_temperatures(evaluation),
    )
    summary = api.evaluate(
        run,
        settings=settings,
        scorers=scorers,
        samples=num_replicates if num_replicates is not None else evaluation.num_eval_samples,
        batch_size=batch.batch_size,
        toolkits=ToolkitFlags.of(ctx).toolkits_path,
        show_progress=not batch.no_progress,
        judges=panel_models(evaluator, model.dry_run),
        rejudge=rejudge,
        rejudge_sample=rejudge_sample,
    )
    for line in summary.lines():
        typer.echo(line)
    if summary.total == 0 and (empty := empty_shard_line(run, "nothing to judge")):
        typer.echo(empty)
    if summary.budget is not None:
        typer.echo(summary.budget.line())
    if summary.unreadable:  # judged what it could; the lines that are not records are bad input
        raise InputError.from_lines(summary.unreadable)
    outcome.finish([evaluation_stage(summary), *rejudge_stages(summary)], BudgetFlags.of(ctx).fail_on_budget)
    return summary

"""`toolemu judge-audit RUN`: how often the run's judges catch violations planted in episodes they passed."""

from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli import limits, outcome
from toolemu.cli.options import ModelFlagsFixedTokens, takes
from toolemu.cli.run import batch_flags, evaluator_of, settings_for
from toolemu.cli.run_options import BatchFlags, BudgetFlags, EvaluatorModelFlags, ToolkitFlags, panel_models
from toolemu.cli.toolemu_names import model_string

_A = "Judge audit"


def audited_models(evaluator_model: str | None, dry_run: bool) -> list[str]:
    """The judges `--evaluator-model a,b` names (none: the run's own; several: a panel's, as `run` makes them);
    under --dry-run, a mock judge per one."""
    from toolemu.llm.dryrun import DRY_RUN_MODEL
    from toolemu.scorers.panel import parse_models

    models = [model_string(m) for m in parse_models(evaluator_model)]
    if len(models) > 1:
        return panel_models(evaluator_model, dry_run)
    return [DRY_RUN_MODEL] if dry_run and models else models


@takes(ModelFlagsFixedTokens, EvaluatorModelFlags, ToolkitFlags, BatchFlags, BudgetFlags)
def judge_audit(
    ctx: typer.Context,
    run: Annotated[Path, typer.Argument(help="A judged run: a run directory, or a trajectory .jsonl file.")],
    episodes: Annotated[
        int | None,
        typer.Option(
            help=f"Audit N of the passed episodes, chosen by a hash of their key (default: all; "
            f"{limits.AUDIT_EPISODES.help}).",
            metavar="N",
            rich_help_panel=_A,
        ),
    ] = None,
    mutants: Annotated[
        int,
        typer.Option(help=f"Mutants per episode, one per kind ({limits.AUDIT_MUTANTS.help}).", rich_help_panel=_A),
    ] = 6,
    kind: Annotated[
        list[str] | None,
        typer.Option(
            help="A kind of violation to plant (repeatable; default: all): risky_action, wrong_recipient, "
            "wrong_amount, secret_in_answer, confirmation_removed, injection_followed.",
            rich_help_panel=_A,
        ),
    ] = None,
    emulate: Annotated[
        bool,
        typer.Option(
            help="The emulator answers each new or changed call (default: an answer written from the tool's spec).",
            rich_help_panel=_A,
        ),
    ] = False,
) -> object:
    """Plant known violations (a risky action executed, a wrong recipient or amount, a secret in the answer, a
    required confirmation removed, an injected instruction followed) in episodes the run's judges passed; have each
    judge score the mutants and a control of every episode; write catch and false alarm rates per judge and kind
    with CIs to judge_audit.json beside the run."""
    from toolemu.audit.run import judge_audit as audit
    from toolemu.reporting.judge_audit import audit_lines

    batch = batch_flags(ctx)
    limits.AUDIT_EPISODES.check(episodes)
    limits.AUDIT_MUTANTS.check(mutants)
    judges, _ = evaluator_of(ModelFlagsFixedTokens.of(ctx), EvaluatorModelFlags.of(ctx))
    _, model = ModelFlagsFixedTokens.of(ctx).take("evaluator")  # the judges are read here, not by the settings
    settings = settings_for(model, {})
    result = audit(
        run,
        settings=settings,
        judges=audited_models(judges, model.dry_run),
        episodes=episodes,
        mutants_per_episode=mutants,
        kinds=kind,
        emulate=emulate,
        toolkits=ToolkitFlags.of(ctx).toolkits_path,
        batch_size=batch.batch_size,
        show_progress=not batch.no_progress,
    )
    for line in audit_lines(result):
        typer.echo(line)
    failed = sum(j.errors for j in result.judges)
    stage = outcome.Stage("judgements", result.stop_kind, result.stopped, result.not_run, failed)
    outcome.finish([stage], BudgetFlags.of(ctx).fail_on_budget)
    return result

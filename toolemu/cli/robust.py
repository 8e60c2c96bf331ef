"""`toolemu robust RUN`: which of a run's failures stand in other emulated worlds."""

from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli import limits
from toolemu.cli.options import ModelFlagsFixedTokens, takes
from toolemu.cli.run import batch_flags, settings_for
from toolemu.cli.run_options import (
    AgentModelFlags,
    BatchFlags,
    BudgetFlags,
    EmulatorModelFlags,
    EvaluatorModelFlags,
    ToolkitFlags,
    alias_models,
)

_R = "Robust"


@takes(
    ModelFlagsFixedTokens,
    AgentModelFlags,
    EmulatorModelFlags,
    EvaluatorModelFlags,
    ToolkitFlags,
    BatchFlags,
    BudgetFlags,
)
def robust(
    ctx: typer.Context,
    run: Annotated[Path, typer.Argument(help="A judged run: a run directory, or a trajectory .jsonl file.")],
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds", help=f"Re-runs per failure, each in a new world ({limits.SEEDS.help}).", rich_help_panel=_R
        ),
    ] = 3,
    emulator_temperature: Annotated[
        float | None,
        typer.Option(
            help="The re-runs' emulator temperature, 0 to 2 (default: the run's, or 0.7 where it was 0, so a new seed "
            "draws a new world).",
            rich_help_panel=_R,
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            help="The agent to play again (default: the run's own, as its run.json records it: ours, a registered "
            "one, package.module:factory or mcp-cmd:<command>).",
            rich_help_panel=_R,
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Where the re-runs go (default: RUN/robust).", rich_help_panel=_R)
    ] = None,
) -> object:
    """Play each failure of a run (safety <= 1, or a successful attack) again in other emulated worlds: the agent's
    recorded actions up to the one the failure hinges on, then the agent itself; judge the re-runs as the run was
    judged; report raw and robust failure rates with CIs and how often each case's failures flipped."""
    from toolemu.reporting.robust_text import summary_lines
    from toolemu.robust.run import robust_failures

    batch = batch_flags(ctx)
    limits.SEEDS.check(seeds)
    limits.EMULATOR_TEMPERATURE.check(emulator_temperature)
    settings = settings_for(ModelFlagsFixedTokens.of(ctx), alias_models(ctx, "emulator", "agent", "evaluator"))
    summary = robust_failures(
        run,
        settings=settings,
        seeds=seeds,
        emulator_temperature=emulator_temperature,
        out=out,
        toolkits=ToolkitFlags.of(ctx).toolkits_path,
        agent=agent,
        batch_size=batch.batch_size,
        show_progress=not batch.no_progress,
    )
    typer.echo(f"agent: {summary.agent}")
    for line in summary_lines(summary):
        typer.echo(line)
    typer.echo(f"summary: {Path(summary.out) / 'robust.json'}")
    return summary

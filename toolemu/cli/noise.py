"""`toolemu noise RUN`: where the spread of a run's headline rates comes from: the agent, the emulator or the judge."""

from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli import limits
from toolemu.cli.options import ModelFlags, takes
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

_N = "Noise"


@takes(ModelFlags, AgentModelFlags, EmulatorModelFlags, EvaluatorModelFlags, ToolkitFlags, BatchFlags, BudgetFlags)
def noise(
    ctx: typer.Context,
    run: Annotated[Path, typer.Argument(help="A judged run: a run directory, or a trajectory .jsonl file.")],
    cases: Annotated[
        int | None,
        typer.Option(
            help=f"How many of the run's judged cases to re-run, chosen by a hash of their names, the same on every "
            f"call ({limits.NOISE_CASES.help}; default: all).",
            rich_help_panel=_N,
        ),
    ] = None,
    trials: Annotated[
        int,
        typer.Option(
            "--num-trials", help=f"New agent trials per case ({limits.NOISE_TRIALS.help}).", rich_help_panel=_N
        ),
    ] = 2,
    seeds: Annotated[
        int,
        typer.Option(
            help=f"New emulated worlds per trial, the agent's recorded actions replayed in each "
            f"({limits.NOISE_SEEDS.help}).",
            rich_help_panel=_N,
        ),
    ] = 2,
    samples: Annotated[
        int,
        typer.Option(
            "--num-eval-samples",
            help=f"Judgements per trajectory, the first included ({limits.NOISE_SAMPLES.help}).",
            rich_help_panel=_N,
        ),
    ] = 2,
    resamples: Annotated[
        int,
        typer.Option(
            help=f"Bootstrap resamples of the cases for the CIs, each a fit of the model "
            f"({limits.NOISE_RESAMPLES.help}).",
            rich_help_panel=_N,
        ),
    ] = 200,
    emulator_temperature: Annotated[
        float | None,
        typer.Option(help="The new worlds' emulator temperature, 0 to 2 (default: the run's).", rich_help_panel=_N),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(help="The run's outside agent, if it had one: package.module:factory.", rich_help_panel=_N),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Where the re-runs go (default: RUN/noise).", rich_help_panel=_N)
    ] = None,
) -> object:
    """Split the spread of each headline rate (safe, helpful, attack success) into the agent, the emulator and the
    judge: re-run the run's cases as new agent trials, replay each trial's actions in new emulated worlds, judge
    every trajectory again, and fit the parts (a REML mixed model) with bootstrap CIs. Writes RUN/noise/noise.json,
    which the report shows beside each headline."""
    from toolemu.cli.outcome import Stage, finish
    from toolemu.noise.run import measure_noise
    from toolemu.reporting.noise import summary_lines

    batch = batch_flags(ctx)
    limits.NOISE_CASES.check(cases)
    limits.NOISE_TRIALS.check(trials)
    limits.NOISE_SEEDS.check(seeds)
    limits.NOISE_SAMPLES.check(samples)
    limits.NOISE_RESAMPLES.check(resamples)
    limits.EMULATOR_TEMPERATURE.check(emulator_temperature)
    settings = settings_for(ModelFlags.of(ctx), alias_models(ctx, "emulator", "agent", "evaluator"))
    summary = measure_noise(
        run,
        settings=settings,
        cases=cases,
        trials=trials,
        seeds=seeds,
        samples=samples,
        resamples=resamples,
        emulator_temperature=emulator_temperature,
        out=out,
        toolkits=ToolkitFlags.of(ctx).toolkits_path,
        agent=agent,
        batch_size=batch.batch_size,
        show_progress=not batch.no_progress,
    )
    for line in summary_lines(summary):
        typer.echo(line)
    typer.echo(f"summary: {Path(summary.out) / 'noise.json'}")
    # A stop (Ctrl-C, SIGTERM, a budget, a refused key) exits as `toolemu run` does; the split is over what was done.
    stage = Stage("re-runs or judgements", summary.stop_kind, summary.stop_reason, summary.not_run, 0)
    finish([stage], BudgetFlags.of(ctx).fail_on_budget)
    return summary

"""`toolemu fidelity`: a fidelity certificate per (toolkit, emulator model, emulator type), from probes with known
answers played through the real episode pipeline."""

from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli.options import ModelFlags, takes
from toolemu.cli.run_options import BatchFlags, BudgetFlags, EmulatorModelFlags, ToolkitFlags
from toolemu.errors import InputError, one_of

_F = "Fidelity"
TYPES = ("std_thought", "adv_thought", "both")


@takes(ModelFlags, EmulatorModelFlags, ToolkitFlags, BatchFlags, BudgetFlags)
def fidelity(
    ctx: typer.Context,
    out: Annotated[
        Path,
        typer.Option(help="Folder for fidelity.json, fidelity.md and the probes' trajectories.", rich_help_panel=_F),
    ] = Path("dumps/fidelity"),
    simulator_type: Annotated[
        str,
        typer.Option(
            "--simulator-type",
            "-stp",
            help="std_thought, adv_thought or both (one certificate each).",
            rich_help_panel=_F,
        ),
    ] = "adv_thought",
    toolkit: Annotated[
        list[str] | None,
        typer.Option(
            "--toolkit", help="Certify this toolkit only (repeatable; default: every one).", rich_help_panel=_F
        ),
    ] = None,
    probes: Annotated[
        Path | None,
        typer.Option(help="A folder of probe files, <Toolkit>.json (default: the shipped probes).", rich_help_panel=_F),
    ] = None,
    no_judge: Annotated[
        bool,
        typer.Option(
            "--no-judge", help="No judge: what the rule cannot decide counts as not right.", rich_help_panel=_F
        ),
    ] = False,
) -> object:
    """Measure how well an emulator keeps the world's state: create, update (1, 3, 5 fields), delete, transfer and
    read-twice probes with known answers, each read-back compared with the expected state. Writes state accuracy per
    toolkit, kind of probe and facts changed (with CIs) to fidelity.json and fidelity.md in --out."""
    from toolemu.cli import outcome
    from toolemu.cli.run import batch_flags, settings_for
    from toolemu.fidelity import certify_emulator
    from toolemu.fidelity.page import rate_text
    from toolemu.fidelity.run import PAGE_FILE
    from toolemu.reporting.fidelity_model import FIDELITY_FILE

    batch = batch_flags(ctx)
    one_of(simulator_type, TYPES, "--simulator-type")
    model = ModelFlags.of(ctx)
    if no_judge and "evaluator" in model.roles:
        raise InputError.single("command line", "expected no --model evaluator=... with --no-judge", field="--model")
    settings = settings_for(model, {"emulator": EmulatorModelFlags.of(ctx).simulator_model})
    run = certify_emulator(
        out,
        settings=settings,
        simulator_types=("std_thought", "adv_thought") if simulator_type == "both" else (simulator_type,),
        toolkits=toolkit,
        toolkit_paths=ToolkitFlags.of(ctx).toolkits_path,
        probes_dir=probes,
        judge=not no_judge,
        batch_size=batch.batch_size,
        show_progress=not batch.no_progress,
    )
    for cert in run.file.certificates:
        typer.echo(f"{cert.toolkit} ({cert.emulator_type}): state accuracy {rate_text(cert.state)}")
    for name, why in run.file.unprobeable.items():
        typer.echo(f"{name}: not probed ({why})")
    typer.echo(f"fidelity: {run.out / FIDELITY_FILE}")
    typer.echo(f"page: {run.out / PAGE_FILE}")
    stop = run.stop
    stage = outcome.Stage("probes", stop.stop_kind, stop.stop_reason, len(stop.not_run), run.episodes_in_error)
    outcome.finish([stage], BudgetFlags.of(ctx).fail_on_budget)
    return run

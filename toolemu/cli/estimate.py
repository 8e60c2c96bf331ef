"""`toolemu run --estimate` and `--confirm-above USD` (and `emulate`'s): the run's expected cost, from its plan alone.

The plan is what the run would do: its selected (case, trial) pairs, each role's model, each judge. Nothing is
built or written (toolemu.reporting.estimate says how the numbers are made)."""

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from toolemu.cli import limits
from toolemu.cli.run_options import EstimateFlags
from toolemu.errors import InputError

if TYPE_CHECKING:
    from toolemu.llm import LLMSettings
    from toolemu.reporting.estimate import RunEstimate
    from toolemu.runner import RunConfig


def stdin_is_terminal() -> bool:
    """Whether there is a person to ask: standard input is open and a terminal (closed with `<&-`, Python has no
    sys.stdin at all)."""
    try:
        return sys.stdin is not None and not sys.stdin.closed and sys.stdin.isatty()
    except (AttributeError, ValueError, OSError):  # a stand-in stream, or one closed under us
        return False


def estimate_step(
    flags: EstimateFlags,
    settings: "LLMSettings",
    config: "RunConfig",
    dump_dir: Path,
    cases: Sequence[Path] | None,
    toolkits: Sequence[Path] | None,
    scorers: Sequence[str] = (),
    samples: int = 1,
    judges: Sequence[str] = (),
) -> None:
    """Before a run: nothing unless --estimate or --confirm-above is given; then the run's estimate (its pairs, its
    roles' models and its judges: `scorers`, by `judges` when a panel), scaled from the shipped token profile or
    `--estimate-from`'s run, printed or asked about (act_on_estimate)."""
    limits.CONFIRM_ABOVE.check(flags.confirm_above)
    if flags.estimate_from is not None and not flags.estimate and flags.confirm_above is None:
        raise InputError.single("command line", "expected with --estimate or --confirm-above", field="--estimate-from")
    if not flags.estimate and flags.confirm_above is None:
        return
    from toolemu.episode.spec import EpisodeSpec
    from toolemu.log import run_files
    from toolemu.reporting.estimate import Judge, TokenProfile, estimate_run, profile_of_runs, shipped_profile
    from toolemu.runner import select_cases, shard_pairs
    from toolemu.scorers import get_scorer
    from toolemu.scorers.panel import with_panel
    from toolemu.specs import load_cases

    if flags.estimate_from is not None:
        source = run_files(flags.estimate_from).source
        profile = TokenProfile(source=f"the recorded usage of {source}", cases=profile_of_runs([source]))
    else:
        profile = shipped_profile()
    bench = load_cases(cases, toolkits)
    selected = [(case.name, t) for _, case in select_cases(bench, config) for t in range(config.num_trials)]
    pairs = [name for name, _ in shard_pairs(selected, config.shard)]
    roles = {role: settings.options_for(role).model for role in EpisodeSpec.of(config).roles()}
    panel_settings, panel = with_panel(settings, list(judges))
    planned = []
    for name in scorers:
        if get_scorer(name).needs_model:
            for judge in panel:
                label = f"judge:{name}" + (f"@{judge.slug}" if judge.slug else "")
                planned.append(Judge(label, name, panel_settings.options_for(judge.role).model, samples))
    estimate = estimate_run(pairs, roles, planned, profile, "user" in roles)
    done = _finished(dump_dir, set(selected))
    if done:
        estimate.notes.append(
            f"{dump_dir} already holds {done} of these pairs finished: a resume runs only the rest (the estimate "
            "counts every selected pair)"
        )
    act_on_estimate(flags, estimate)


def _finished(dump_dir: Path, selected: set[tuple[str, int]]) -> int:
    from toolemu.log import TRAJECTORIES, read_trajectories

    path = dump_dir / TRAJECTORIES
    if not path.is_file():
        return 0
    records, _ = read_trajectories(path)
    return len({r.key for r in records if r.status != "error" and r.key in selected})


def act_on_estimate(flags: EstimateFlags, estimate: "RunEstimate") -> None:
    """--estimate: print it and exit 0. --confirm-above: ask when it is above the limit (or holds calls with no
    price); with no terminal to ask, refuse in one line (exit 2); a no at the prompt exits 1."""
    if flags.estimate:
        for line in estimate.lines():
            typer.echo(line)
        raise typer.Exit(0)
    limit = flags.confirm_above
    if limit is None:
        return
    unknown = estimate.unknown
    if estimate.cost_usd <= limit and not unknown:
        return
    why = (
        f"the estimate, ${estimate.cost_usd:.4f}, is above --confirm-above ${limit:g}"
        if estimate.cost_usd > limit
        else f"the estimate leaves out {', '.join(f'{r.role} ({r.model})' for r in unknown)}: its cost is unknown"
    )
    if not stdin_is_terminal():
        raise InputError.single(
            "command line", f"{why}; there is no terminal to ask, so nothing was run", field="--confirm-above"
        )
    for line in estimate.lines():
        typer.echo(line)
    if not typer.confirm(f"{why}. Run it?"):
        raise typer.Exit(1)

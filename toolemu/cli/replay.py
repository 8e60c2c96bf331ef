"""`toolemu replay RUN --case NAME [--trial T]`: replay one recorded episode exactly, with no model, and check that it
reproduces (exit 0), or print what differs (exit 1)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from toolemu.episode.reproduce import Reproduction
    from toolemu.log import Step

SHOWN = 160  # characters of an input or observation per trace line


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _source(step: "Step") -> str:
    if step.by_user:
        return "the user's own action"
    if step.answered_by_user:
        return "answered by the user"
    if step.blocked:
        return f"blocked by a gate ({step.blocked})"
    if step.not_run:
        return "not run: the episode failed here"
    return "observation by replay key" if step.obs_key else "observation from the record"


def trace_lines(result: "Reproduction") -> list[str]:
    lines = []
    for i, step in enumerate(result.steps, 1):
        lines.append(
            f"step {i} [{_source(step)}]: {step.tool} {_short(json.dumps(step.tool_input, ensure_ascii=False))}"
        )
        lines.append(f"  -> {_short(step.observation)}")
        lines += [f"  state: {change.text()}" for change in step.state]
    lines.append(f"{result.status}: {_short(result.output)}" if result.output else result.status)
    return lines


def replay(
    run: Annotated[Path, typer.Argument(help="A run directory, or a trajectory .jsonl file.")],
    case: Annotated[str, typer.Option("--case", help="The case's name.")],
    trial: Annotated[int | None, typer.Option(help="The trial (default: the first one recorded).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="Only say whether it reproduced.")] = False,
) -> object:
    """Replay one finished episode with its recorded agent turns and recorded observations (each looked up by its
    prefix key, as --replay would), and check that it reproduces the trajectory; exit 1 and list what differs if not."""
    from toolemu.episode.reproduce import find_trajectory, reproduce
    from toolemu.log import read_run

    log = read_run(run, evaluations=False)
    result = reproduce(find_trajectory(log.trajectories, case, trial, str(run)), str(run))
    if not quiet:
        for line in trace_lines(result):
            typer.echo(line)
    where = f"{result.case_name}#{result.trial}"
    if result.reproduced:
        typer.echo(
            f"reproduced {where}: {len(result.steps)} steps, {result.status}, {len(result.ledger)} facts in the ledger"
        )
        return result
    typer.echo(f"not reproduced {where}: {len(result.differences)} differences")
    for line in result.differences:
        typer.echo(f"  {line}")
    raise typer.Exit(1)

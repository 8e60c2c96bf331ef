"""Exit codes that tell the truth, the same for `toolemu emulate`, `evaluate`, `run` and `merge`:

    0    everything ran (or a budget stopped the command without --fail-on-budget: it says what was not run)
    1    some pairs or judgements failed: recorded, and the same command runs them again
    2    bad input: a flag, a file, a record; or a key the provider refused (nothing more is spent after it)
    3    a budget stopped the command, with --fail-on-budget
    130  interrupted (Ctrl-C)
    143  terminated (SIGTERM, as SLURM sends at a job's time limit): what finished is kept, the same command resumes

`toolemu check` keeps its own codes (0 OK, 1 WARN under --strict, 4 FAIL, 2 bad input).
"""

from __future__ import annotations

from dataclasses import dataclass

import typer

from toolemu.secrets import redact

OK, FAILED, BAD_INPUT, BUDGET, INTERRUPTED, TERMINATED = 0, 1, 2, 3, 130, 143


@dataclass(frozen=True)
class Stage:
    """What one stage of a command left undone: emulation (pairs) or evaluation (judgements)."""

    items: str  # "pairs" or "judgements"
    stop_kind: str  # "", "interrupted", "terminated", "budget", "access", "stopped"
    stop_reason: str
    not_run: int
    failed: int


def exit_code(stages: list[Stage], fail_on_budget: bool) -> int:
    kinds = {s.stop_kind for s in stages}
    if "interrupted" in kinds:
        return INTERRUPTED
    if "terminated" in kinds:
        return TERMINATED
    if "access" in kinds:
        return BAD_INPUT
    if "budget" in kinds and fail_on_budget:
        return BUDGET
    if any(s.failed for s in stages) or "stopped" in kinds:
        return FAILED
    return OK


def finish(stages: list[Stage], fail_on_budget: bool) -> None:
    """Say why the command stopped or what failed, in one line each, then exit with the code for it."""
    for s in stages:
        reason = redact(s.stop_reason)
        if s.stop_kind == "access":
            typer.echo(f"error: {reason}; stopped at once, {s.not_run} {s.items} not run", err=True)
        elif s.stop_kind == "budget":
            then = "exit 3 (--fail-on-budget)" if fail_on_budget else "exit 0; --fail-on-budget makes it exit 3"
            typer.echo(
                f"budget: {reason}: {s.not_run} {s.items} not run; the same command with a larger budget runs them "
                f"({then})"
            )
        elif s.stop_kind in ("interrupted", "terminated"):
            typer.echo(
                f"{s.stop_kind}: {s.not_run} {s.items} not run; what finished is kept; run the same command again "
                "to resume",
                err=True,
            )
        if s.failed and s.stop_kind not in ("interrupted", "terminated"):
            typer.echo(
                f"failed: {s.failed} {s.items} (recorded with their reason; the same command runs them again)",
                err=True,
            )
    code = exit_code(stages, fail_on_budget)
    if code != OK:
        raise typer.Exit(code)

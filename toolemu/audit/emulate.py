"""`--emulate`: the emulator answers each mutant's new or changed call, given the recorded steps before it as the
episode so far; a mutant whose call it rejects (an exception, an invalid call) or cannot answer is not made."""

from __future__ import annotations

from functools import partial

from pydantic import ValidationError

from toolemu.audit.draft import CLIP, Draft
from toolemu.emulator import Emulator
from toolemu.llm.stops import StopRun
from toolemu.log import raised
from toolemu.log.judge_audit import Edit, NotMade
from toolemu.pool import PoolOutcome, Recorded, run_pool
from toolemu.secrets import clip
from toolemu.specs import Case
from toolemu.specs.models import Toolkit


def emulate_drafts(
    drafts: list[Draft], emulator: Emulator, kits: dict[str, Toolkit], workers: int, show_progress: bool
) -> tuple[list[Draft], list[NotMade], PoolOutcome[Draft]]:
    """(the drafts made, those not made and why, the pool's outcome): drafts with no call to answer pass as they are."""
    todo = [d for d in drafts if d.emulate_step is not None]
    why_not: dict[int, str] = {}

    def record(draft: Draft, why: str) -> Recorded:
        if why:
            why_not[id(draft)] = why
        return Recorded(failed=bool(why))

    work = partial(_emulated, emulator=emulator, kits=kits)
    stop = run_pool(todo, work, record, workers=workers, label="mutants", show_progress=show_progress)
    for d in stop.not_run:
        why_not[id(d)] = f"not emulated ({stop.stop_reason})"
    missed = [
        NotMade(case_name=d.mutation.case_name, trial=d.mutation.trial, kind=d.mutation.kind, reason=why_not[id(d)])
        for d in drafts
        if id(d) in why_not
    ]
    return [d for d in drafts if id(d) not in why_not], missed, stop


def _emulated(draft: Draft, emulator: Emulator, kits: dict[str, Toolkit]) -> str:
    """Have the emulator answer the mutant's new or changed call, with the steps before it as the episode so far;
    "" when done, else why the mutant is not made. A stop (a budget, a refused key) propagates."""
    traj, at = draft.trajectory, draft.emulate_step
    assert at is not None
    try:
        case = Case.model_validate(traj.case)
    except ValidationError as exc:
        return f"the recorded case cannot be read as a case ({exc.errors()[0]['msg']})"
    step = traj.steps[at]
    case_kits = [kits[n] for n in case.toolkits if n in kits]
    try:
        emulation = emulator.emulate(
            case, case_kits, traj.steps[:at], step.tool, step.tool_input, f"judge-audit|{draft.mutation.id}"
        )
    except StopRun:
        raise
    except Exception as exc:  # noqa: BLE001 - a model failure: this mutant is not made, the audit goes on
        return f"the emulator failed: {clip(f'{type(exc).__name__}: {exc}', 300)}"
    if emulation.invalid_call or raised(emulation.observation):
        return f"the emulator did not carry the call out: {clip(emulation.observation, 300)}"
    steps = list(traj.steps)
    steps[at] = step.model_copy(update={"observation": emulation.observation, "state": emulation.state})
    draft.trajectory = traj.model_copy(update={"steps": steps})
    draft.mutation.made_by = "emulator"
    edit = next((e for e in draft.mutation.edits if e.op == "change_observation" and e.step == at), None)
    if edit is None:
        edit = Edit(op="change_observation", step=at, tool=step.tool, before=clip(step.observation, CLIP))
        draft.mutation.edits.append(edit)
    edit.after = clip(emulation.observation, CLIP)
    return ""

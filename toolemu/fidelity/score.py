"""One probe's episode against its known answers: each read-back compared with the expected state (the ledger of
the probe's known effects), each call that raised where it was due to succeed, each change the emulator's own
ledger made on a call that changes nothing.

The rule decides every read-back it can (toolemu.fidelity.compare); a judge, where one is given, decides the rest.
A read-back that is not decided, or never made (an earlier step failed, the episode ended in error), is not right:
accuracy is earned, never a default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolemu.fidelity.compare import (
    alnum,
    compare_values,
    find_field,
    leaves,
    locate,
    mentions,
    not_found,
    parse_json,
    present,
    raised_error,
    same_observation,
)
from toolemu.fidelity.expected import object_state, states_before
from toolemu.fidelity.judge import StateJudge
from toolemu.fidelity.probes import Check, Probe, ProbeStep, substitute, variables
from toolemu.fidelity.script import saved_values
from toolemu.llm import StopRun
from toolemu.log import StateChange, Step, Trajectory, apply_changes
from toolemu.reporting.fidelity_model import FieldCheck, Outcome, ProbeResult
from toolemu.secrets import clip

MAX_SHOWN = 300  # characters of an actual value kept in fidelity.json
NOT_GIVEN = "(not given)"  # the id of an object whose making step gave none: its read-backs are still counted


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_SHOWN:
        return value[:MAX_SHOWN] + "…"
    if isinstance(value, dict | list):
        text = str(value)
        return value if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"
    return value


class _Reader:
    """Checks one step's output; `judge` settles what the rule leaves undecided."""

    def __init__(self, judge: StateJudge | None):
        self.judge = judge
        self.judged = 0

    def settle(self, check: FieldCheck, ask: Callable[[StateJudge], Outcome]) -> FieldCheck:
        if check.outcome != "undecided" or self.judge is None:
            return check
        self.judged += 1
        try:
            outcome = ask(self.judge)
        except StopRun:  # a budget or a refused key stops the command
            raise
        except Exception as exc:  # noqa: BLE001 - a judge that gives no verdict leaves the read-back undecided
            return check.model_copy(update={"note": clip(f"the judge failed: {type(exc).__name__}: {exc}", 300)})
        return check.model_copy(update={"outcome": outcome, "judged": True})

    def gone(self, index: int, obj: str, result: Any, error: str | None, by_id: bool, whole: bool) -> FieldCheck:
        if error is not None:
            outcome: Outcome = "match" if not_found(error) else "undecided"
            check = FieldCheck(step=index, object=obj, expected="(gone)", actual=_shown(error), outcome=outcome)
        else:
            shown = present(_located(result, obj, by_id, whole))
            check = FieldCheck(
                step=index,
                object=obj,
                expected="(gone)",
                actual="(shown)" if shown else None,
                outcome="invented" if shown else "match",
                note="the object shows, though it was deleted" if shown else "",
            )
        return self.settle(check, lambda j: j.gone(obj, result))

    def fields(
        self, index: int, obj: str, wanted: list[str], expected: dict[str, Any], result: Any, by_id: bool, whole: bool
    ) -> list[FieldCheck]:
        located = _located(result, obj, by_id, whole)
        if not wanted:  # an object the state holds with no field: it must be there
            outcome: Outcome = "match" if present(located) else "lost"
            return [FieldCheck(step=index, object=obj, expected="(present)", outcome=outcome)]
        if not present(located):
            note = "the object is not in the output"
            return [
                FieldCheck(step=index, object=obj, field=f, expected=expected.get(f), outcome="lost", note=note)
                for f in wanted
            ]
        out = []
        for name in wanted:
            value = expected.get(name)
            found, actual = find_field(located, name)
            # Not under its own name: the rule cannot tell where the value is there under another one.
            outcome = compare_values(value, actual) if found else "undecided" if mentions(located, value) else "lost"
            check = FieldCheck(
                step=index, object=obj, field=name, expected=value, actual=_shown(actual), outcome=outcome
            )
            out.append(self.settle(check, lambda j, n=name, v=value: j.field(obj, n, v, located)))
        return out


def _located(result: Any, obj: str, by_id: bool, whole: bool) -> dict[str, Any] | None:
    if whole:
        return result if isinstance(result, dict) else None
    kind, _, ident = obj.partition(":")
    return locate(result, kind, ident, by_id)


def _asked_by_id(call_input: Any, ident: str) -> bool:
    """Whether the call named the object's id (a get by id, not a listing)."""
    wanted = alnum(ident)
    return bool(wanted) and any(alnum(v) == wanted for v in leaves(call_input).values())


def _not_played(index: int, planned: ProbeStep, state: dict[str, Any], saved: dict[str, Any], why: str) -> list:
    out = []
    for check in planned.checks:
        obj = substitute(check.object, saved)
        fields = check.fields or sorted(object_state(state, obj) or {}) or [""]
        out += [FieldCheck(step=index, object=obj, field=f, outcome="error", note=why) for f in fields]
    if planned.same_as is not None:
        out.append(FieldCheck(step=index, object="(output)", outcome="error", note=why))
    return out


def _read_writes(planned: ProbeStep, step: Step, before: dict[str, Any]) -> int:
    """Facts the emulator's own ledger changed on a call the probe knows changes nothing."""
    if planned.effects or planned.save:
        return 0
    deleted = sum(c.op == "delete" and c.key in before for c in step.state)
    return deleted + sum(c.op == "set" and before.get(c.key, object()) != c.value for c in step.state)


def _expects_success(planned: ProbeStep, state: dict[str, Any], saved: dict[str, Any]) -> bool:
    if planned.effects or planned.save or planned.same_as is not None:
        return True
    return any(object_state(state, substitute(c.object, saved)) is not None for c in planned.checks)


def score_probe(probe: Probe, traj: Trajectory, judge: StateJudge | None = None) -> ProbeResult:
    """The probe's result from its episode (`traj`)."""
    reader = _Reader(judge)
    given = saved_values(probe, traj.steps)
    used = variables([s.model_dump() for s in probe.steps])
    missing = used - set(given)
    saved = {**dict.fromkeys(missing, NOT_GIVEN), **given}  # every read-back counts, whether or not it could be made
    states = states_before(probe, saved)
    checks: list[FieldCheck] = []
    errors = read_writes = 0
    ledger: dict[str, Any] = {}
    outputs: list[Any] = []
    for index, planned in enumerate(probe.steps):
        after = states[index + 1]
        step = traj.steps[index] if index < len(traj.steps) else None
        if step is None:
            why = traj.error.message if traj.error is not None else f"not played: {traj.output or traj.status}"
            checks += _not_played(index, planned, after, saved, why[:MAX_SHOWN])
            errors += _expects_success(planned, after, saved)
            outputs.append(None)
            continue
        result = parse_json(step.observation)
        outputs.append(result)
        error = raised_error(result)
        if error is None and (step.blocked or step.not_run):
            error = step.not_run or "blocked by a gate"
        read_writes += _read_writes(planned, step, ledger)
        ledger = apply_changes(ledger, [StateChange.model_validate(c) for c in step.state])
        if error is not None and _expects_success(planned, after, saved):
            errors += 1
        for check in planned.checks:
            checks += _check(reader, index, check, step, result, error, after, saved, missing)
        if planned.same_as is not None:
            checks.append(_repeat(index, planned, outputs[planned.same_as], result))
    passed = bool(checks) and errors == 0 and all(c.outcome == "match" for c in checks)
    emulator = traj.usage.get("emulator")
    return ProbeResult(
        probe=probe.id,
        kind=probe.kind,
        changed=probe.changed,
        source=probe.source,
        passed=passed,
        checks=checks,
        errors=errors,
        read_writes=read_writes,
        status=traj.status,
        error=traj.error.message[:MAX_SHOWN] if traj.error is not None else "",
        calls=emulator.calls if emulator is not None else 0,
        cache_hits=emulator.cache_hits if emulator is not None else 0,
        judge_calls=reader.judged,
    )


def _check(
    reader: _Reader,
    index: int,
    check: Check,
    step: Step,
    result: Any,
    error: str | None,
    state: dict[str, Any],
    saved: dict[str, Any],
    missing: set[str],
) -> list[FieldCheck]:
    obj = substitute(check.object, saved)
    expected = object_state(state, obj)
    lacking = sorted(variables(check.object) & missing)
    if lacking:
        note = f"no ${{{lacking[0]}}}: the step that makes it gave none"
        fields = check.fields or sorted(expected or {}) or [""]
        return [FieldCheck(step=index, object=check.object, field=f, outcome="error", note=note) for f in fields]
    by_id = _asked_by_id(step.tool_input, obj.partition(":")[2])
    if expected is None:
        return [reader.gone(index, obj, result, error, by_id, check.whole)]
    wanted = check.fields if check.fields is not None else sorted(expected)
    if error is not None:
        note = f"the call raised: {error}"[:MAX_SHOWN]
        return [FieldCheck(step=index, object=obj, field=f, expected=expected.get(f), outcome="error", note=note)
                for f in wanted or [""]]  # fmt: skip
    return reader.fields(index, obj, wanted, expected, result, by_id, check.whole)


def _repeat(index: int, planned: ProbeStep, first: Any, second: Any) -> FieldCheck:
    """A repeated read against the first: the same output, or what differs."""
    assert planned.same_as is not None
    errors = raised_error(first), raised_error(second)
    if first is None:
        outcome: Outcome = "error"
        paths: list[str] = ["the first read was never played"]
    elif errors[0] is not None or errors[1] is not None:
        outcome = "match" if errors[0] == errors[1] else "contradiction"
        paths = [] if outcome == "match" else ["one read raised, the other did not"]
    else:
        outcome, paths = same_observation(first, second, planned.ignore)
    note = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return FieldCheck(step=index, object="(output)", expected=f"step {planned.same_as}'s output", outcome=outcome,
                      note=note)  # fmt: skip

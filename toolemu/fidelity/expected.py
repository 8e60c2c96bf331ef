"""The expected state of a probe's world: a ledger (toolemu.log.ledger), the seed and then each step's known
effects, with the identifiers the emulator gave (saved from its outputs) filled in.

Deleting an object's key (`contact:ct_1`) deletes the object: its key and every field key under it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from toolemu.fidelity.probes import Effect, Probe, split_key, substitute
from toolemu.log import StateChange, apply_changes


def changes_of(effects: Iterable[Effect], saved: dict[str, Any], state: dict[str, Any]) -> list[StateChange]:
    """The effects as ledger changes, variables filled in; an object's delete becomes a delete of each of its keys."""
    out: list[StateChange] = []
    for effect in effects:
        key = substitute(effect.key, saved)
        if effect.op == "delete":
            out += [StateChange(key=k, op="delete") for k in state if k == key or k.startswith(key + ".")]
            out.append(StateChange(key=key, op="delete"))
        else:
            out.append(StateChange(key=key, op="set", value=substitute(effect.value, saved)))
    return out


def states_before(probe: Probe, saved: dict[str, Any]) -> list[dict[str, Any]]:
    """The expected state before each step, and after the last (one more than the steps). A step whose effects
    name a variable that was never saved (its writing step failed) leaves the state as it was."""
    state = apply_changes({}, changes_of(probe.seed, saved, {}))
    out = [state]
    for step in probe.steps:
        with contextlib.suppress(KeyError):  # a variable its writing step never gave
            state = apply_changes(state, changes_of(step.effects, saved, state))
        out.append(state)
    return out


def object_state(state: dict[str, Any], obj: str) -> dict[str, Any] | None:
    """The fields the state holds for one object (`<kind>:<id>`); None where it holds nothing of it (it is gone,
    or never was). An object with a key of its own but no fields is present with no fields."""
    fields = {}
    present = False
    for key, value in state.items():
        if key == obj:
            present = True
        elif key.startswith(obj + "."):
            present = True
            _, field = split_key(key, [obj])
            fields[field] = value
    return fields if present else None

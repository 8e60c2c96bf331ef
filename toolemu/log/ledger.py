"""The world-state ledger: the facts each emulated call created, changed or deleted, and the state they add up to.

The emulator returns a small state patch beside each observation (`StateChange`s: set a key to a value, or delete
it). Each step keeps its patch; the trajectory keeps the state they add up to, in order. Keys are the emulator's
names for facts, by convention `<kind>:<id>[.<field>]` (`account:chk_main.balance`, `payee:pay_778`,
`file:/home/u/notes.txt`), so case checks can match them with globs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

StateOp = Literal["set", "delete"]


class StateChange(BaseModel):
    """One fact a call changed: `set` gives the key a value (new or changed); `delete` removes it."""

    model_config = ConfigDict(extra="ignore")

    key: str
    op: StateOp = "set"
    value: Any = None

    def text(self) -> str:
        """For people: `set account:chk_main.balance = 868.44`, `delete file:/tmp/x`."""
        if self.op == "delete":
            return f"delete {self.key}"
        return f"set {self.key} = {self.value!r}" if isinstance(self.value, str) else f"set {self.key} = {self.value}"


def apply_changes(state: dict[str, Any], changes: Iterable[StateChange]) -> dict[str, Any]:
    """`state` with `changes` applied in order (a new dict; the argument is left as it is)."""
    out = dict(state)
    for change in changes:
        if change.op == "delete":
            out.pop(change.key, None)
        else:
            out[change.key] = change.value
    return out


def accumulate(patches: Iterable[Iterable[StateChange]]) -> dict[str, Any]:
    """The state every step's patch adds up to, from an empty world (facts the case starts with are not keys)."""
    state: dict[str, Any] = {}
    for patch in patches:
        state = apply_changes(state, patch)
    return state

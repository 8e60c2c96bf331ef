"""A gate written in Python, named by import path: `--gate package.module:attribute`.

Such a gate is guarded: an exception it raises on a call (a hostile argument it did not expect) denies that call
with the reason "undecidable" and the exception in the message, instead of ending the episode as an error. A
StopRun (a spent budget, a refused key) still ends the run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from toolemu.errors import InputError
from toolemu.gates.base import BaseGate, CallView, Gate, undecidable
from toolemu.llm import ModelHub, StopRun
from toolemu.log import GateDecision, GatePhase
from toolemu.registration import import_target
from toolemu.secrets import clip


class FunctionGate(BaseGate):
    """A plain function fn(call) -> GateDecision | None as a pre-call gate."""

    def __init__(self, name: str, fn: Callable[[CallView], GateDecision | None]):
        self.name, self.fn = name, fn

    def pre_call(self, call: CallView) -> GateDecision | None:
        return self.fn(call)


class GuardedGate:
    """An outside gate that never raises on a call: what it raises is a deny."""

    def __init__(self, inner: Gate):
        self.inner, self.name = inner, inner.name

    def _guarded(self, phase: GatePhase, decide: Callable[[], GateDecision | None]) -> GateDecision | None:
        try:
            return decide()
        except StopRun:
            raise
        except Exception as exc:  # noqa: BLE001 - a gate that fails on a call cannot decide it: denied
            return undecidable(self.name, phase, clip(f"the gate raised {type(exc).__name__}: {exc}", 300))

    def pre_call(self, call: CallView) -> GateDecision | None:
        return self._guarded("pre_call", lambda: self.inner.pre_call(call))

    def post_call(self, call: CallView, observation: str) -> GateDecision | None:
        return self._guarded("post_call", lambda: self.inner.post_call(call, observation))


def load_python_gate(spec: str, hub: ModelHub | None = None) -> Gate:
    return GuardedGate(_load(spec))


def _load(spec: str) -> Gate:
    target = import_target(spec, "gate", "--gate")
    if inspect.isclass(target):  # first: a class has the protocol's attributes too
        gate = target()
    elif isinstance(target, Gate):
        return target
    elif callable(target) and len(inspect.signature(target).parameters) == 0:
        gate = target()  # a factory
    elif callable(target):
        return FunctionGate(spec.partition(":")[2], target)
    else:
        gate = target
    if not isinstance(gate, Gate):
        raise InputError.single(
            "command line", f"{spec!r} is not a gate (name, pre_call, post_call) nor a function", field="--gate"
        )
    return gate

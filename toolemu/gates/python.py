"""A gate written in Python, named by import path: `--gate package.module:attribute`."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

from toolemu.errors import InputError
from toolemu.gates.base import BaseGate, CallView, Gate
from toolemu.gates.registry import register_gate_kind
from toolemu.llm import ModelHub
from toolemu.log import GateDecision


class FunctionGate(BaseGate):
    """A plain function fn(call) -> GateDecision | None as a pre-call gate."""

    def __init__(self, name: str, fn: Callable[[CallView], GateDecision | None]):
        self.name, self.fn = name, fn

    def pre_call(self, call: CallView) -> GateDecision | None:
        return self.fn(call)


def load_python_gate(spec: str, hub: ModelHub | None = None) -> Gate:
    module_name, _, attr = spec.partition(":")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise InputError.single("command line", f"cannot import gate {spec!r}: {exc}", field="--gate") from None
    if inspect.isclass(target):  # first: a class has the protocol's attributes too
        gate = target()
    elif isinstance(target, Gate):
        return target
    elif callable(target) and len(inspect.signature(target).parameters) == 0:
        gate = target()  # a factory
    elif callable(target):
        return FunctionGate(attr, target)
    else:
        gate = target
    if not isinstance(gate, Gate):
        raise InputError.single(
            "command line", f"{spec!r} is not a gate (name, pre_call, post_call) nor a function", field="--gate"
        )
    return gate


register_gate_kind("python", lambda spec: ":" in spec and not spec.endswith((".yaml", ".yml")), load_python_gate)

"""Gate kinds, and how a `--gate` spec names one.

    --gate policy.yaml            the rule gate, driven by a YAML policy file (`toolemu.gates.rules`)
    --gate monitor                an LLM monitor role (`toolemu.gates.monitor`; --model monitor=M picks its model)
    --gate package.module:attr    any Python gate: a Gate, a class or factory returning one, or a plain function
                                  fn(call) -> GateDecision | None, used as a pre-call check

A new kind is one module and one `register_gate_kind(name, matches, build)` call; the built-in kinds are registered in
`toolemu.builtins`, on the first lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolemu.errors import InputError
from toolemu.gates.base import Gate
from toolemu.llm import ModelHub
from toolemu.registration import ensure_builtins

GateBuilder = Callable[[str, ModelHub | None], Gate]


@dataclass(frozen=True)
class GateKind:
    name: str
    matches: Callable[[str], bool]  # does a --gate spec name this kind?
    build: GateBuilder


_KINDS: list[GateKind] = []


def register_gate_kind(name: str, matches: Callable[[str], bool], build: GateBuilder) -> None:
    ensure_builtins("gates")  # the built-ins first, so a kind of one's own comes after them
    _KINDS.append(GateKind(name, matches, build))


def gate_kinds() -> list[str]:
    ensure_builtins("gates")
    return [k.name for k in _KINDS]


def build_gate(spec: str, hub: ModelHub | None = None) -> Gate:
    ensure_builtins("gates")
    for kind in _KINDS:
        if kind.matches(spec):
            return kind.build(spec, hub)
    raise InputError.single(
        "command line",
        f"expected a policy file (.yaml), 'monitor', or package.module:attribute, got {spec!r}",
        field="--gate",
    )

"""Gates between the agent and its tools (`--gate`, repeatable): a YAML rule policy, the `monitor` (its own model,
the `monitor` role), or any Python gate; each checks a call before the tool runs and its observation after."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from toolemu.episode.element_spec import POST_CALL, PRE_CALL, ElementSpec, Option, Placed

if TYPE_CHECKING:
    from toolemu.episode.builder import EpisodeBuilder

MONITOR = "monitor"  # the monitor gate's spec, and its role


@dataclass(frozen=True)
class GatesSpec(ElementSpec):
    """`gates`: `--gate` specs (policy.yaml, monitor, package.module:attr) or gate objects, in order. The run's
    identity records each as given, an object by its name."""

    name: ClassVar[str] = "gates"
    options: ClassVar[tuple[Option, ...]] = (
        Option(
            "gate",
            ("--gate",),
            "A gate between agent and tools (repeatable): policy.yaml, monitor, or package.module:attr.",
            kind=list,
            panel="Gates",
        ),
        Option(
            "monitor_model",
            ("--monitor-model",),
            "The monitor gate's model (default: --model).",
            panel="Gates",
            role=MONITOR,
        ),
    )

    gates: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "gates", tuple(self.gates))
        super().__post_init__()

    @property
    def names(self) -> list[str]:
        return [g if isinstance(g, str) else g.name for g in self.gates]

    def roles(self) -> tuple[str, ...]:
        return (MONITOR,) if MONITOR in self.gates else ()

    def identity(self) -> Any:
        return self.names or None

    @classmethod
    def recorded(cls, value: Any) -> GatesSpec:
        if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
            raise ValueError(f"expected a list of gate specs, got {value!r}")
        return cls(tuple(value))

    @classmethod
    def from_options(cls, values: Mapping[str, Any]) -> GatesSpec | None:
        return cls(tuple(values["gate"])) if values.get("gate") else None

    def build(self, builder: EpisodeBuilder) -> list[Placed]:
        """Each gate once per builder (a bad spec is bad input, found before any episode), checked before the tool
        and after it."""
        from toolemu.episode.elements import GateElement
        from toolemu.errors import InputError
        from toolemu.gates import build_gate

        gates = [build_gate(g, builder.hub) if isinstance(g, str) else g for g in self.gates]
        names = [g.name for g in gates]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            raise InputError.single("command line", f"expected gates with distinct names, {twice!r} twice", "--gate")
        return [
            *((PRE_CALL, GateElement(g, "pre_call")) for g in gates),
            *((POST_CALL, GateElement(g, "post_call")) for g in gates),
        ]

    def after_run(self, folder: Path) -> list[str]:
        """run.json's gate audit: every decision of the folder's episodes so far, counted."""
        from toolemu.log.audit import record_gate_audit

        if self.gates:
            record_gate_audit(folder, self.names)
        return []

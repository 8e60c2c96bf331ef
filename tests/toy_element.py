"""A toy episode element, all of it in this one module: a stamp on every observation the emulated tool gives.

Its spec declares its settings (the stamp's text), its option (`--stamp TEXT`, and `--stamp-model` for its role),
its model role (`stamper`: its model is asked for when the element is built, so a driver whose hub does not list the
role fails), its place in the pipeline (right after the tool), its share of the run's identity, and what it records in
a run folder after a run (`stamps.txt`). `register_element(StampSpec)` is the one registration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from toolemu.episode.element_spec import AFTER_TOOL, ElementSpec, Option, Placed
from toolemu.llm.usage import Usage

ROLE = "stamper"


class Stamp:
    """The call element: the tool's observation, stamped (a gate's or the user's answer is left alone)."""

    name = "stamp"

    def __init__(self, text: str, model: Any) -> None:
        self.text, self.model = text, model

    def process(self, call: Any, state: Any) -> None:
        if call.emulation is not None and call.observation is not None and not call.denied:
            call.observation = f"{call.observation} [{self.text}]"
            state.add_usage(ROLE, Usage())


@dataclass(frozen=True)
class StampSpec(ElementSpec):
    name: ClassVar[str] = "stamp"
    options: ClassVar[tuple[Option, ...]] = (
        Option("stamp", ("--stamp",), "Stamp every emulated observation with this text.", panel="Toy"),
        Option("stamp_model", ("--stamp-model",), "The stamper's model.", panel="Toy", role=ROLE),
    )

    text: str

    def roles(self) -> tuple[str, ...]:
        return (ROLE,)

    def identity(self) -> Any:
        return {"text": self.text}

    @classmethod
    def recorded(cls, value: Any) -> StampSpec:
        return cls(value["text"])

    @classmethod
    def from_options(cls, values: Mapping[str, Any]) -> StampSpec | None:
        return cls(values["stamp"]) if values.get("stamp") else None

    def build(self, builder: Any) -> list[Placed]:
        return [(AFTER_TOOL, Stamp(self.text, builder.hub.model(ROLE)))]

    def start(self, state: Any, builder: Any) -> None:
        state.usage.setdefault(ROLE, Usage())

    def after_run(self, folder: Path) -> list[str]:
        (folder / "stamps.txt").write_text(self.text, encoding="utf-8")
        return [f"stamped with {self.text}"]

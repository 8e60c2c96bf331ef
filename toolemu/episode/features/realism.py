"""The realism filter (`--realism-filter N`): an emulated observation the realism checks flag (and, with a judge
model, the `realism` role, `--model realism=M`, flags) is drafted again, told why, at most N times, before the agent
sees it (`toolemu.episode.realism_filter`). Its model calls count under the `realism` role."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from toolemu.episode.element_spec import AFTER_TOOL, Count, ElementSpec, Option, Placed, refuse

if TYPE_CHECKING:
    from toolemu.episode.builder import EpisodeBuilder
    from toolemu.episode.state import EpisodeState

ROLE = "realism"  # its judge's role, and the usage of its redrafts
OFF_OR_REDRAFTS = Count(0, 10, "redrafts per observation")  # the option: 0 is off
REDRAFTS = Count(1, 10, "redrafts per observation")


@dataclass(frozen=True)
class RealismSpec(ElementSpec):
    name: ClassVar[str] = "realism_filter"
    bounds: ClassVar[Mapping[str, Count]] = {"redrafts": REDRAFTS}
    options: ClassVar[tuple[Option, ...]] = (
        Option(
            "realism_filter",
            ("--realism-filter",),
            "Emulate an observation the realism checks flag again, at most N times, before the agent sees it (0: "
            "off; {range}).",
            kind=int,
            default=0,
            panel="Realism",
            count=OFF_OR_REDRAFTS,
        ),
        Option(
            "realism_model",
            ("--realism-model",),
            "The realism filter's judge model (without it, the filter's rules alone decide).",
            panel="Realism",
            role=ROLE,
        ),
    )

    redrafts: int
    judge: bool = False  # a judge model reviews what the rules pass

    def roles(self) -> tuple[str, ...]:
        return (ROLE,) if self.judge else ()

    def identity(self) -> Any:
        return {"redrafts": self.redrafts, "judge": self.judge}

    @classmethod
    def recorded(cls, value: Any) -> RealismSpec:
        if not isinstance(value, dict) or not isinstance(value.get("judge", False), bool):
            raise ValueError(f"expected the filter's settings as {{redrafts, judge}}, got {value!r}")
        return cls(value.get("redrafts"), value.get("judge", False))  # type: ignore[arg-type]

    @classmethod
    def from_options(cls, values: Mapping[str, Any]) -> RealismSpec | None:
        redrafts, model = values.get("realism_filter") or 0, values.get("realism_model")
        if model and not redrafts:
            raise refuse("--model realism=", "expected --realism-filter N (N >= 1) with it")
        return cls(redrafts, bool(model)) if redrafts else None

    def build(self, builder: EpisodeBuilder) -> list[Placed]:
        from toolemu.emulator.realism_judge import RealismJudge
        from toolemu.episode.realism_filter import RealismFilter

        judge = RealismJudge(builder.hub.model(ROLE)) if self.judge else None
        assert builder.emulator is not None
        return [(AFTER_TOOL, RealismFilter(builder.emulator, self.redrafts, judge, builder.stop))]

    def start(self, state: EpisodeState, builder: EpisodeBuilder) -> None:
        from toolemu.llm.usage import Usage

        state.usage.setdefault(ROLE, Usage())

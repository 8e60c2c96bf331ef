"""The episode spec: what shapes every episode of a run, one typed value that every driver builds its episodes from.

    spec = EpisodeSpec(agent_format="react", elements=(GatesSpec(("policy.yaml",)), UserSpec(max_user_turns=3)))
    hub = build_hub(settings, spec.roles())                    # exactly the roles the spec lists
    builder = EpisodeBuilder(hub, spec, bench)

The agent's seat (type and format), the emulator's type and the step limit are its own; every feature is an element
spec (`toolemu.episode.element_spec`), registered once, so run, emulate, play, gym, robust, noise, fidelity and
`mcp serve` each get every feature. A run's settings hold the same (`RunConfig`: `run_config()` and `of()` go
between them), so a run.json records the spec's identity and a driver that re-runs a run (robust, noise) reads its
spec back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from toolemu.episode.element_spec import Count, ElementSpec, element_class, in_order
from toolemu.errors import InputError
from toolemu.log import RUN_FILE, RunConfig
from toolemu.paths import DEFAULT_MAX_ITERATIONS

E = TypeVar("E", bound=ElementSpec)
ITERATIONS = Count(1, 1_000, "agent steps per episode")
CORE_ROLES = ("agent", "emulator")


@dataclass(frozen=True)
class EpisodeSpec:
    agent_type: str = "naive"
    agent_format: str = "auto"
    simulator_type: str = "adv_thought"
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    elements: tuple[ElementSpec, ...] = ()

    def __post_init__(self) -> None:
        problem = ITERATIONS.problem(self.max_iterations)
        if problem is not None:
            raise ValueError(f"max_iterations: {problem}")
        object.__setattr__(self, "elements", in_order(self.elements))

    @classmethod
    def of(cls, config: RunConfig, source: str | Path = RUN_FILE) -> EpisodeSpec:
        """The spec of a run's settings. An element read from a run.json (`source`) is read back as its registered
        spec: one this process has not registered, or cannot read, is bad input naming the file and the field."""
        elements = []
        for element in config.elements:
            if not isinstance(element, ElementSpec):
                kind = element_class(element.name)
                if kind is None:
                    message = f"expected an episode element registered in this process, {element.name!r} is not"
                    raise InputError.single(source, message, field=f"config.{element.name}")
                try:
                    element = kind.recorded(element.identity())
                except (TypeError, ValueError) as exc:
                    raise InputError.single(source, f"cannot be read: {exc}", field=f"config.{element.name}") from None
            elements.append(element)
        return cls(
            config.agent_type, config.agent_format, config.simulator_type, config.max_iterations, tuple(elements)
        )

    def run_config(self, **settings: Any) -> RunConfig:
        """The run's settings with this spec (`settings`: the run's others: selection, driver, agent)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return RunConfig(**{**fields, **settings})

    def roles(self, played: Collection[str] = ()) -> tuple[str, ...]:
        """The model roles its episodes ask for, each once: the agent and the emulator, then each element's; less
        the roles `played` by someone other than a model (a person, an agent outside)."""
        roles = dict.fromkeys([*CORE_ROLES, *(r for e in self.elements for r in e.roles())])
        return tuple(r for r in roles if r not in played)

    def get(self, kind: type[E]) -> E | None:
        """Its element of that kind, if it has one."""
        return next((e for e in self.elements if isinstance(e, kind)), None)

    def with_elements(self, *elements: ElementSpec) -> EpisodeSpec:
        """The spec with these elements in place of any of the same names."""
        names = {e.name for e in elements}
        return dataclasses.replace(self, elements=(*(e for e in self.elements if e.name not in names), *elements))

    def after_run(self, folder: Path) -> list[str]:
        """What the elements record in a run folder once a driver has written episodes to it; lines to show."""
        return [line for e in self.elements for line in e.after_run(folder)]

"""What a run was asked to do: its settings (`RunConfig`), as `toolemu.run` takes them and run.json records them.

run.json keeps two parts of it apart, as it always has: `config`, the settings that must match for a folder to be
resumed or added to (`identity()`), and `selection`, what picked the (case, trial) pairs (`selection()`). Reading a
run.json puts both back into one RunConfig; how fast it ran (`batch_size`) is not recorded there.

The episode's elements (the gates, the simulated user, a replay, the realism filter, any registered one:
`toolemu.episode.element_spec`) are in `elements`, each adding its own share to the identity under its name, and
recording nothing where it adds nothing (a replay). Read back from run.json, an element is a `RecordedElement`, its
share as written; `toolemu.episode.spec.EpisodeSpec.of` reads each back as its registered spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolemu.log.model import ModelDescription
from toolemu.paths import DEFAULT_MAX_ITERATIONS

# What picks the (case, trial) pairs; recorded in run.json so shards can be merged and checked for gaps.
SELECTION_FIELDS = ("num_trials", "case_names", "start_index", "trunc_num", "shuffle", "seed")
# The bounds below are the CLI's (toolemu/cli/limits.py; tests/test_bounds_hostile.py checks they agree): the library,
# and a run.json that a resume or `toolemu robust` reads back, refuse the same typo (a count that would loop or
# allocate without end).
MAX_SHARDS = 100_000


class RobustWorld(BaseModel):
    """Which world a robust re-run folder holds: the run it re-runs, the seed, and the emulator that drew it."""

    source: str
    seed: int
    emulator: ModelDescription


@dataclass(frozen=True)
class RecordedElement:
    """An episode element as run.json records it: its name and its share of the run's identity."""

    name: str
    value: Any

    def identity(self) -> Any:
        return self.value


class RunConfig(BaseModel):
    """A run's settings. `gym`, `play`, `mcp` and `robust` mark folders written by those drivers rather than
    `toolemu run`."""

    model_config = ConfigDict(extra="forbid")  # a setting this version does not have is an error, never ignored

    agent_type: str = "naive"
    agent_format: str = "auto"
    agent: str | None = None  # a registered or imported agent other than ours (`--agent`)
    simulator_type: str = "adv_thought"
    num_trials: int = Field(default=1, ge=1, le=1000)
    max_iterations: int = Field(default=DEFAULT_MAX_ITERATIONS, ge=1, le=1000)
    batch_size: int = Field(default=1, ge=1, le=1024)
    case_names: list[str] | None = None
    start_index: int = Field(default=0, ge=0, le=1_000_000)
    trunc_num: int | None = Field(default=None, ge=1, le=1_000_000)
    shuffle: bool = False
    seed: int = 0
    shard: tuple[int, int] | None = None  # (i, n): only pair j of the selection with j % n == i
    # The episode's elements: element specs (toolemu.episode.element_spec), or RecordedElements read from run.json.
    elements: tuple[Any, ...] = ()
    gym: str | None = None  # a gym environment's folder: the outside agent's action format
    play: str | None = None  # a played folder: the side the person took ("agent" or "user")
    reward_scorer: str | None = None  # the gym's reward
    mcp: str | None = None  # a folder of `toolemu mcp serve` sessions: how they end ("final_answer" tool, or "close")
    robust: RobustWorld | None = None  # a robust re-run folder

    @field_validator("shard")
    @classmethod
    def _valid_shard(cls, shard: tuple[int, int] | None) -> tuple[int, int] | None:
        if shard is not None and not 0 <= shard[0] < shard[1] <= MAX_SHARDS:
            raise ValueError(f"expected i/n with 0 <= i < n <= {MAX_SHARDS:,}, got {shard[0]}/{shard[1]}")
        return shard

    @field_validator("elements")
    @classmethod
    def _valid_elements(cls, elements: tuple[Any, ...]) -> tuple[Any, ...]:
        names = []
        for element in elements:
            if not isinstance(getattr(element, "name", None), str) or not callable(getattr(element, "identity", None)):
                raise ValueError(f"expected episode element specs, got {type(element).__name__}")
            names.append(element.name)
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            raise ValueError(f"expected one element per name, {twice!r} twice")
        return elements

    def identity(self) -> dict[str, Any]:
        """What must match for a folder to be resumed (or added to) with these settings: run.json's `config`.
        Keys appear only where a setting is on, so folders written before it existed resume as before."""
        if self.gym is not None:
            ident: dict[str, Any] = {"gym": self.gym, "simulator_type": self.simulator_type}
        elif self.play is not None:
            ident = {"play": self.play, "simulator_type": self.simulator_type}
        elif self.mcp is not None:
            ident = {"mcp": self.mcp, "simulator_type": self.simulator_type}
        else:
            ident = {"agent_type": self.agent_type, "agent_format": self.agent_format}
            ident["simulator_type"] = self.simulator_type
        ident["max_iterations"] = self.max_iterations
        if self.play == "user":  # the model is the agent
            ident.update(agent_type=self.agent_type, agent_format=self.agent_format)
        if self.agent is not None:
            ident["agent"] = self.agent
        if self.shard is not None:
            ident["shard"] = list(self.shard)
        for element in self.elements:
            share = element.identity()
            if share is not None:
                ident[element.name] = share
        if self.reward_scorer is not None:
            ident["reward_scorer"] = self.reward_scorer
        if self.robust is not None:
            ident["robust"] = self.robust.model_dump(mode="json")
        return ident

    def element(self, name: str) -> Any:
        """An element's share of the identity, as run.json records it (None: the run had no such element)."""
        return next((e.identity() for e in self.elements if e.name == name), None)

    def selection(self) -> dict[str, Any]:
        return self.model_dump(include=set(SELECTION_FIELDS))

    def same_run(self, other: RunConfig) -> bool:
        return self.identity() == other.identity()

    @classmethod
    def recorded(cls, identity: dict[str, Any], selection: dict[str, Any] | None = None) -> RunConfig:
        """The settings run.json records: its `config` (the identity) and `selection`, as one RunConfig; a key that
        is none of its own settings is an element's share (kept as it is, in its order)."""
        data = {**(selection or {}), **identity}
        own = set(cls.model_fields) - {"elements"}
        data["elements"] = tuple(RecordedElement(k, v) for k, v in identity.items() if k not in own)
        return cls.model_validate({k: v for k, v in data.items() if k in own or k == "elements"})

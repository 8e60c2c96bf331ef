"""What a run was asked to do: its settings (`RunConfig`), as `toolemu.run` takes them and run.json records them.

run.json keeps two parts of it apart, as it always has: `config`, the settings that must match for a folder to be
resumed or added to (`identity()`), and `selection`, what picked the (case, trial) pairs (`selection()`). Reading a
run.json puts both back into one RunConfig; how fast it ran (`batch_size`) and where it replayed from (`replay`) are
not recorded there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from toolemu.llm.options import ModelDescription

DEFAULT_MAX_ITERATIONS = 15
DEFAULT_MAX_USER_TURNS = 5
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


class RunConfig(BaseModel):
    """A run's settings. `gym`, `play`, `mcp` and `robust` mark folders written by those drivers rather than
    `toolemu run`."""

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
    gates: list[str] = Field(default_factory=list)  # --gate specs, in order
    user: bool = False  # the simulated user answers the agent's AskUser questions
    max_user_turns: int = Field(default=DEFAULT_MAX_USER_TURNS, ge=1, le=100)
    user_reasks: int = Field(default=0, ge=0, le=10)  # a reply stating facts the user was never given: asked again
    user_reviewer: bool = False  # a reviewer model (role "reviewer") checks user replies beside the rules
    realism_filter: int = Field(default=0, ge=0, le=10)  # redrafts of a flagged observation before the agent sees it
    realism_judge: bool = False  # the filter asks a judge model (role "realism") besides its rules
    # A recorded run whose observations are reused where the prefix matches (toolemu.episode.replay). Not part of
    # the identity: reused observations are the ones this emulator would be keyed to give.
    replay: Path | None = None
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
        if self.gates:
            ident["gates"] = list(self.gates)
        if self.user:
            ident["user"] = {"max_user_turns": self.max_user_turns}
            if self.user_reasks:
                ident["user"]["reasks"] = self.user_reasks
            if self.user_reviewer:
                ident["user"]["reviewer"] = True
        if self.realism_filter:
            ident["realism_filter"] = {"redrafts": self.realism_filter, "judge": self.realism_judge}
        if self.reward_scorer is not None:
            ident["reward_scorer"] = self.reward_scorer
        if self.robust is not None:
            ident["robust"] = self.robust.model_dump(mode="json")
        return ident

    def selection(self) -> dict[str, Any]:
        return self.model_dump(include=set(SELECTION_FIELDS))

    def same_run(self, other: RunConfig) -> bool:
        return self.identity() == other.identity()

    @classmethod
    def recorded(cls, identity: dict[str, Any], selection: dict[str, Any] | None = None) -> RunConfig:
        """The settings run.json records: its `config` (the identity) and `selection`, as one RunConfig."""
        data = {**(selection or {}), **identity}
        user = data.pop("user", None)
        if isinstance(user, dict):  # on disk the user is on when its settings are there
            data["user"] = True
            if "max_user_turns" in user:
                data["max_user_turns"] = user["max_user_turns"]
            data["user_reasks"] = user.get("reasks", 0)
            data["user_reviewer"] = user.get("reviewer", False)
        realism = data.pop("realism_filter", None)
        if isinstance(realism, dict):
            data["realism_filter"] = realism.get("redrafts", 0)
            data["realism_judge"] = realism.get("judge", False)
        return cls.model_validate(data)

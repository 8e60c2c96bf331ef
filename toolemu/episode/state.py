"""The state one episode's pipeline elements read and write."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from toolemu.agents import AgentTurn
from toolemu.emulator import Emulation
from toolemu.episode.keys import case_id
from toolemu.llm.usage import Usage
from toolemu.log import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MAX_USER_TURNS,
    Actor,
    GateDecision,
    GatePhase,
    RejectedDraft,
    RunConfig,
    Step,
    ToolCall,
    UserReply,
)
from toolemu.specs.models import Case, Toolkit
from toolemu.user import ASK_USER_KIT


def trial_salt(trial: int) -> str:
    """Separates the cache entries (and so the emulated worlds) of repeated trials; trial 0 shares the cache with
    single-trial runs."""
    return f"trial-{trial}" if trial else ""


class Interrupted(Exception):
    """The run is stopping (Ctrl-C or a budget): this episode is abandoned and not recorded."""


@dataclass
class EpisodeConfig:
    """What every episode of a run shares: the run's settings that shape an episode, and the run's stop signal."""

    run_id: str
    agent_type: str = "naive"
    agent_format: str = "auto"
    simulator_type: str = "adv_thought"
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    stop: threading.Event = field(default_factory=threading.Event)
    user: bool = False  # the simulated user answers AskUser; off: ToolEmu's single-turn episode
    max_user_turns: int = DEFAULT_MAX_USER_TURNS
    user_reasks: int = 0  # a user reply stating facts the user was never given is asked again, this many times
    user_reviewer: bool = False  # a reviewer model checks user replies beside the rules
    realism_filter: int = 0  # redrafts of a flagged observation before the agent sees it (0: no filter)
    realism_judge: bool = False  # the filter asks a judge model besides its rules

    @classmethod
    def of(cls, config: RunConfig, run_id: str = "", stop: threading.Event | None = None) -> EpisodeConfig:
        return cls(
            run_id,
            config.agent_type,
            config.agent_format,
            config.simulator_type,
            config.max_iterations,
            stop or threading.Event(),
            user=config.user,
            max_user_turns=config.max_user_turns,
            user_reasks=config.user_reasks,
            user_reviewer=config.user_reviewer,
            realism_filter=config.realism_filter,
            realism_judge=config.realism_judge,
        )


@dataclass
class PendingCall:
    """A tool call on its way through the pipeline: proposed by the agent, judged by gates, run by the tool."""

    call: ToolCall
    actor: Actor = "agent"  # the user acts on their own toolkits too (a step by the user)
    gates: list[GateDecision] = field(default_factory=list)
    blocked: GatePhase | None = None
    observation: str | None = None
    emulation: Emulation | None = None
    user_reply: UserReply | None = None  # an AskUser call the user answered
    obs_key: str = ""  # the observation's replay key, where the tool (or a replay) answered the call
    replayed: bool = False  # answered from a recorded run (toolemu.episode.replay), not emulated
    rejected_drafts: list[RejectedDraft] = field(default_factory=list)  # turned down by the realism filter

    @property
    def tool(self) -> str:
        return self.call.tool

    @property
    def tool_input(self) -> dict[str, Any] | str:
        return self.call.tool_input

    @property
    def denied(self) -> bool:
        return self.blocked is not None


@dataclass
class EpisodeState:
    case: Case
    case_idx: int
    trial: int
    kits: list[Toolkit]
    salt: str  # separates the cache entries of repeated trials
    steps: list[Step] = field(default_factory=list)
    usage: dict[str, Usage] = field(default_factory=dict)
    ask_user: bool = False  # the agent has the AskUser action
    user_kits: list[Toolkit] = field(default_factory=list)  # toolkits only the user can use
    user_turns: int = 0  # questions the user has answered
    user_left: bool = False  # the user ended the conversation
    emulator_id: str = ""  # the emulator's configuration id, once it (or a replay of it) answered a call
    turn: AgentTurn | None = None  # the agent's turn, between the agent's step and the tool calls'
    turns: int = 0  # turns applied so far
    ended: tuple[str, str] | None = None  # (status, output) once the episode is over
    _case_key: str = ""

    @property
    def case_key(self) -> str:
        """The case's part of every observation's replay key: a hash of all of it."""
        if not self._case_key:
            self._case_key = case_id(self.case.to_json())
        return self._case_key

    @property
    def agent_kits(self) -> list[Toolkit]:
        """What the agent may call: the case's toolkits, and AskUser when the simulated user is on."""
        return [*self.kits, ASK_USER_KIT] if self.ask_user else self.kits

    @property
    def agent_steps(self) -> list[Step]:
        """What the agent saw: its own calls and their observations, never the user's actions on its devices."""
        return [s for s in self.steps if not s.by_user]

    def add_usage(self, role: str, usage: Usage | None) -> None:
        if usage is not None:
            self.usage.setdefault(role, Usage()).add(usage)

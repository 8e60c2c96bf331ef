"""The state one episode's pipeline elements read and write."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from toolemu.agents import AgentTurn
from toolemu.emulator import Emulation
from toolemu.episode.keys import case_id
from toolemu.gates.base import OfCall
from toolemu.llm.usage import Usage
from toolemu.log import Actor, GateDecision, GatePhase, RejectedDraft, Step, ToolCall, UserReply
from toolemu.specs.models import Case, Toolkit
from toolemu.user import ASK_USER_KIT


def trial_salt(trial: int) -> str:
    """Separates the cache entries (and so the emulated worlds) of repeated trials; trial 0 shares the cache with
    single-trial runs."""
    return f"trial-{trial}" if trial else ""


class Interrupted(Exception):
    """The run is stopping (Ctrl-C or a budget): this episode is abandoned and not recorded."""


@dataclass
class PendingCall(OfCall):
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
    stop: threading.Event = field(default_factory=threading.Event)  # the run's stop request (Ctrl-C, a budget)
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

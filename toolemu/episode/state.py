"""The state one episode's pipeline elements read and write."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from toolemu.emulator import Emulation
from toolemu.llm.usage import Usage
from toolemu.log import GateDecision, GatePhase, Step
from toolemu.specs.models import Case, Toolkit

DEFAULT_MAX_ITERATIONS = 15


class Interrupted(Exception):
    """The run is stopping (Ctrl-C or a budget): this episode is abandoned and not recorded."""


@dataclass
class EpisodeConfig:
    run_id: str
    agent_type: str = "naive"
    agent_format: str = "auto"
    simulator_type: str = "adv_thought"
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass
class PendingCall:
    """A tool call on its way through the pipeline: proposed by the agent, judged by gates, run by the tool."""

    tool: str
    tool_input: Any
    gates: list[GateDecision] = field(default_factory=list)
    blocked: GatePhase | None = None
    observation: str | None = None
    emulation: Emulation | None = None

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
    output: str | None = None  # the final answer, once given
    finished_status: str | None = None  # final_answer or quit, once the agent is done

    def add_usage(self, role: str, usage: Usage | None) -> None:
        if usage is not None:
            self.usage.setdefault(role, Usage()).add(usage)

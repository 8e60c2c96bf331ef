"""One episode builder for every driver: the runner, robust re-runs, noise, gym, play, fidelity, an MCP session.

    builder = EpisodeBuilder(hub, spec, bench, agent=get_agent(name), run_id=run_id)
    trajectory = builder.run(case, case_idx, trial)            # the runner: the whole episode

    episode = builder.start(case, case_idx, trial)             # a driver that runs the agent itself
    episode.apply(turn)                                        # one turn at a time (gym, play, MCP)
    trajectory = episode.finish()

From the models (a hub that lists the spec's roles) and the spec (`toolemu.episode.spec`), it builds what an episode
needs: the emulated tool and each element's call elements, in their places (`toolemu.episode.element_spec`), once;
then per episode its state and its pipeline (`toolemu.episode.pipeline`), and at the end the trajectory. Never raises
for a model or parse failure: the episode ends in error, with the reason.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from toolemu.agents import AgentLike, AgentTurn
from toolemu.agents.registry import AgentFactory, AgentSetup, default_agent
from toolemu.emulator import Emulator
from toolemu.episode.element_spec import TOOL
from toolemu.episode.elements import CallElement, ToolElement
from toolemu.episode.pipeline import AgentStep, Chain, EpisodeElement, Loop, ToolCalls, apply_turn
from toolemu.episode.spec import CORE_ROLES, EpisodeSpec
from toolemu.episode.state import EpisodeState, Interrupted, trial_salt
from toolemu.llm import ModelHub, StopRun
from toolemu.llm.usage import Usage
from toolemu.log import (
    EpisodeError,
    PolicyView,
    Step,
    Trajectory,
    accumulate,
    now,
    toolemu_intermediate_steps,
)
from toolemu.log.model import ModelDescription
from toolemu.prompts.agent import policy_text
from toolemu.secrets import clip
from toolemu.specs import Benchmark, Case
from toolemu.specs.models import Toolkit
from toolemu.specs.policy import PolicyDoc
from toolemu.user import UserLike

ADVERSARIAL = ("adv_thought", "adversarial")


@runtime_checkable
class EpisodeDriver(Protocol):
    """An agent that drives its own episode rather than answering `next_turn` (an outside agent over MCP:
    `toolemu.mcp.command`). `drive` applies the turns it gets (`Episode.apply`) until the episode ends, and returns
    the roles someone other than the hub's models played (for `Episode.finish`)."""

    format: str

    def drive(self, episode: Episode) -> dict[str, ModelDescription]: ...


class OutsideAgent:
    """The agent seat of an episode driven from outside (a gym's `step`, an MCP client's calls): the driver applies
    each turn it gets (`Episode.apply`), and nothing inside asks this agent for one."""

    def __init__(self, format: str) -> None:
        self.format = format

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        raise RuntimeError(f"an episode driven from outside ({self.format}) gets its turns from its driver")


@dataclass
class EpisodeBuilder:
    """What every episode of a run shares. `agent`: a factory (`toolemu.agents.registry`), ours by default.
    `run_id`: what its trajectories name (a driver may set it once its folder is open); `stop`: the run's stop
    request. `user`: who answers AskUser when the spec has the user, if not a simulated one (a person at a terminal).
    `emulator`: the tool (default: the `emulator` role's model, of the spec's type). Each element is built here, once:
    a bad gate is bad input before any episode runs."""

    hub: ModelHub
    spec: EpisodeSpec
    bench: Benchmark
    agent: AgentFactory = default_agent
    run_id: str = ""
    stop: threading.Event = field(default_factory=threading.Event)
    user: UserLike | None = None
    emulator: Emulator | None = None
    elements: list[CallElement] = field(init=False)

    def __post_init__(self) -> None:
        if self.emulator is None:
            self.emulator = Emulator(self.hub.model("emulator"), self.spec.simulator_type)
        placed = [(TOOL, ToolElement(self.emulator))]
        for element in self.spec.elements:
            placed += element.build(self)
        self.elements = [element for _, element in sorted(placed, key=lambda p: p[0])]  # stable: in spec order

    def stopping(self) -> None:
        """Raises Interrupted once the run is stopping: for loops inside one call (the user's re-asks)."""
        if self.stop.is_set():
            raise Interrupted()

    def make_agent(self, policies: Sequence[PolicyDoc]) -> AgentLike:
        policy = policy_text([p.text for p in policies]) if policies else ""
        spec = self.spec
        return self.agent(AgentSetup(self.hub.model("agent"), spec.agent_type, spec.agent_format, policy, self.hub))

    def start(
        self,
        case: Case,
        case_idx: int,
        trial: int,
        *,
        agent: AgentLike | None = None,
        policies: Sequence[PolicyDoc] | None = None,
    ) -> Episode:
        """A fresh episode of `case`: nothing done yet. `agent`: one the driver made (a person at a terminal);
        `policies`: the ones the agent is given (default: the case's and its toolkits')."""
        policies = list(self.bench.policies_for(case) if policies is None else policies)
        state = EpisodeState(
            case=case,
            case_idx=case_idx,
            trial=trial,
            kits=self.bench.toolkits_for(case),
            salt=trial_salt(trial),
            usage={role: Usage() for role in CORE_ROLES},
            stop=self.stop,
        )
        for element in self.spec.elements:
            element.start(state, self)
        episode = Episode(self, state, self.elements, policies, agent)
        if agent is None:  # an agent that cannot be made ends its episode in error, as any other failure does
            episode.guard(lambda: setattr(episode, "agent", self.make_agent(policies)))
        return episode

    def run(self, case: Case, case_idx: int, trial: int) -> Trajectory:
        """The whole episode, the agent driving it. Raises Interrupted (the run is stopping) and StopRun (a budget,
        a refused key): the pair is then not run at all."""
        episode = self.start(case, case_idx, trial)
        agent = episode.agent
        if isinstance(agent, EpisodeDriver):  # the agent runs the episode itself; its failure ends it in error
            models: dict[str, ModelDescription] = {}
            episode.guard(lambda: models.update(agent.drive(episode)))
            return episode.finish(models=models)
        episode.run()
        return episode.finish()


@dataclass
class Episode:
    """One (case, trial) under way."""

    builder: EpisodeBuilder
    state: EpisodeState
    elements: list[CallElement]
    policies: list[PolicyDoc]
    agent: AgentLike | None  # None: its factory failed (the episode has ended in error)
    started: str = field(default_factory=now)
    error: EpisodeError | None = None

    @property
    def spec(self) -> EpisodeSpec:
        return self.builder.spec

    def pipeline(self, before: Sequence[EpisodeElement] = (), limit: int | None = None) -> EpisodeElement:
        """The agent's loop (after `before`, e.g. recorded turns played again), `limit` turns at most."""
        assert self.agent is not None, "an episode whose agent could not be made has ended"
        loop = Loop(Chain(AgentStep(self.agent), ToolCalls(self.elements)), limit)
        return Chain(*before, loop)

    def run(self, pipeline: EpisodeElement | None = None, *, raising: tuple[type[Exception], ...] = ()) -> None:
        """Drive the episode through `pipeline` (default: the agent's loop). A model or parse failure ends it in
        error; a stop (Ctrl-C, a budget, a refused key), and any of `raising`, is raised."""
        if self.state.ended is None:
            self.guard(lambda: (pipeline or self.pipeline()).run(self.state, self.spec), raising)

    def apply(self, turn: AgentTurn) -> tuple[str, str] | None:
        """One turn the driver got from its agent; the (status, output) that ends the episode, else None. A failure
        is raised (the driver decides: the gym ends the episode in error)."""
        return apply_turn(turn, self.elements, self.state)

    def guard(self, action: Any, raising: tuple[type[Exception], ...] = ()) -> None:
        try:
            action()
        except (Interrupted, StopRun, *raising):  # the run is stopping: this pair is not run, not failed
            raise
        except Exception as exc:  # noqa: BLE001 - any failure is recorded with its reason, and the run goes on
            self.fail(exc)

    def fail(self, exc: BaseException, error_type: str | None = None, message: str | None = None) -> None:
        """End the episode in error, with its reason."""
        self.error = EpisodeError(type=error_type or type(exc).__name__, message=clip(message or str(exc), 2000))
        self.state.ended = ("error", "")

    def finish(self, agent_format: str | None = None, models: dict[str, ModelDescription] | None = None) -> Trajectory:
        """The trajectory as recorded: ToolEmu's fields and ours. `models`: roles played by someone other than a
        model of the hub (a person, an outside agent)."""
        state, spec, builder = self.state, self.spec, self.builder
        status, output = state.ended or ("error", "")
        case = state.case
        total = Usage()
        for u in state.usage.values():
            total.add(u)
        adversarial: dict[str, Any] = {}
        if spec.simulator_type in ADVERSARIAL:
            adversarial = {
                "underspecifications": case.underspecifications.to_json(),
                "risky_outcome": case.potential_risky_outcomes,
                "risky_actions": case.potential_risky_actions,
            }
        # Who played: the agent and the emulator, each element's role that took part, and `models`.
        models = models or {}
        described: dict[str, ModelDescription] = {}
        for role in (r for r in spec.roles() if r in CORE_ROLES or r in state.usage):
            if role in models:
                described[role] = models[role]
            elif role == "emulator" and builder.emulator is not None:
                described[role] = builder.emulator.model.options.description()
            else:
                described[role] = builder.hub.options_for(role).description()
        return Trajectory(
            input=case.user_instruction,
            output=output,
            intermediate_steps=toolemu_intermediate_steps(state.steps, status, output),
            case=case.to_json(),
            case_idx=state.case_idx,
            run_id=builder.run_id,
            case_name=case.name,
            trial=state.trial,
            status=status,  # type: ignore[arg-type]
            error=self.error,
            steps=state.steps,
            agent_type=spec.agent_type,
            agent_format=agent_format or getattr(self.agent, "format", spec.agent_format),
            simulator_type=spec.simulator_type,
            models={**described, **models},
            usage={"total": total, **state.usage},
            cost_usd=round(total.cost_usd, 6),
            started_at=self.started,
            finished_at=now(),
            policies=[PolicyView.model_validate(doc.model_dump()) for doc in self.policies],
            ledger=accumulate(step.state for step in state.steps),
            emulator_id=state.emulator_id,
            **adversarial,
        )


def run_episode(
    bench: Benchmark,
    case: Case,
    case_idx: int,
    trial: int,
    hub: ModelHub,
    spec: EpisodeSpec,
    agent: AgentFactory = default_agent,
    stop: threading.Event | None = None,
) -> Trajectory:
    """One whole episode with its own builder: for a single episode (a test, a notebook); a run builds once.
    `stop`: set, it stops the episode (Interrupted)."""
    return EpisodeBuilder(hub, spec, bench, agent, stop=stop or threading.Event()).run(case, case_idx, trial)

"""One episode builder for every driver: the runner, robust re-runs, gym, play, and an MCP session.

    builder = EpisodeBuilder(hub, config, bench, agent=get_agent(spec), gates=gates)
    trajectory = builder.run(case, case_idx, trial)            # the runner: the whole episode

    episode = builder.start(case, case_idx, trial)             # a driver that runs the agent itself
    episode.apply(turn)                                        # one turn at a time (gym, play, MCP)
    trajectory = episode.finish()

From the models (a hub), the agent, the gates, the user and a replay, it builds what an episode needs: its state, its
call elements (gates, the user, a replay, the tool) and its pipeline (`toolemu.episode.pipeline`), and at the end
writes the trajectory. Never raises for a model or parse failure: the episode ends in error, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from toolemu.agents import AgentLike, AgentTurn
from toolemu.agents.registry import AgentFactory, AgentSetup, default_agent
from toolemu.emulator import Emulator
from toolemu.emulator.realism_judge import RealismJudge
from toolemu.episode.elements import CallElement, call_elements
from toolemu.episode.pipeline import AgentStep, Chain, EpisodeElement, Loop, ToolCalls, apply_turn
from toolemu.episode.realism_filter import USAGE_ROLE as REALISM_ROLE
from toolemu.episode.realism_filter import RealismFilter
from toolemu.episode.replay import ReplayIndex
from toolemu.episode.state import EpisodeConfig, EpisodeState, Interrupted, trial_salt
from toolemu.gates.base import Gate
from toolemu.llm import ModelHub, StopRun
from toolemu.llm.options import ModelDescription
from toolemu.llm.secrets import clip
from toolemu.llm.usage import Usage
from toolemu.log import (
    EpisodeError,
    PolicyView,
    Trajectory,
    accumulate,
    now,
    toolemu_intermediate_steps,
)
from toolemu.prompts.agent import policy_text
from toolemu.specs import Benchmark, Case
from toolemu.specs.policy import PolicyDoc
from toolemu.user import SimulatedUser, UserLike
from toolemu.user.honesty import ReviewedUser

ADVERSARIAL = ("adv_thought", "adversarial")


@runtime_checkable
class EpisodeDriver(Protocol):
    """An agent that drives its own episode rather than answering `next_turn` (an outside agent over MCP:
    `toolemu.mcp.command`). `drive` applies the turns it gets (`Episode.apply`) until the episode ends, and returns
    the roles someone other than the hub's models played (for `Episode.finish`)."""

    format: str

    def drive(self, episode: Episode) -> dict[str, ModelDescription]: ...


@dataclass
class EpisodeBuilder:
    """What every episode of a run shares. `agent`: a factory (`toolemu.agents.registry`), ours by default.
    `user`: who answers AskUser when the user is on (default: the `user` role's model). `emulator`: the tool
    (default: the `emulator` role's model, of the configuration's type)."""

    hub: ModelHub
    config: EpisodeConfig
    bench: Benchmark
    agent: AgentFactory = default_agent
    gates: Sequence[Gate] = ()
    user: UserLike | None = None
    replay: ReplayIndex | None = None
    emulator: Emulator | None = None

    def __post_init__(self) -> None:
        if self.emulator is None:
            self.emulator = Emulator(self.hub.model("emulator"), self.config.simulator_type)
        if self.config.user and self.user is None:
            self.user = SimulatedUser(self.hub.model("user"))
        if self.config.user and isinstance(self.user, SimulatedUser):  # its replies are reviewed for honesty
            reviewer = self.hub.model("reviewer") if self.config.user_reviewer else None
            self.user = ReviewedUser(self.user, self.config.user_reasks, reviewer, self._stopping)

    def _stopping(self) -> None:
        """Raises Interrupted once the run is stopping: for loops inside one call (the user's re-asks)."""
        if self.config.stop.is_set():
            raise Interrupted()

    def elements(self) -> list[CallElement]:
        """The call elements: every gate's pre-call check, the user (when on), a replay, the tool, every gate's
        post-call check."""
        assert self.emulator is not None
        user = self.user if self.config.user else None
        realism = None
        if self.config.realism_filter:
            judge = RealismJudge(self.hub.model(REALISM_ROLE)) if self.config.realism_judge else None
            realism = RealismFilter(self.emulator, self.config.realism_filter, judge, self.config.stop)
        return call_elements(self.emulator, list(self.gates), user, self.config.max_user_turns, self.replay, realism)

    def make_agent(self, policies: Sequence[PolicyDoc]) -> AgentLike:
        policy = policy_text([p.text for p in policies]) if policies else ""
        setup = AgentSetup(self.hub.model("agent"), self.config.agent_type, self.config.agent_format, policy, self.hub)
        return self.agent(setup)

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
            usage={
                "agent": Usage(),
                "emulator": Usage(),
                **({"user": Usage()} if self.config.user else {}),
                **({REALISM_ROLE: Usage()} if self.config.realism_filter else {}),
                **({"reviewer": Usage()} if self.config.user and self.config.user_reviewer else {}),
            },
            ask_user=self.config.user,
            user_kits=self.bench.user_toolkits_for(case) if self.config.user else [],
        )
        episode = Episode(self, state, self.elements(), policies, agent)
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
    def config(self) -> EpisodeConfig:
        return self.builder.config

    def pipeline(self, before: Sequence[EpisodeElement] = (), limit: int | None = None) -> EpisodeElement:
        """The agent's loop (after `before`, e.g. recorded turns played again), `limit` turns at most."""
        assert self.agent is not None, "an episode whose agent could not be made has ended"
        loop = Loop(Chain(AgentStep(self.agent), ToolCalls(self.elements)), limit)
        return Chain(*before, loop)

    def run(self, pipeline: EpisodeElement | None = None, *, raising: tuple[type[Exception], ...] = ()) -> None:
        """Drive the episode through `pipeline` (default: the agent's loop). A model or parse failure ends it in
        error; a stop (Ctrl-C, a budget, a refused key), and any of `raising`, is raised."""
        if self.state.ended is None:
            self.guard(lambda: (pipeline or self.pipeline()).run(self.state, self.config), raising)

    def apply(self, turn: AgentTurn) -> tuple[str, str] | None:
        """One turn the driver got from its agent; the (status, output) that ends the episode, else None. A failure
        is raised (the driver decides: the gym ends the episode in error)."""
        ended = apply_turn(turn, self.elements, self.state, self.config)
        if ended is not None:
            self.state.ended = ended
        return ended

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
        state, config, hub = self.state, self.config, self.builder.hub
        status, output = state.ended or ("error", "")
        case = state.case
        total = Usage()
        for u in state.usage.values():
            total.add(u)
        adversarial: dict[str, Any] = {}
        if config.simulator_type in ADVERSARIAL:
            adversarial = {
                "underspecifications": case.underspecifications.to_json(),
                "risky_outcome": case.potential_risky_outcomes,
                "risky_actions": case.potential_risky_actions,
            }
        roles = ("agent", "emulator", *(("user",) if config.user else ()))
        if config.realism_filter and config.realism_judge:
            roles += (REALISM_ROLE,)
        if config.user and config.user_reviewer:
            roles += ("reviewer",)
        if "monitor" in state.usage:  # the monitor gate asked its model (its use is the episode's monitor role)
            roles += ("monitor",)
        emulator = self.builder.emulator
        described = {role: hub.options_for(role).description() for role in roles}
        if emulator is not None:
            described["emulator"] = emulator.model.options.description()
        return Trajectory(
            input=case.user_instruction,
            output=output,
            intermediate_steps=toolemu_intermediate_steps(state.steps, status, output),
            case=case.to_json(),
            case_idx=state.case_idx,
            run_id=config.run_id,
            case_name=case.name,
            trial=state.trial,
            status=status,  # type: ignore[arg-type]
            error=self.error,
            steps=state.steps,
            agent_type=config.agent_type,
            agent_format=agent_format or getattr(self.agent, "format", config.agent_format),
            simulator_type=config.simulator_type,
            models={**described, **(models or {})},
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
    config: EpisodeConfig,
    gates: Sequence[Gate] = (),
    agent: AgentFactory = default_agent,
    replay: ReplayIndex | None = None,
) -> Trajectory:
    """One whole episode with its own builder: for a single episode (a test, a notebook); a run builds once."""
    return EpisodeBuilder(hub, config, bench, agent, gates or (), replay=replay).run(case, case_idx, trial)

"""One case, one trial: the agent proposes, the call elements (gates, the user, the tool) dispose, until a final
answer, a quit, or the iteration limit."""

from __future__ import annotations

import inspect
import json
from typing import Any

from toolemu.agents import Agent, AgentLike, AgentTurn
from toolemu.emulator import Emulator
from toolemu.episode.elements import CallElement, call_elements
from toolemu.episode.replay import ReplayIndex
from toolemu.episode.state import EpisodeConfig, EpisodeState, Interrupted, PendingCall, trial_salt
from toolemu.gates.base import Gate
from toolemu.llm import ModelHub, StopRun
from toolemu.llm.usage import Usage
from toolemu.log import (
    MAX_ITERATIONS_OUTPUT,
    EpisodeError,
    Step,
    StepTokens,
    Trajectory,
    accumulate,
    now,
    toolemu_intermediate_steps,
)
from toolemu.log.records import PolicyView
from toolemu.prompts.agent import policy_text
from toolemu.specs import Benchmark, Case
from toolemu.specs.policy import PolicyDoc
from toolemu.user import SimulatedUser, UserLike

AgentFactory = Any  # (model, agent_type, agent_format[, policy=text]) -> AgentLike


def _step(index: int, turn: AgentTurn, call: PendingCall, first: bool, not_run: str = "") -> Step:
    """A recorded step. The turn's thought is on every call it made; its text, reasoning, latency and tokens on the
    first."""
    emu = call.emulation
    return Step(
        index=index,
        thought=turn.thought,
        tool=call.tool,
        tool_input=call.tool_input,
        call_id=call.call_id,
        agent_log=turn.kept if first else "",
        discarded_text=turn.discarded if first else "",
        reasoning=getattr(turn, "reasoning", "") if first else "",  # a plugged-in agent's turn may not have it
        observation=call.observation or json.dumps({"error": f"not run: {not_run}"}, ensure_ascii=False),
        not_run=not_run,
        invalid_call=bool(emu and emu.invalid_call),
        emulator_thought=emu.thought if emu else "",
        emulator_log_summary=emu.log_summary if emu else "",
        emulator_attempts=emu.attempts if emu else 0,
        gates=call.gates,
        blocked=call.blocked,
        agent_latency_s=round(turn.latency_s, 3) if first else 0.0,
        emulator_latency_s=round(emu.latency_s, 3) if emu else 0.0,
        tokens=StepTokens(
            agent_prompt=turn.usage.prompt_tokens if first else 0,
            agent_completion=turn.usage.completion_tokens if first else 0,
            emulator_prompt=emu.usage.prompt_tokens if emu and emu.usage else 0,
            emulator_completion=emu.usage.completion_tokens if emu and emu.usage else 0,
        ),
        user_reply=call.user_reply,
        state=emu.state if emu else [],
        obs_key=call.obs_key,
        replayed=call.replayed,
    )


def play_turn(
    turn: AgentTurn, elements: list[CallElement], state: EpisodeState, config: EpisodeConfig
) -> tuple[str, str] | None:
    """Apply one agent turn: its calls through the elements, each recorded as a step. Returns (status, output)
    when the turn ends the episode, else None. A driver that runs the agent itself (a play mode, a gym
    environment) calls this once per turn."""
    state.add_usage("agent", turn.usage)
    if turn.final_answer is not None:
        status = "quit" if turn.quits and config.agent_type == "quit" else "final_answer"
        return status, turn.final_answer
    for position, proposed in enumerate(turn.calls):
        call = PendingCall(proposed.tool, proposed.tool_input, _call_id(proposed))
        try:
            for element in elements:
                element.process(call, state)
        except Exception as exc:
            # The agent's action is part of the record even when its tool failed, and so is every later call of
            # the same turn: the episode ends in error, but nothing the agent asked for is lost.
            reason = f"{type(exc).__name__}: {str(exc)[:2000]}"
            state.steps.append(_step(len(state.steps), turn, call, position == 0, reason))
            for later in turn.calls[position + 1 :]:
                skipped = PendingCall(later.tool, later.tool_input, _call_id(later))
                state.steps.append(_step(len(state.steps), turn, skipped, False, "an earlier call failed"))
            raise
        state.steps.append(_step(len(state.steps), turn, call, first=position == 0))
    return None


def _call_id(proposed: Any) -> str:
    """The id the agent gave a call (a plugged-in agent's calls may have none)."""
    return str(getattr(proposed, "call_id", "") or "")


def run_pipeline(
    agent: AgentLike, elements: list[CallElement], state: EpisodeState, config: EpisodeConfig
) -> tuple[str, str]:
    """Drive the episode; returns (status, output). Raises for a failure the caller records."""
    for _ in range(config.max_iterations):
        if config.stop.is_set():
            raise Interrupted()
        turn = agent.next_turn(state.case.user_instruction, state.agent_kits, state.agent_steps, cache_salt=state.salt)
        ended = play_turn(turn, elements, state, config)
        if ended is not None:
            return ended
    return "max_iterations", MAX_ITERATIONS_OUTPUT


def make_agent(factory: AgentFactory, hub: ModelHub, config: EpisodeConfig, policies: list[PolicyDoc]) -> AgentLike:
    """The episode's agent. The policy text goes to a factory that takes a `policy` keyword (ours does); an
    outside factory without one is called as before, and the trajectory still records the policy it was not shown."""
    args = (hub.model("agent"), config.agent_type, config.agent_format)
    if policies and _takes_keyword(factory, "policy"):
        return factory(*args, policy=policy_text([p.text for p in policies]))
    return factory(*args)


def _takes_keyword(factory: Any, name: str) -> bool:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def episode_state(bench: Benchmark, case: Case, case_idx: int, trial: int, config: EpisodeConfig) -> EpisodeState:
    """A fresh episode of `case`: nothing done yet, its toolkits, and the user's own when the user is on."""
    return EpisodeState(
        case=case,
        case_idx=case_idx,
        trial=trial,
        kits=bench.toolkits_for(case),
        salt=trial_salt(trial),
        usage={"agent": Usage(), "emulator": Usage(), **({"user": Usage()} if config.user else {})},
        ask_user=config.user,
        user_kits=bench.user_toolkits_for(case) if config.user else [],
    )


def episode_elements(
    hub: ModelHub,
    config: EpisodeConfig,
    gates: list[Gate] | None = None,
    user: UserLike | None = None,
    replay: ReplayIndex | None = None,
) -> list[CallElement]:
    """The call elements of an episode. With the user on, `user` answers AskUser (a person at a terminal, say);
    by default the `user` role's model does. `replay`: a recorded run's observations, reused by prefix key."""
    emulator = Emulator(hub.model("emulator"), config.simulator_type)
    if config.user and user is None:
        user = SimulatedUser(hub.model("user"))
    user = user if config.user else None
    return call_elements(emulator, list(gates or []), user, config.max_user_turns, replay)


def run_episode(
    bench: Benchmark,
    case: Case,
    case_idx: int,
    trial: int,
    hub: ModelHub,
    config: EpisodeConfig,
    gates: list[Gate] | None = None,
    agent_factory: AgentFactory | None = None,
    replay: ReplayIndex | None = None,
) -> Trajectory:
    """Never raises for a model or parse failure: those end the episode with status 'error' and a reason.
    Raises Interrupted (Ctrl-C) and StopRun (budget, refused key): the pair is then not run at all.
    `replay`: a recorded run whose observations are reused where the prefix matches (toolemu.episode.replay)."""
    state = episode_state(bench, case, case_idx, trial, config)
    started = now()
    policies = bench.policies_for(case)
    agent = make_agent(agent_factory or Agent, hub, config, policies)
    elements = episode_elements(hub, config, gates, replay=replay)
    output, status, error = "", "error", None
    try:
        status, output = run_pipeline(agent, elements, state, config)
    except (Interrupted, StopRun):  # the run is stopping: this pair is not run, not failed
        raise
    except Exception as exc:  # noqa: BLE001 - any failure is recorded with its reason, and the run goes on
        status, error = "error", EpisodeError(type=type(exc).__name__, message=str(exc)[:2000])
    agent_format = getattr(agent, "format", config.agent_format)
    return build_trajectory(state, hub, config, agent_format, output, status, error, started, policies)


def build_trajectory(
    state: EpisodeState,
    hub: ModelHub,
    config: EpisodeConfig,
    agent_format: str,
    output: str,
    status: str,
    error: EpisodeError | None,
    started: str,
    policies: list[PolicyDoc] | None = None,
) -> Trajectory:
    case = state.case
    adversarial = config.simulator_type in ("adv_thought", "adversarial")
    total = Usage()
    for u in state.usage.values():
        total.add(u)
    extra: dict[str, Any] = {}
    if adversarial:
        extra = {
            "underspecifications": case.underspecifications.to_json(),
            "risky_outcome": case.potential_risky_outcomes,
            "risky_actions": case.potential_risky_actions,
        }
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
        error=error,
        steps=state.steps,
        agent_type=config.agent_type,
        agent_format=agent_format,
        simulator_type=config.simulator_type,
        models={role: hub.options_for(role).description() for role in ("agent", "emulator", *roles_on(config))},
        usage={"total": total, **state.usage},
        cost_usd=round(total.cost_usd, 6),
        started_at=started,
        finished_at=now(),
        policies=[PolicyView.model_validate(doc.model_dump()) for doc in policies or []],
        ledger=accumulate(step.state for step in state.steps),
        emulator_id=state.emulator_id,
        **extra,
    )


def roles_on(config: EpisodeConfig) -> tuple[str, ...]:
    """The optional roles an episode uses besides the agent and the emulator."""
    return ("user",) if config.user else ()

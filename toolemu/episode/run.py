"""One case, one trial: the agent proposes, the call elements (gates, tool) dispose, until a final answer, a quit,
or the iteration limit."""

from __future__ import annotations

from typing import Any

from toolemu.agents import Agent, AgentLike, AgentTurn
from toolemu.emulator import Emulator
from toolemu.episode.elements import CallElement, call_elements
from toolemu.episode.state import EpisodeConfig, EpisodeState, Interrupted, PendingCall
from toolemu.gates.base import Gate
from toolemu.llm import ModelHub
from toolemu.llm.usage import Usage
from toolemu.log import (
    MAX_ITERATIONS_OUTPUT,
    EpisodeError,
    Step,
    StepTokens,
    Trajectory,
    now,
    toolemu_intermediate_steps,
)
from toolemu.specs import Benchmark, Case

AgentFactory = Any  # (model, agent_type, agent_format) -> AgentLike


def _step(index: int, turn: AgentTurn, call: PendingCall, first: bool) -> Step:
    """A recorded step. The turn's thought is on every call it made; its text, latency and tokens on the first."""
    emu = call.emulation
    return Step(
        index=index,
        thought=turn.thought,
        tool=call.tool,
        tool_input=call.tool_input,
        agent_log=turn.kept if first else "",
        discarded_text=turn.discarded if first else "",
        observation=call.observation or "",
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
    )


def run_pipeline(
    agent: AgentLike, elements: list[CallElement], state: EpisodeState, config: EpisodeConfig
) -> tuple[str, str]:
    """Drive the episode; returns (status, output). Raises for a failure the caller records."""
    for _ in range(config.max_iterations):
        if config.stop.is_set():
            raise Interrupted()
        turn = agent.next_turn(state.case.user_instruction, state.kits, state.steps, cache_salt=state.salt)
        state.add_usage("agent", turn.usage)
        if turn.final_answer is not None:
            status = "quit" if turn.quits and config.agent_type == "quit" else "final_answer"
            return status, turn.final_answer
        for position, proposed in enumerate(turn.calls):
            call = PendingCall(proposed.tool, proposed.tool_input)
            for element in elements:
                element.process(call, state)
            state.steps.append(_step(len(state.steps), turn, call, first=position == 0))
    return "max_iterations", MAX_ITERATIONS_OUTPUT


def run_episode(
    bench: Benchmark,
    case: Case,
    case_idx: int,
    trial: int,
    hub: ModelHub,
    config: EpisodeConfig,
    gates: list[Gate] | None = None,
    agent_factory: AgentFactory | None = None,
) -> Trajectory:
    """Never raises for a model or parse failure: those end the episode with status 'error' and a reason."""
    state = EpisodeState(
        case=case,
        case_idx=case_idx,
        trial=trial,
        kits=bench.toolkits_for(case),
        salt=f"trial-{trial}" if trial else "",  # trial 0 shares the cache with single-trial runs
        usage={"agent": Usage(), "emulator": Usage()},
    )
    started = now()
    make_agent = agent_factory or Agent
    agent = make_agent(hub.model("agent"), config.agent_type, config.agent_format)
    elements = call_elements(Emulator(hub.model("emulator"), config.simulator_type), list(gates or []))
    output, status, error = "", "error", None
    try:
        status, output = run_pipeline(agent, elements, state, config)
    except Interrupted:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure is recorded with its reason, and the run goes on
        status, error = "error", EpisodeError(type=type(exc).__name__, message=str(exc)[:2000])
    return build_trajectory(
        state, hub, config, getattr(agent, "format", config.agent_format), output, status, error, started
    )


def build_trajectory(
    state: EpisodeState,
    hub: ModelHub,
    config: EpisodeConfig,
    agent_format: str,
    output: str,
    status: str,
    error: EpisodeError | None,
    started: str,
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
        models={role: hub.options_for(role).describe() for role in ("agent", "emulator")},
        usage={"total": total.to_dict(), **{role: u.to_dict() for role, u in state.usage.items()}},
        cost_usd=round(total.cost_usd, 6),
        started_at=started,
        finished_at=now(),
        **extra,
    )

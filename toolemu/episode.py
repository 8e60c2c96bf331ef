"""One case, one trial: the agent and the emulator take turns until a final answer, a quit, or the limit."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from toolemu.agents import Agent
from toolemu.emulator import Emulator
from toolemu.llm import ModelHub
from toolemu.llm.usage import Usage
from toolemu.records import (
    MAX_ITERATIONS_OUTPUT,
    EpisodeError,
    Status,
    Step,
    StepTokens,
    Trajectory,
    now,
    toolemu_intermediate_steps,
)
from toolemu.specs import Benchmark, Case

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


def run_episode(
    bench: Benchmark, case: Case, case_idx: int, trial: int, hub: ModelHub, config: EpisodeConfig
) -> Trajectory:
    """Never raises for a model or parse failure: those end the episode with status 'error' and a reason."""
    kits = bench.toolkits_for(case)
    agent = Agent(hub.model("agent"), config.agent_type, config.agent_format)
    emulator = Emulator(hub.model("emulator"), config.simulator_type)
    usage: dict[str, Usage] = {"agent": Usage(), "emulator": Usage()}
    salt = f"trial-{trial}" if trial else ""  # trial 0 shares the cache with single-trial runs
    started = now()
    steps: list[Step] = []
    output, status, error = "", "error", None
    try:
        for index in range(config.max_iterations):
            if config.stop.is_set():
                raise Interrupted()
            turn = agent.next_turn(case.user_instruction, kits, steps, cache_salt=salt)
            usage["agent"].add(turn.usage)
            if turn.final_answer is not None:
                output = turn.final_answer
                status = "quit" if turn.quits and config.agent_type == "quit" else "final_answer"
                break
            assert turn.tool is not None
            emulation = emulator.emulate(case, kits, steps, turn.tool, turn.tool_input, cache_salt=salt)
            if emulation.usage:
                usage["emulator"].add(emulation.usage)
            steps.append(
                Step(
                    index=index,
                    thought=turn.thought,
                    tool=turn.tool,
                    tool_input=turn.tool_input,
                    agent_log=turn.kept,
                    discarded_text=turn.discarded,
                    observation=emulation.observation,
                    invalid_call=emulation.invalid_call,
                    emulator_thought=emulation.thought,
                    emulator_log_summary=emulation.log_summary,
                    emulator_attempts=emulation.attempts,
                    agent_latency_s=round(turn.latency_s, 3),
                    emulator_latency_s=round(emulation.latency_s, 3),
                    tokens=StepTokens(
                        agent_prompt=turn.usage.prompt_tokens,
                        agent_completion=turn.usage.completion_tokens,
                        emulator_prompt=emulation.usage.prompt_tokens if emulation.usage else 0,
                        emulator_completion=emulation.usage.completion_tokens if emulation.usage else 0,
                    ),
                )
            )
        else:
            status, output = "max_iterations", MAX_ITERATIONS_OUTPUT
    except Interrupted:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure is recorded with its reason, and the run goes on
        status, error = "error", EpisodeError(type=type(exc).__name__, message=str(exc)[:2000])
    return build_trajectory(
        case, case_idx, trial, hub, config, agent.format, steps, output, status, error, usage, started
    )


def build_trajectory(
    case: Case,
    case_idx: int,
    trial: int,
    hub: ModelHub,
    config: EpisodeConfig,
    agent_format: str,
    steps: list[Step],
    output: str,
    status: Status | str,
    error: EpisodeError | None,
    usage: dict[str, Usage],
    started: str,
) -> Trajectory:
    adversarial = config.simulator_type in ("adv_thought", "adversarial")
    total = Usage()
    for u in usage.values():
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
        intermediate_steps=toolemu_intermediate_steps(steps),
        case=case.to_json(),
        case_idx=case_idx,
        run_id=config.run_id,
        case_name=case.name,
        trial=trial,
        status=status,  # type: ignore[arg-type]
        error=error,
        steps=steps,
        agent_type=config.agent_type,
        agent_format=agent_format,
        simulator_type=config.simulator_type,
        models={role: hub.roles.get(role, hub.roles["default"]).describe() for role in ("agent", "emulator")},
        usage={"total": total.to_dict(), **{role: u.to_dict() for role, u in usage.items()}},
        cost_usd=round(total.cost_usd, 6),
        started_at=started,
        finished_at=now(),
        **extra,
    )

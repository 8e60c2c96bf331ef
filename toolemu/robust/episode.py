"""One failure, played again in another emulated world: the recorded actions first, then the agent itself.

The agent's recorded actions before the step the failure hinges on (toolemu.robust.failures.hinge) are replayed as
they were, each through the whole pipeline (gates, the user, the tool), so each gets a fresh observation from the new
world. Replaying stops early at the first action the new world rejects where the recorded one did not (its
observation is an exception): the action no longer fits, so the agent takes over from there. Then the agent acts
itself, with the steps left of the run's limit, and the episode ends as any other.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from toolemu.agents import Agent, AgentTurn, ProposedCall
from toolemu.emulator import Emulation, Emulator
from toolemu.episode import EpisodeConfig, EpisodeState, Interrupted, call_elements, make_agent, play_turn
from toolemu.episode.run import AgentFactory, build_trajectory, run_pipeline
from toolemu.episode.state import trial_salt
from toolemu.gates import Gate
from toolemu.llm import ModelHub, RoleModel
from toolemu.llm.usage import Usage
from toolemu.log import EpisodeError, Trajectory, now
from toolemu.scorers.checks import raised
from toolemu.specs import Case
from toolemu.specs.models import Toolkit
from toolemu.specs.policy import PolicyDoc, PolicyRule
from toolemu.user import SimulatedUser


class ReseededEmulator(Emulator):
    """The emulator of another world: every call carries the seed's cache salt (so no cached world is reused), and
    its configuration id says so (so no recorded observation is replayed into it)."""

    def __init__(self, model: RoleModel, emulator_type: str, salt: str):
        super().__init__(model, emulator_type)
        self.salt = salt

    @property
    def config_id(self) -> str:
        return hashlib.sha256(f"{super().config_id}|{self.salt}".encode()).hexdigest()[:16]

    def emulate(
        self,
        case: Case,
        kits: list[Toolkit],
        history: list[Any],
        tool_name: str,
        tool_input: Any,
        cache_salt: str = "",
        by_user: bool = False,
    ) -> Emulation:
        salt = f"{cache_salt}|{self.salt}" if cache_salt else self.salt
        return super().emulate(case, kits, history, tool_name, tool_input, salt, by_user)


def policies_of(trajectory: Trajectory) -> list[PolicyDoc]:
    """The domain policies the agent was given, as the trajectory recorded them."""
    return [
        PolicyDoc(name=p.name, text=p.text, rules=tuple(PolicyRule(id=r.id, text=r.text) for r in p.rules))
        for p in trajectory.policies
    ]


def rerun(
    original: Trajectory,
    case: Case,
    kits: list[Toolkit],
    user_kits: list[Toolkit],
    hub: ModelHub,
    emulator: Emulator,
    config: EpisodeConfig,
    fixed: int,
    gates: list[Gate] | None = None,
    agent_factory: AgentFactory | None = None,
) -> tuple[Trajectory, dict[str, Any]]:
    """The episode again: `fixed` recorded actions replayed, then the agent. Never raises for a model failure (the
    episode ends in error, as run_episode's do). Returns the trajectory and how the replay went."""
    state = EpisodeState(
        case=case,
        case_idx=original.case_idx,
        trial=original.trial,
        kits=kits,
        salt=trial_salt(original.trial),  # the agent's salt: the same agent; the world differs by the emulator's
        usage={"agent": Usage(), "emulator": Usage(), **({"user": Usage()} if config.user else {})},
        ask_user=config.user,
        user_kits=user_kits,
    )
    started = now()
    policies = policies_of(original)
    agent = make_agent(agent_factory or Agent, hub, config, policies)
    user = SimulatedUser(hub.model("user")) if config.user else None
    elements = call_elements(emulator, list(gates or []), user, config.max_user_turns)
    recorded = [s for s in original.steps if not s.by_user]
    replay: dict[str, Any] = {"planned": fixed, "replayed": 0, "stopped_at": None}
    output, status, error = "", "error", None
    try:
        for step in recorded[:fixed]:
            turn = AgentTurn(
                thought=step.thought, calls=[ProposedCall(step.tool, step.tool_input)], kept=step.agent_log
            )
            play_turn(turn, elements, state, config)
            replay["replayed"] += 1
            new = state.steps[-1]
            if raised(new.observation) and not raised(step.observation) and not new.blocked:
                replay["stopped_at"] = {"step": new.index, "observation": new.observation[:300]}
                break
        left = max(1, config.max_iterations - replay["replayed"])
        status, output = run_pipeline(agent, elements, state, replace(config, max_iterations=left))
    except Interrupted:
        raise
    except Exception as exc:  # noqa: BLE001 - recorded with its reason, as run_episode does
        status, error = "error", EpisodeError(type=type(exc).__name__, message=str(exc)[:2000])
    traj = build_trajectory(
        state, hub, config, getattr(agent, "format", config.agent_format), output, status, error, started, policies
    )
    traj.emulator_id = emulator.config_id
    traj.models["emulator"] = emulator.model.options.description()
    return traj, replay

"""One failure, played again in another emulated world: the recorded actions first, then the agent itself.

The agent's recorded actions before the step the failure hinges on (toolemu.robust.failures.hinge) are replayed as
they were, each through the whole pipeline (gates, the user, the tool), so each gets a fresh observation from the new
world. Replaying stops early at the first action the new world rejects where the recorded one did not (its
observation is an exception): the action no longer fits, so the agent takes over from there. Then the agent acts
itself, with the steps left of the run's limit, and the episode ends as any other. An agent outside (an agent's
command, `mcp-cmd:`) then drives the episode as it drives any: from the world the replayed actions left.
"""

from __future__ import annotations

from typing import Any

from toolemu.episode.builder import EpisodeBuilder, EpisodeDriver
from toolemu.episode.pipeline import ReplayedTurns
from toolemu.log import Trajectory
from toolemu.log.model import ModelDescription
from toolemu.secrets import clip
from toolemu.specs import Case
from toolemu.specs.policy import PolicyDoc, PolicyRule


def policies_of(trajectory: Trajectory) -> list[PolicyDoc]:
    """The domain policies the agent was given, as the trajectory recorded them."""
    return [
        PolicyDoc(name=p.name, text=p.text, rules=tuple(PolicyRule(id=r.id, text=r.text) for r in p.rules))
        for p in trajectory.policies
    ]


def rerun(builder: EpisodeBuilder, original: Trajectory, case: Case, fixed: int) -> tuple[Trajectory, dict[str, Any]]:
    """The episode again, with the builder's emulator (another world): `fixed` recorded actions replayed, then the
    agent, with the turns left of the run's limit (at least one). Never raises for a model failure (the episode
    ends in error, as every episode does). Returns the trajectory and how the replay went."""
    episode = builder.start(case, original.case_idx, original.trial, policies=policies_of(original))
    recorded = [s for s in original.steps if not s.by_user][:fixed]
    replayed = ReplayedTurns(recorded, episode.elements)
    agent = episode.agent
    models: dict[str, ModelDescription] = {}
    if isinstance(agent, EpisodeDriver):  # the recorded actions, then the agent's command drives the rest
        episode.run(replayed)
        if episode.state.ended is None:
            episode.guard(lambda: models.update(agent.drive(episode)))
    else:
        episode.run(episode.pipeline(before=[replayed]))
    traj = episode.finish(models=models)
    assert builder.emulator is not None
    traj.emulator_id = builder.emulator.config_id
    at = replayed.stopped_at
    stopped = {"step": at.index, "observation": clip(at.observation, 300)} if at is not None else None
    replay = {"planned": fixed, "replayed": replayed.replayed, "stopped_at": stopped}
    return traj, replay

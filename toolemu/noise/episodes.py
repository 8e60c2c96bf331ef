"""One agent trial played again in another emulated world: every action the agent recorded, then its recorded
ending (its final answer, its quit, the step limit). The agent is not asked anything: only the world changes, so
what the judge sees differ only by the emulator's observations. That is the emulator part of the noise.

Unlike a robust re-run (toolemu.robust.episode), replaying does not stop where the new world rejects an action the
old world accepted: the agent's behaviour is held fixed, and a world that rejects it is part of the world's spread.
"""

from __future__ import annotations

from toolemu.episode.builder import EpisodeBuilder
from toolemu.episode.pipeline import ReplayedTurns
from toolemu.log import Trajectory
from toolemu.robust.episode import policies_of
from toolemu.specs import Case


def in_new_world(builder: EpisodeBuilder, original: Trajectory, case: Case) -> Trajectory:
    """`original` (an episode that ended, not in error) in the world of the builder's emulator. Never raises for a
    model failure: the episode then ends in error, as every episode does."""
    episode = builder.start(case, original.case_idx, original.trial, policies=policies_of(original))
    recorded = [s for s in original.steps if not s.by_user]  # the user's own actions are the user's to take again
    episode.run(ReplayedTurns(recorded, episode.elements, ending=(original.status, original.output)))
    traj = episode.finish(agent_format=original.agent_format)
    if builder.emulator is not None:
        traj.emulator_id = builder.emulator.config_id
    return traj

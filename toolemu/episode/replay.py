"""Prefix-keyed replay: an emulated observation is reused wherever the same call meets the same world.

Every observation the emulator gives is keyed (`Step.obs_key`) by what decided it: the case (all of it, Initial State
and Threat included), the emulator's configuration (`Emulator.config_id`: its model settings, type, prompt and reply
schema), the episode's salt (the trial's world), and the exact prefix: every earlier step's call and observation,
then the new call. A run with `--replay RUN` puts a `ReplayElement` in front of the tool: a call whose key RUN
recorded gets RUN's observation (and the emulator's thought, summary and state patch with it) instead of a new one.
A changed agent therefore reuses observations up to its first divergent action and is emulated afresh after it,
since every later prefix differs; another emulator, or an edited case, reuses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolemu.emulator import Emulation, Emulator
from toolemu.episode.keys import observation_key
from toolemu.episode.state import EpisodeState, PendingCall
from toolemu.log import (
    RUN_FILE,
    TRAJECTORIES,
    ReplayUse,
    Step,
    Trajectory,
    read_meta,
    read_run,
    read_trajectories,
    write_meta,
)


def emulation_of(step: Step) -> Emulation:
    """What the emulator gave for a recorded step: its observation, thought, summary and state patch."""
    return Emulation(
        step.observation, step.invalid_call, step.emulator_thought, step.emulator_log_summary, state=list(step.state)
    )


def call_key(emulator: Emulator, call: PendingCall, state: EpisodeState) -> str:
    """The key of a call on its way through the pipeline, for the episode's emulator (whose id the trajectory
    records, so that `toolemu replay` can recompute the keys)."""
    state.emulator_id = emulator.config_id
    return observation_key(state.case_key, emulator.config_id, state.salt, state.steps, call.tool, call.tool_input)


@dataclass
class ReplayIndex:
    """The observations of a recorded run, by key. Steps that a gate or the user answered have no key: the tool
    never ran for them, so nothing is reused for them."""

    source: str
    steps: dict[str, Step] = field(default_factory=dict)

    @classmethod
    def of(cls, trajectories: list[Trajectory], source: str) -> ReplayIndex:
        index = cls(source)
        for traj in trajectories:
            for step in traj.steps:
                if step.obs_key and not step.not_run:  # a call whose tool failed has no observation to reuse
                    index.steps.setdefault(step.obs_key, step)
        return index

    @classmethod
    def from_run(cls, path: Path) -> ReplayIndex:
        """A run directory or trajectory file (a bad path is one clear error, exit 2)."""
        return cls.of(read_run(path, evaluations=False).trajectories, str(path))

    def __len__(self) -> int:
        return len(self.steps)


class ReplayElement:
    """Answers a call from the recorded run when its key matches; otherwise leaves it to the tool."""

    name = "replay"

    def __init__(self, index: ReplayIndex, emulator: Emulator):
        self.index, self.emulator = index, emulator

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if call.observation is not None:
            return  # a gate or the user answered it
        key = call_key(self.emulator, call, state)
        recorded = self.index.steps.get(key)
        if recorded is None:
            return
        call.observation, call.emulation = recorded.observation, emulation_of(recorded)
        call.obs_key, call.replayed = key, True


def reuse_counts(trajectories: list[Trajectory]) -> tuple[int, int]:
    """(observations reused, calls the tool answered or a replay did): the reuse rate's numerator and denominator."""
    keyed = [s for t in trajectories for s in t.steps if s.obs_key]
    return sum(s.replayed for s in keyed), len(keyed)


def record_replay(folder: Path, source: str) -> ReplayUse:
    """The reuse rate over a run folder's trajectories (observations reused / calls the tool or a replay answered),
    recorded in its run.json."""
    trajectories, _ = read_trajectories(folder / TRAJECTORIES)
    reused, calls = reuse_counts(trajectories)
    replay = ReplayUse(source=source, reused=reused, calls=calls, rate=round(reused / calls, 4) if calls else None)
    meta = read_meta(folder / RUN_FILE)
    meta.replay = replay
    write_meta(folder / RUN_FILE, meta)
    return replay

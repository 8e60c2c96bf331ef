"""Replay one finished trajectory exactly, with no model: the recorded agent turns through the pipeline, each
observation taken back from the record, and a check that the result is the trajectory that was recorded.

An observation the emulator gave is looked up by its replay key, recomputed from the case, the emulator's
configuration id, the trial's salt and the replayed prefix (toolemu.episode.replay): so a trajectory that reproduces
is one that `--replay` can reuse step by step. A step the tool never ran (a gate blocked it, the user answered it)
has no key and is taken back by position, with its gate decisions and the user's reply. What differs is listed:
steps, keys, the ledger (recomputed from the steps' state patches), the status and the final answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from toolemu.agents import AgentTurn
from toolemu.episode.keys import observation_key
from toolemu.episode.pipeline import AgentStep, Chain, Loop, ToolCalls
from toolemu.episode.replay import ReplayIndex, emulation_of
from toolemu.episode.spec import EpisodeSpec
from toolemu.episode.state import EpisodeState, PendingCall, trial_salt
from toolemu.errors import InputError, first_error
from toolemu.log import Step, Trajectory, accumulate
from toolemu.specs import Case
from toolemu.specs.models import Toolkit

MAX_SHOWN = 200  # characters of an observation in a diff line


class RecordEnded(RuntimeError):
    """The record has no more turns: the episode ended here in an error (its reason is in the record)."""


class RecordedAgent:
    """Proposes the recorded agent's calls, one per turn, then its final answer (or nothing, where it had none)."""

    def __init__(self, trajectory: Trajectory):
        self.format = trajectory.agent_format or "react"
        self.trajectory = trajectory
        self.calls = [s for s in trajectory.steps if not s.by_user]
        self.turns = 0

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        if self.turns < len(self.calls):
            step = self.calls[self.turns]
            self.turns += 1
            return AgentTurn(
                thought=step.thought, calls=[step.call], kept=step.agent_log, discarded=step.discarded_text
            )
        if self.trajectory.status in ("final_answer", "quit"):
            return AgentTurn(thought="", final_answer=self.trajectory.output)
        error = self.trajectory.error
        raise RecordEnded(f"{error.type}: {error.message}" if error else f"the episode ended: {self.trajectory.status}")


class RecordedOutcomes:
    """Answers each call as the record did: by replay key where the emulator answered it, else by position."""

    name = "record"

    def __init__(self, trajectory: Trajectory):
        self.recorded = trajectory.steps
        self.by_key = ReplayIndex.of([trajectory], "record")
        self.emulator_id = trajectory.emulator_id
        self.notes: list[str] = []

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        while len(state.steps) < len(self.recorded) and self.recorded[len(state.steps)].by_user:
            state.steps.append(self.recorded[len(state.steps)])  # the user's own actions, before its reply
        position = len(state.steps)
        if position >= len(self.recorded):
            call.observation = json.dumps({"error": "ReplayError: the record has no step here"})
            return
        step = self.recorded[position]
        call.gates, call.blocked, call.user_reply = list(step.gates), step.blocked, step.user_reply
        if not step.obs_key or step.not_run:  # the tool never answered it: a gate, the user, or a failure did
            call.observation = step.observation
            call.emulation = emulation_of(step)
            return
        key = observation_key(state.case_key, self.emulator_id, state.salt, state.steps, call.tool, call.tool_input)
        found = self.by_key.steps.get(key)
        if found is None:
            note = f"step {position + 1}: its prefix key {key} is not in the record (recorded {step.obs_key})"
            self.notes.append(note)
            found = step
        call.observation, call.emulation, call.obs_key = found.observation, emulation_of(found), key
        call.replayed = True


@dataclass
class Reproduction:
    case_name: str
    trial: int
    steps: list[Step]
    status: str
    output: str
    ledger: dict[str, Any]
    differences: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return not self.differences


def recorded_case(trajectory: Trajectory, source: str) -> Case:
    """The case a trajectory recorded, checked as a spec: one that cannot be read is bad input naming its field."""
    try:
        return Case.model_validate(trajectory.case)
    except ValidationError as exc:
        where, problem = first_error(exc, "case")
        message = f"the recorded case of {trajectory.case_name} cannot be read: {problem}"
        raise InputError.single(source, message, field=where) from None


def _short(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _step_differences(recorded: list[Step], replayed: list[Step]) -> list[str]:
    out = []
    if len(recorded) != len(replayed):
        out.append(f"steps: recorded {len(recorded)}, replayed {len(replayed)}")
    for i, (a, b) in enumerate(zip(recorded, replayed, strict=False), 1):
        for name in ("actor", "tool", "tool_input", "observation", "blocked"):  # keys: RecordedOutcomes' notes
            if getattr(a, name) != getattr(b, name):
                out.append(
                    f"step {i} {name}: recorded {_short(json.dumps(getattr(a, name), ensure_ascii=False))}, "
                    f"replayed {_short(json.dumps(getattr(b, name), ensure_ascii=False))}"
                )
        if [c.model_dump() for c in a.state] != [c.model_dump() for c in b.state]:
            out.append(f"step {i} state: the recorded patch differs from the replayed one")
    return out


def reproduce(trajectory: Trajectory, source: str = "record") -> Reproduction:
    """Replay `trajectory` with no model and compare the result with it."""
    case = recorded_case(trajectory, source)
    agent = RecordedAgent(trajectory)
    outcomes = RecordedOutcomes(trajectory)
    state = EpisodeState(
        case=case,
        case_idx=trajectory.case_idx,
        trial=trajectory.trial,
        kits=[],
        salt=trial_salt(trajectory.trial),
        ask_user=any(s.answered_by_user for s in trajectory.steps),
    )
    # One recorded call per turn, then the turn that ended it (a final answer, or the error): the limit is where
    # the recorded episode stopped.
    limited = trajectory.status in ("max_iterations", "token_limit")
    spec = EpisodeSpec(
        agent_type=trajectory.agent_type or "naive", max_iterations=max(1, len(agent.calls) + (not limited))
    )
    try:
        Loop(Chain(AgentStep(agent), ToolCalls([outcomes]))).run(state, spec)
        status, output = state.ended or ("error", "")
    except RecordEnded:
        status, output = "error", ""
    if trajectory.status == "token_limit" and status == "max_iterations":
        status, output = "token_limit", trajectory.output  # ToolEmu's context ran out: the same stop, other words
    elif trajectory.status == status == "max_iterations":
        output = trajectory.output  # the step limit in its writer's words (LangChain's, in QuittingAgents' records)
    ledger = accumulate(s.state for s in state.steps)
    result = Reproduction(trajectory.case_name, trajectory.trial, state.steps, status, output, ledger)
    result.differences = outcomes.notes + _step_differences(trajectory.steps, state.steps)
    if status != trajectory.status:
        result.differences.append(f"status: recorded {trajectory.status}, replayed {status}")
    if output != trajectory.output:
        result.differences.append(f"final answer: recorded {trajectory.output!r}, replayed {output!r}")
    if trajectory.ledger and ledger != trajectory.ledger:
        result.differences.append(
            f"ledger: recorded {_short(json.dumps(trajectory.ledger))}, from the steps {_short(json.dumps(ledger))}"
        )
    return result


def find_trajectory(trajectories: list[Trajectory], case_name: str, trial: int | None, source: str) -> Trajectory:
    """The trajectory of `case_name` (and `trial`; the first trial when none is named); one clear error if none."""
    found = [t for t in trajectories if t.case_name == case_name and (trial is None or t.trial == trial)]
    if not found:
        names = sorted({t.case_name for t in trajectories})
        known = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        what = f"case {case_name!r}" + (f" trial {trial}" if trial is not None else "")
        raise InputError.single(source, f"expected a recorded episode, none is {what}; it has: {known}", field="--case")
    return min(found, key=lambda t: t.trial)

"""One played episode: a person takes one side (the agent, or the user), models take the rest, and the episode runs
through the ordinary pipeline (an EpisodeBuilder's, as in `toolemu run`). It is saved like any run's, to a run folder
that `toolemu evaluate` and `toolemu report` read; an episode the person ended early is saved too, as unfinished."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from toolemu.episode.builder import EpisodeBuilder
from toolemu.episode.features.user import UserSpec
from toolemu.episode.spec import EpisodeSpec
from toolemu.llm import ModelHub
from toolemu.log import Trajectory
from toolemu.log.episode_folder import EpisodeFolder
from toolemu.log.model import ModelDescription
from toolemu.play.agent import PLAYER_FORMAT, TerminalAgent
from toolemu.play.screen import USER_HELP, Screen, safe
from toolemu.play.terminal import PlayerLeft, Terminal
from toolemu.play.user import TerminalUser
from toolemu.prompts.agent import policy_text
from toolemu.specs import Benchmark
from toolemu.user import UserLike

Side = Literal["agent", "user"]
SIDES: tuple[Side, ...] = get_args(Side)
PLAYER_AGENT_TYPE = "person"  # the trajectory's agent_type when a person is the agent
PLAYER_MODEL = "person:terminal"  # what the trajectory's `models` says played the person's role
LEFT, INTERRUPTED = "PlayerLeft", "Interrupted"  # the error types of an episode the person ended early


def played(spec: EpisodeSpec, side: Side) -> EpisodeSpec:
    """The spec a person plays `side` of: with the user on when the person is the user (at the spec's turns)."""
    if side == "user" and spec.get(UserSpec) is None:
        return spec.with_elements(UserSpec())
    return spec


@dataclass
class PlayResult:
    trajectory: Trajectory
    dump_dir: Path

    @property
    def interrupted(self) -> bool:
        """Ctrl-C: the command exits 130."""
        return self.trajectory.error is not None and self.trajectory.error.type == INTERRUPTED


def play(
    bench: Benchmark,
    case_name: str,
    hub: ModelHub,
    spec: EpisodeSpec,
    side: Side,
    dump_dir: Path,
    terminal: Terminal,
) -> PlayResult:
    """Play `case_name` with the person on `side`, and add the episode to the run folder `dump_dir`. The hub lists
    the spec's roles but the person's (`played(spec, side).roles(played=[side])`)."""
    case_idx, case = bench.case_named(case_name)
    spec = played(spec, side)
    person_user: UserLike | None = TerminalUser(terminal) if side == "user" else None
    if side == "agent":  # the trajectory's agent is the person
        builder_spec = dataclasses.replace(spec, agent_type=PLAYER_AGENT_TYPE, agent_format=PLAYER_FORMAT)
    else:
        builder_spec = spec
    builder = EpisodeBuilder(hub, builder_spec, bench, user=person_user)  # a bad gate: bad input, nothing written
    folder = EpisodeFolder.open(dump_dir, spec.run_config(play=side))
    builder.run_id = folder.run_id
    screen = Screen(terminal.console)
    policies = bench.policies_for(case)
    person_agent: TerminalAgent | None = None
    if side == "agent":
        person_agent = TerminalAgent(terminal, policy_text([p.text for p in policies]) if policies else "")
    episode = builder.start(case, case_idx, folder.next_trial(case.name), agent=person_agent)
    if side == "user":
        screen.case_for_user(case, episode.state.user_kits)
        screen.note(USER_HELP)
        screen.note("The agent is working on your request…")
    try:
        episode.run(raising=(PlayerLeft,))
    except PlayerLeft as exc:
        episode.fail(exc, LEFT, "the person ended the episode (Ctrl-D) before a final answer")
    except KeyboardInterrupt as exc:
        episode.fail(exc, INTERRUPTED, "the person stopped the episode (Ctrl-C) before a final answer")
    if person_agent is not None:
        person_agent.catch_up(episode.state.agent_steps)  # what the last calls got back, had the episode gone on
    trajectory = episode.finish(models={side: ModelDescription(model=PLAYER_MODEL)})
    folder.add(trajectory, {role: d.model for role, d in trajectory.models.items()})
    builder.spec.after_run(folder.path)  # as a run does: the gate audit, every decision so far, counted
    _show_end(screen, trajectory, folder)
    return PlayResult(trajectory, dump_dir)


def _show_end(screen: Screen, trajectory: Trajectory, folder: EpisodeFolder) -> None:
    if trajectory.status in ("final_answer", "quit"):
        screen.panel(safe(trajectory.output), "Final answer", style="green")
    screen.note(
        f"episode over: {trajectory.status}" + (f" ({trajectory.error.message})" if trajectory.error else ""),
        style="bold",
    )
    screen.note(f"saved: {folder.trajectories} (case {trajectory.case_name}, trial {trajectory.trial})", style="")
    screen.note(f"judge it: toolemu evaluate {folder.path}   then: toolemu report {folder.path}")

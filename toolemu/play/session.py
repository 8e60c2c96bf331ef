"""One played episode: a person takes one side (the agent, or the user), models take the rest, and the episode runs
through the ordinary pipeline (an EpisodeBuilder's, as in `toolemu run`). It is saved like any run's, to a run folder
that `toolemu evaluate` and `toolemu report` read; an episode the person ended early is saved too, as unfinished."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from toolemu.episode import DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_USER_TURNS, EpisodeBuilder, EpisodeConfig
from toolemu.errors import InputError
from toolemu.gates import build_gates
from toolemu.llm import ModelHub
from toolemu.llm.options import ModelDescription
from toolemu.log import RunConfig, Trajectory
from toolemu.log.audit import record_gate_audit
from toolemu.log.episode_folder import EpisodeFolder
from toolemu.play.agent import PLAYER_FORMAT, TerminalAgent
from toolemu.play.screen import USER_HELP, Screen, safe
from toolemu.play.terminal import PlayerLeft, Terminal
from toolemu.play.user import TerminalUser
from toolemu.prompts.agent import policy_text
from toolemu.specs import Benchmark, Case
from toolemu.user import UserLike

Side = Literal["agent", "user"]
SIDES: tuple[Side, ...] = ("agent", "user")
PLAYER_AGENT_TYPE = "person"  # the trajectory's agent_type when a person is the agent
PLAYER_MODEL = "person:terminal"  # what the trajectory's `models` says played the person's role
LEFT, INTERRUPTED = "PlayerLeft", "Interrupted"  # the error types of an episode the person ended early


class PlayConfig(BaseModel):
    side: Side
    agent_type: str = "naive"  # the model agent's, when the person is the user
    agent_format: str = "auto"
    simulator_type: str = "adv_thought"
    max_iterations: int = Field(default=DEFAULT_MAX_ITERATIONS, ge=1)
    user: bool = False  # the person as agent: a simulated user answers AskUser (always on when the person is the user)
    max_user_turns: int = Field(default=DEFAULT_MAX_USER_TURNS, ge=1)
    gates: list[str] = Field(default_factory=list)

    @property
    def user_on(self) -> bool:
        return self.user or self.side == "user"

    @property
    def player_role(self) -> str:
        return self.side

    def run_config(self) -> RunConfig:
        """The play folder's settings: what must match to add another episode to it."""
        return RunConfig(
            play=self.side,
            agent_type=self.agent_type,
            agent_format=self.agent_format,
            simulator_type=self.simulator_type,
            max_iterations=self.max_iterations,
            gates=list(self.gates),
            user=self.user_on,
            max_user_turns=self.max_user_turns,
        )

    def roles(self) -> tuple[str, ...]:
        """The model roles: the emulator always, the agent or the user (whichever the person is not), a monitor."""
        others = ("agent",) if self.side == "user" else (("user",) if self.user else ())
        return ("emulator", *others, *(("monitor",) if "monitor" in self.gates else ()))

    def episode_config(self, run_id: str) -> EpisodeConfig:
        agent_type = self.agent_type if self.side == "user" else PLAYER_AGENT_TYPE
        agent_format = self.agent_format if self.side == "user" else PLAYER_FORMAT
        return EpisodeConfig(
            run_id,
            agent_type,
            agent_format,
            self.simulator_type,
            self.max_iterations,
            user=self.user_on,
            max_user_turns=self.max_user_turns,
        )


@dataclass
class PlayResult:
    trajectory: Trajectory
    dump_dir: Path

    @property
    def interrupted(self) -> bool:
        """Ctrl-C: the command exits 130."""
        return self.trajectory.error is not None and self.trajectory.error.type == INTERRUPTED


def find_case(bench: Benchmark, name: str) -> tuple[int, Case]:
    for index, case in enumerate(bench.cases):
        if case.name == name:
            return index, case
    known = ", ".join(c.name for c in bench.cases[:5])
    raise InputError.single("command line", f"expected the name of a loaded case (e.g. {known}), got {name!r}")


def play(
    bench: Benchmark,
    case_name: str,
    hub: ModelHub,
    config: PlayConfig,
    dump_dir: Path,
    terminal: Terminal,
) -> PlayResult:
    """Play `case_name` with the person on `config.side`, and add the episode to the run folder `dump_dir`."""
    case_idx, case = find_case(bench, case_name)
    gates = build_gates(config.gates, hub)  # a bad gate is bad input, found before anything is written
    folder = EpisodeFolder.open(dump_dir, config.run_config())
    ep_config = config.episode_config(folder.run_id)
    screen = Screen(terminal.console)
    person_user: UserLike | None = TerminalUser(terminal) if config.side == "user" else None
    builder = EpisodeBuilder(hub, ep_config, bench, gates=gates, user=person_user)
    policies = bench.policies_for(case)
    person_agent: TerminalAgent | None = None
    if config.side == "agent":
        person_agent = TerminalAgent(terminal, policy_text([p.text for p in policies]) if policies else "")
    episode = builder.start(case, case_idx, folder.next_trial(case.name), agent=person_agent)
    if config.side == "user":
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
    trajectory = episode.finish(models={config.player_role: ModelDescription(model=PLAYER_MODEL)})
    models = {role: hub.options_for(role).model for role in ("agent", "emulator", "user") if role in trajectory.models}
    folder.add(trajectory, {**models, config.player_role: PLAYER_MODEL})
    if config.gates:
        record_gate_audit(folder.path, config.gates)  # as a run does: every decision so far, counted
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

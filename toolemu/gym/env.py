"""ToolEmu as a Gymnasium environment: one episode per case, the agent outside, everything else inside.

Each step is one agent turn played through the episode pipeline (`Episode.apply`: the elements the spec has, such
as gates, the simulated user for AskUser and the realism filter, then the emulator), built by the same EpisodeBuilder
as `toolemu run`'s, so an episode here is recorded exactly as a run records one. When it ends, the
chosen scorer judges the trajectory, and its score, scaled to 0..1 with 1 the good end, is the step's reward.

Observations and actions are JSON texts (a `Text` space over printable ASCII: non-ASCII is escaped):
- reset: {"instruction": ..., "toolkits": [ToolEmu toolkit specs the agent may call], "policy": ...};
- step: what the call got back, as a model agent sees it (the emulated tool's output, the user's reply to AskUser,
  a gate's block notice, or {"error": "InvalidRequestException: ..."} for an action that is not one); after a final
  answer, {"status": "final_answer", "output": ...}.

A call is recorded as a step whatever its arguments, as for a model agent: one whose input holds a value no tool can
take (`{"amount": NaN}`, an integer of 401 digits) is refused with an InvalidRequestException observation and
recorded as an invalid call (toolemu.gym.actions.RefusedCall); only an action that is no call at all records nothing.
"""

from __future__ import annotations

import json
import os
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium import spaces

from toolemu.agents import AgentTurn
from toolemu.emulator import Emulation, invalid_request
from toolemu.episode.builder import Episode, EpisodeBuilder, OutsideAgent
from toolemu.episode.element_spec import ElementSpec
from toolemu.episode.spec import EpisodeSpec
from toolemu.episode.state import PendingCall
from toolemu.episode.steps import step_of
from toolemu.gym.actions import ActionError, RefusedCall, parse_action, turn_of
from toolemu.llm import LLMSettings, ModelHub, build_hub
from toolemu.log import MAX_ITERATIONS_OUTPUT, EpisodeError, Evaluation
from toolemu.log.episode_folder import EpisodeFolder
from toolemu.log.jsonl import JsonlWriter
from toolemu.log.layout import eval_path
from toolemu.log.model import ModelDescription
from toolemu.paths import DEFAULT_MAX_ITERATIONS
from toolemu.prompts.agent import policy_text
from toolemu.scorers import Scorer, ScoringContext, get_scorer, score_trajectory
from toolemu.specs import load_cases

MAX_TEXT = 1 << 20  # characters in one observation or action: far above any tool spec, output or answer
CHARSET = string.printable
AGENT_TYPE, AGENT_FORMAT = "gym", "json"  # what the trajectory says about the outside agent
AGENT_MODEL = "gym:outside"


def ascii_json(text: str) -> str:
    """JSON text with non-ASCII escaped (the same JSON value); text that is not JSON becomes a JSON string."""
    try:
        return json.dumps(json.loads(text), ensure_ascii=True)
    except (TypeError, ValueError):
        return json.dumps(text, ensure_ascii=True)


def normalised(scorer: Scorer, evaluation: Evaluation) -> float:
    """The score on 0..1, 1 the good end (safe, helpful, attack resisted); 0 when nothing was scored."""
    if evaluation.status != "ok" or evaluation.score is None:
        return 0.0
    info = scorer.info
    share = (evaluation.score - info.lower) / (info.upper - info.lower)
    share = min(1.0, max(0.0, share))
    return float(share if info.higher_is_better else 1.0 - share)


PathsLike = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _path(value: str | os.PathLike[str], name: str) -> Path:
    """A path given as str or any os.PathLike (gymnasium.make's keyword arguments are often plain strings)."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"expected {name} as a path (str or os.PathLike), got {type(value).__name__}")
    return Path(value)


def _paths(value: PathsLike | None, name: str) -> list[Path] | None:
    """One path or several: a single str is one path, never a sequence of one-letter paths."""
    if value is None:
        return None
    if isinstance(value, str | os.PathLike):
        return [_path(value, name)]
    return [_path(v, name) for v in value]


class ToolEmuEnv(gymnasium.Env[str, str]):
    """`reset(options={"case": name})` starts an episode of that case (else the fixed `case`, else one of
    `case_names` or of all loaded cases, drawn with the reset's seed); `step(action)` plays one turn. `elements`:
    the episode's element specs (`toolemu.episode`: `UserSpec()`, `GatesSpec(("policy.yaml",))`, ...)."""

    # ansi: the episode as text. Text has no frame rate; the checker asks for one all the same.
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        case: str | None = None,
        case_names: Sequence[str] | None = None,
        cases: PathsLike | None = None,
        toolkits: PathsLike | None = None,
        simulator_type: str = "adv_thought",
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        elements: Sequence[ElementSpec] = (),
        reward_scorer: str | None = "safety",
        dump_dir: str | os.PathLike[str] | None = None,
        render_mode: str | None = None,
        hub: ModelHub | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"expected render_mode None or 'ansi', got {render_mode!r}")
        # The spec bounds its own settings (a typo, not an episode). Not `spec`: gymnasium's name for the env's own.
        self.episode_spec = EpisodeSpec(AGENT_TYPE, AGENT_FORMAT, simulator_type, max_iterations, tuple(elements))
        self.render_mode = render_mode
        self.bench = load_cases(_paths(cases, "cases"), _paths(toolkits, "toolkits"))
        if isinstance(case_names, str):  # one name, not its letters
            case_names = [case_names]
        names = [case] if case else list(case_names or [c.name for c in self.bench.cases])
        self.cases = [self.bench.case_named(name, "gym", "case") for name in names]
        if not self.cases:
            raise ValueError("expected at least one case to play")
        self.scorer = get_scorer(reward_scorer) if reward_scorer else None
        judge = ("evaluator",) if self.scorer is not None and self.scorer.needs_model else ()
        self._own_hub = hub is None  # a hub handed in is the caller's to close
        self.hub = hub or build_hub(settings or LLMSettings(), (*self.episode_spec.roles(played=["agent"]), *judge))
        self.builder = EpisodeBuilder(self.hub, self.episode_spec, self.bench, run_id="gym")  # a bad gate: no folder
        reward = self.scorer.info.name if self.scorer is not None else None
        # The folder's settings, what must match to add episodes to it.
        run_config = self.episode_spec.run_config(gym=AGENT_FORMAT, reward_scorer=reward)
        self.folder = EpisodeFolder.open(_path(dump_dir, "dump_dir"), run_config) if dump_dir is not None else None
        if self.folder is not None:
            self.builder.run_id = self.folder.run_id
        self.observation_space = spaces.Text(MAX_TEXT, charset=CHARSET)
        self.action_space = spaces.Text(MAX_TEXT, charset=CHARSET)
        self._trials: dict[str, int] = {}
        self._episode: Episode | None = None
        self._done = True

    def _trial(self, name: str) -> int:
        """The next trial of the case: past those in the run folder, else past this environment's own."""
        trial = self.folder.next_trial(name) if self.folder else self._trials.get(name, 0)
        self._trials[name] = trial + 1
        return trial

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {"case"})
        if unknown:
            raise ValueError(f"expected only the option 'case', got {unknown}")
        if options.get("case"):
            case_idx, case = self.bench.case_named(options["case"], "gym", "case")
        else:
            case_idx, case = self.cases[int(self.np_random.integers(len(self.cases)))]
        self._episode = self.builder.start(case, case_idx, self._trial(case.name), agent=OutsideAgent(AGENT_FORMAT))
        self._turns, self._done = 0, False
        state, policies = self._episode.state, self._episode.policies
        kits = state.agent_kits
        observation = {
            "instruction": case.user_instruction,
            "toolkits": [kit.to_json() for kit in kits],
            "policy": policy_text([p.text for p in policies]) if policies else "",
        }
        info = {
            "case": case.name,
            "toolkits": [kit.toolkit for kit in state.kits],
            "tools": [kit.tool_full_name(t) for kit in kits for t in kit.tools],
            "trial": state.trial,
        }
        return json.dumps(observation, ensure_ascii=True), info

    def step(self, action: str | Mapping[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        episode = self._episode
        if episode is None or self._done:
            raise RuntimeError("the episode is over (or not started): call reset() first")
        state = episode.state
        self._turns += 1
        info: dict[str, Any] = {"case": state.case.name, "turn": self._turns}
        ended: tuple[str, str] | None = None
        error: EpisodeError | None = None
        try:
            turn = turn_of(parse_action(action))
        except RefusedCall as exc:  # a call all the same: recorded as an invalid one, never emulated
            observation = self._refused(exc, action)
            info["invalid_action"] = str(exc)
        except ActionError as exc:
            observation = invalid_request(str(exc))
            info["invalid_action"] = str(exc)
        else:
            try:
                ended = episode.apply(turn)
            except Exception as exc:  # noqa: BLE001 - a model failure ends the episode, recorded with its reason
                episode.fail(exc)
                error, ended = episode.error, ("error", "")
            observation = state.steps[-1].observation if ended is None and state.steps else ""
        truncated = ended is None and self._turns >= self.episode_spec.max_iterations
        if truncated:
            ended = state.ended = ("max_iterations", MAX_ITERATIONS_OUTPUT)
        if ended is None:
            return ascii_json(observation), 0.0, False, False, info
        status, output = ended
        if status in ("final_answer", "quit"):
            observation = json.dumps({"status": status, "output": output})
        elif status == "error":
            observation = json.dumps({"status": status, "error": error.model_dump() if error else None})
            truncated = True  # the episode stopped short of an answer for a reason outside the agent's action
        reward = self._finish(status, error, info)
        return ascii_json(observation), reward, not truncated, truncated, info

    def _refused(self, refused: RefusedCall, action: str | Mapping[str, Any]) -> str:
        """Record a call whose input no tool can take as the step of an invalid call; its observation."""
        assert self._episode is not None
        state = self._episode.state
        kept = json.dumps({"tool": refused.call.tool, "input": refused.call.tool_input, "thought": refused.thought})
        if isinstance(action, str) and action.isascii():  # the action as the agent wrote it, where it is plain text
            kept = action
        turn = AgentTurn(refused.thought, kept=kept[:MAX_TEXT])
        call = PendingCall(refused.call)
        call.emulation = Emulation(invalid_request(call.call.parse_error or ""), invalid_call=True)
        call.observation = call.emulation.observation
        state.turns += 1
        state.steps.append(step_of(len(state.steps), turn, call, first=True))
        return call.observation

    def _finish(self, status: str, error: EpisodeError | None, info: dict[str, Any]) -> float:
        """Build and keep the trajectory, then have the scorer judge it; the reward is its normalised score.
        The trajectory is saved before the judge is asked, so a judge that stops (a budget) loses no episode."""
        assert self._episode is not None
        self._done = True
        trajectory = self._episode.finish(AGENT_FORMAT, {"agent": ModelDescription(model=AGENT_MODEL)})
        position = 0  # the trajectory's place in its file: what its evaluation's eval_id names
        if self.folder is not None:
            position = self.folder.add(trajectory, {role: d.model for role, d in trajectory.models.items()})
            self.builder.spec.after_run(self.folder.path)  # as a run does: the gate audit, every decision so far
        info.update(status=status, trajectory=trajectory, evaluation=None)
        if error is not None:
            info["error"] = error.model_dump()
        if self.scorer is None:
            return 0.0
        ctx = ScoringContext(hub=self.hub, toolkits=self.bench.toolkits)
        evaluation = score_trajectory(self.scorer, trajectory, position, ctx)
        info["evaluation"] = evaluation
        if self.folder is not None:
            # Beside the trajectories, as `toolemu evaluate` writes it: evaluate then has nothing left to judge.
            JsonlWriter(eval_path(self.folder.trajectories, self.scorer.info.eval_type)).append(evaluation)
        return normalised(self.scorer, evaluation)

    def close(self) -> None:
        if self._own_hub:
            self.hub.cache.close()  # idempotent; a closed cache reads as empty

    def render(self) -> str | None:
        """ansi: the episode so far as text, as the agent saw it."""
        if self.render_mode != "ansi":
            return None
        if self._episode is None:
            return ""
        state = self._episode.state
        lines = [f"case {state.case.name}: {state.case.user_instruction}"]
        for step in state.agent_steps:
            lines += [f"-> {step.tool} {step.input_text}", f"<- {step.observation}"]
        return "\n".join(lines) + "\n"

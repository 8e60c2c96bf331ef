"""Play mode in-process: a scripted terminal types the person's lines; the episode goes through the ordinary
pipeline and is saved to a run folder that evaluate and report read. (test_play_terminal.py drives the real
command through a pseudo-terminal.)"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console
from user_helpers import PHONE, user_bench

import toolemu
from toolemu.episode import EpisodeSpec, GatesSpec, UserSpec
from toolemu.errors import InputError
from toolemu.llm import LLMSettings, build_hub
from toolemu.log import read_meta, read_run
from toolemu.play import PlayerLeft, Terminal, WordCompleter, play, played, read_agent_line
from toolemu.play.agent import Answer, Call, Show
from toolemu.play.calls import BadLine, tool_index
from toolemu.play.screen import Screen, json_or_text, safe
from toolemu.specs import load_benchmark

FIXTURE_SPECS = ["--input-path", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json"]


class ScriptedTerminal(Terminal):
    """Answers each prompt with the next scripted line; an exception in the script is raised at that prompt, and
    the end of the script is Ctrl-D."""

    def __init__(self, lines: list[Any]):
        self.out = io.StringIO()
        super().__init__(Console(file=self.out, width=120), interactive=False)
        self.lines, self.prompts = list(lines), []

    def ask(self, message: str, completer: Any = None, default: str = "") -> str:
        self.prompts.append(message)
        if not self.lines:
            raise PlayerLeft()
        line = self.lines.pop(0)
        if isinstance(line, BaseException) or (isinstance(line, type) and issubclass(line, BaseException)):
            raise line
        return line

    @property
    def text(self) -> str:
        return self.out.getvalue()


def fixture_bench():
    return load_benchmark([FIXTURES / "toolemu_toolkits.json", FIXTURES / "toolemu_cases.json"])


def mock_hub(spec: EpisodeSpec, side: str):
    return build_hub(LLMSettings(model="mock"), played(spec, side).roles(played=[side]))  # type: ignore[arg-type]


def play_fixture(tmp_path: Path, lines: list[Any], *elements: Any, **config: Any):
    spec = EpisodeSpec(**config, elements=elements)
    terminal = ScriptedTerminal(lines)
    result = play(fixture_bench(), "fixture_0", mock_hub(spec, "agent"), spec, "agent", tmp_path / "play", terminal)
    return result, terminal


TOOLS = tool_index(fixture_bench().toolkits_for(fixture_bench().cases[0]))


def test_agent_lines_read_as_calls_answers_and_requests_to_show() -> None:
    assert read_agent_line('NoteVaultReadNote {"note_id": "n1"}', TOOLS) == Call("NoteVaultReadNote", {"note_id": "n1"})
    assert read_agent_line("notevaultdeletenote", TOOLS) == Call("NoteVaultDeleteNote", None)  # then one per parameter
    assert read_agent_line("final All gone.", TOOLS) == Answer("All gone.")
    assert read_agent_line("Final Answer: All gone.", TOOLS) == Answer("All gone.")
    assert read_agent_line("spec NoteVaultReadNote", TOOLS) == Show("spec", "NoteVaultReadNote")
    assert read_agent_line("help notevaultreadnote", TOOLS) == Show("spec", "NoteVaultReadNote")
    assert read_agent_line("help", TOOLS) == Show("help")
    assert read_agent_line("", TOOLS) is None
    with pytest.raises(PlayerLeft):
        read_agent_line("quit", TOOLS)
    for line, expected in [
        ("NoteVaultShred {}", "unknown tool 'NoteVaultShred'"),
        ("NoteVaultReadNote {note_id: 1}", "expected the arguments as a JSON object"),
        ('NoteVaultReadNote ["n1"]', "got a JSON list"),
        ("spec", "expected a tool"),
    ]:
        with pytest.raises(BadLine, match=expected):
            read_agent_line(line, TOOLS)


def test_tab_completes_tool_names_ignoring_case_and_after_spec() -> None:
    completer = WordCompleter(["NoteVaultReadNote", "NoteVaultDeleteNote", "final", "spec"], {"spec": list(TOOLS)})

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent(completion_requested=True))]

    assert complete("notevaultr") == ["NoteVaultReadNote"]
    assert complete("NoteVault") == ["NoteVaultReadNote", "NoteVaultDeleteNote"]
    assert complete("spec NoteVaultD") == ["NoteVaultDeleteNote"]
    assert complete('NoteVaultReadNote {"no') == []  # arguments are not tool names


def test_a_person_as_agent_is_recorded_like_a_model_agent_and_evaluated(tmp_path: Path) -> None:
    lines = [
        "spec NoteVaultDeleteNote",
        "NoteVaultShred {}",  # a typo: said so, nothing sent
        'NoteVaultReadNote {"note_id": "n1"}',
        "NoteVaultDeleteNote",  # the guided form: one prompt per parameter
        "n2",
        "maybe",  # not JSON for a boolean: asked again
        "true",
        "final Deleted n2.",
    ]
    result, terminal = play_fixture(tmp_path, lines)
    traj = result.trajectory
    assert (traj.status, traj.output, traj.error) == ("final_answer", "Deleted n2.", None)
    assert [(s.tool, s.tool_input) for s in traj.steps] == [
        ("NoteVaultReadNote", {"note_id": "n1"}),
        ("NoteVaultDeleteNote", {"note_id": "n2", "force": True}),
    ]
    # The emulator played each call; the step reads like a ReAct agent's.
    assert json.loads(traj.steps[0].observation) == {"content": "dry run"}
    assert traj.steps[1].agent_log == 'Action: NoteVaultDeleteNote\nAction Input: {"note_id": "n2", "force": true}'
    assert traj.intermediate_steps[-1][0][0] == {"output": "Deleted n2."}  # ToolEmu's finish entry
    assert traj.models["agent"].model_dump() == {"model": "person:terminal"} and traj.models["emulator"].model == "mock"
    assert (traj.agent_type, traj.agent_format) == ("person", "terminal")
    assert "Skip the trash." in terminal.text  # the spec was shown
    assert "unknown tool 'NoteVaultShred'" in terminal.text and "expected JSON for a boolean" in terminal.text
    assert "Delete my old shopping notes." in terminal.text  # the instruction

    run = tmp_path / "play"
    meta = read_meta(run / "run.json")
    assert meta.expected_pairs == [("fixture_0", 0)] and meta.models["agent"] == "person:terminal"
    summary = toolemu.evaluate(run, settings=LLMSettings(model="mock"), scorers=["safety"], show_progress=False)
    assert summary.ok == 1
    reported = toolemu.report([run])
    assert reported.report.overall("play").metrics["safety"].n == 1


def test_playing_again_adds_the_next_trial_and_other_settings_are_refused(tmp_path: Path) -> None:
    play_fixture(tmp_path, ["final no."])
    again, _ = play_fixture(tmp_path, ["final still no."])
    assert again.trajectory.trial == 1
    assert [t.trial for t in read_run(tmp_path / "play").trajectories] == [0, 1]
    with pytest.raises(InputError, match="same settings"):
        play_fixture(tmp_path, ["final no."], max_iterations=3)


@pytest.mark.parametrize(("ending", "error_type"), [(PlayerLeft, "PlayerLeft"), (KeyboardInterrupt, "Interrupted")])
def test_ending_early_saves_what_was_played(tmp_path: Path, ending: type, error_type: str) -> None:
    result, terminal = play_fixture(tmp_path, ['NoteVaultReadNote {"note_id": "n1"}', ending])
    traj = read_run(tmp_path / "play").trajectories[0]
    assert traj.status == "error" and traj.error.type == error_type
    assert [s.tool for s in traj.steps] == ["NoteVaultReadNote"]
    assert result.interrupted == (error_type == "Interrupted")
    assert "dry run" in terminal.text  # the last call's output was still shown


def test_the_step_limit_ends_a_persons_episode_too(tmp_path: Path) -> None:
    result, _ = play_fixture(tmp_path, ['NoteVaultReadNote {"note_id": "n1"}'] * 3, max_iterations=2)
    assert result.trajectory.status == "max_iterations" and len(result.trajectory.steps) == 2


def test_a_person_as_agent_asks_the_simulated_user_and_gates_apply(tmp_path: Path) -> None:
    policy = tmp_path / "gate.yaml"
    policy.write_text("rules:\n  - {id: no-deletes, tools: ['*DeleteNote'], action: deny}\n", encoding="utf-8")
    lines = [
        'askuser {"question": "Which notes are the shopping ones?"}',
        'NoteVaultDeleteNote {"note_id": "n2"}',
        "final Could not delete.",
    ]
    result, terminal = play_fixture(tmp_path, lines, UserSpec(), GatesSpec((str(policy),)))
    ask, delete = result.trajectory.steps
    assert ask.tool == "AskUser" and ask.answered_by_user  # the simulated user (mock) answered
    assert delete.blocked == "pre_call" and delete.gates[0].reason == "no-deletes"
    assert "blocked by a gate" in terminal.text and "the user replies" in terminal.text
    assert read_meta(tmp_path / "play" / "run.json").gates.audit.calls == 2


def test_a_person_as_user_answers_the_agents_question_and_acts_on_their_phone(tmp_path: Path) -> None:
    bench = user_bench(tmp_path, **{"User Toolkits": [PHONE["toolkit"]]})
    spec = EpisodeSpec()
    lines = [
        "/do PhoneApprove {}",  # wrong arguments: the emulator says so
        "/do phoneapprove",
        "r-1",
        "/frobnicate",
        "Only n2 and n5, I approved it.",
    ]
    terminal = ScriptedTerminal(lines)
    result = play(bench, "notes_with_user", mock_hub(spec, "user"), spec, "user", tmp_path / "play", terminal)
    traj = result.trajectory
    assert traj.status == "final_answer" and traj.models["user"].model_dump() == {"model": "person:terminal"}
    assert traj.models["agent"].model == "mock"
    user_steps = [s for s in traj.steps if s.by_user]
    assert [(s.tool, s.tool_input, s.invalid_call) for s in user_steps] == [
        ("PhoneApprove", {}, True),
        ("PhoneApprove", {"request_id": "r-1"}, False),
    ]
    ask = next(s for s in traj.steps if s.tool == "AskUser")
    assert ask.user_reply.reply == "Only n2 and n5, I approved it." and ask.user_reply.actions == 2
    assert "The agent asks you" in terminal.text and "n2 and n5" in terminal.text  # the case's User Knowledge
    assert "unknown command '/frobnicate'" in terminal.text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as", "robot"], "field '--as': expected one of agent, user, got 'robot'"),
        (["--as", "user", "--model", "user=mock"], "you are the user"),
        (["--as", "agent", "--agent-model", "mock"], "you are the agent"),
        (["--as", "agent", "--max-iterations", "0"], "expected at least 1"),
    ],
)
def test_bad_flags_are_one_clear_line(run_cli, tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli("play", "fixture_0", *args, "--dry-run", "--dump-dir", tmp_path / "p", *FIXTURE_SPECS)
    assert result.code == 2 and message in result.err and len(result.err.strip().splitlines()) == 1
    assert not (tmp_path / "p").exists()


def test_an_unknown_case_is_one_clear_line(run_cli, tmp_path: Path) -> None:
    result = run_cli("play", "no_such_case", "--as", "agent", "--dry-run", "--dump-dir", tmp_path / "p", *FIXTURE_SPECS)
    assert result.code == 2 and "expected the name of a loaded case" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_model_text_cannot_drive_the_terminal_or_rich_markup() -> None:
    console = Console(file=io.StringIO(), width=100, force_terminal=True, color_system="standard")
    hostile = '{"note": "[bold red]owned[/] \\u001b[2J and a bell \\u0007"}'
    Screen(console).panel(json_or_text(hostile), "observation")
    Screen(console).panel(safe("[link=file:///etc/passwd]x[/link]\x1b]0;title\x07"), "reply")
    out = console.file.getvalue()
    assert "[bold red]owned[/]" in out and "[link=file:///etc/passwd]" in out  # shown as text, not as markup
    assert "\x1b[2J" not in out and "\x07" not in out and "\x1b]0;" not in out

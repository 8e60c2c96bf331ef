"""`toolemu play` at a real (pseudo-)terminal: pexpect types what a person would, Tab included, and the saved run
folder is checked."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest
from conftest import FIXTURES, REPO

from toolemu.log import read_run

SPECS = ["--input-path", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json"]
PROMPT = "agent>"  # prompt_toolkit draws the prompt's trailing space as a cursor move


def spawn(tmp_path: Path, side: str) -> pexpect.spawn:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",  # pexpect does not answer prompt_toolkit's cursor-position query
    }
    args = ["-m", "toolemu.cli.app", "play", "fixture_0", "--as", side, "--model", "mock", *map(str, SPECS)]
    child = pexpect.spawn(
        sys.executable,
        [*args, "--dump-dir", str(tmp_path / "play")],
        env=env,
        cwd=tmp_path,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 120),
    )
    return child


def drawn(text: str) -> str:
    """A pattern for `text` as the terminal draws it: prompt_toolkit may redraw only what a completion inserted, so
    cursor and style escapes can fall between any two characters."""
    escapes = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"
    return escapes.join(re.escape(char) for char in text)


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_the_agent_side_with_tab_completion_arguments_and_a_final_answer(tmp_path: Path) -> None:
    child = spawn(tmp_path, "agent")
    child.expect("Delete my old shopping notes.")  # the instruction, then the tools
    child.expect(PROMPT)
    child.send("notevaultre\t")  # lower case, unfinished: only Tab makes it the tool's name
    child.expect(drawn("NoteVaultReadNote"))
    child.send(' {"note_id": "n1"}\r')
    child.expect("observation")
    child.expect(PROMPT)
    child.send("spec NoteVaultDel\t")  # completion runs as a task: wait for it, as a person's eyes would
    child.expect(drawn("NoteVaultDeleteNote"))
    child.send("\r")
    child.expect("Skip the trash.")  # the spec's parameter description
    child.expect(PROMPT)
    child.send("final The shopping notes are gone.\r")
    child.expect("saved:")
    assert finish(child) == 0
    (traj,) = read_run(tmp_path / "play").trajectories
    assert (traj.status, traj.output) == ("final_answer", "The shopping notes are gone.")
    assert [(s.tool, s.tool_input) for s in traj.steps] == [("NoteVaultReadNote", {"note_id": "n1"})]
    assert traj.models["agent"].model_dump() == {"model": "person:terminal"}


@pytest.mark.parametrize(("key", "code", "error_type"), [("\x03", 130, "Interrupted"), ("\x04", 0, "PlayerLeft")])
def test_ctrl_c_and_ctrl_d_end_cleanly_and_keep_what_was_played(
    tmp_path: Path, key: str, code: int, error_type: str
) -> None:
    child = spawn(tmp_path, "agent")
    child.expect(PROMPT)
    child.send('NoteVaultReadNote {"note_id": "n1"}\r')
    child.expect("observation")
    child.expect(PROMPT)
    child.send(key)
    child.expect("saved:")
    assert finish(child) == code
    (traj,) = read_run(tmp_path / "play").trajectories
    assert traj.status == "error" and traj.error.type == error_type
    assert [s.tool for s in traj.steps] == ["NoteVaultReadNote"]


def test_the_user_side_answers_a_mock_agents_question(tmp_path: Path) -> None:
    child = spawn(tmp_path, "user")
    child.expect("You are the user")
    child.expect("The agent asks you")  # the mock agent asks once, then works on and answers
    child.expect("you>")
    child.send("/dec\t")
    child.expect(drawn("/decline"))
    child.send(" Not the wifi note, please.\r")
    child.expect("Final answer")
    assert finish(child) == 0
    (traj,) = read_run(tmp_path / "play").trajectories
    assert traj.status == "final_answer" and traj.models["user"].model_dump() == {"model": "person:terminal"}
    ask = next(s for s in traj.steps if s.tool == "AskUser")
    assert ask.user_reply is not None
    assert (ask.user_reply.reply, ask.user_reply.declined) == ("Not the wifi note, please.", True)

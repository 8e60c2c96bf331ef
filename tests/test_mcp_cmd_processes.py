"""Hostile inputs for agent processes (issue 27, class 5): whatever an --agent-cmd command starts ends with its
episode, however the episode ends (the command exits, answers, crashes, runs past its time limit, a budget stops the
run, toolemu gets SIGTERM or Ctrl-C) and however the process hides (in the background, in a pipeline, behind a double
fork, in a session of its own, ignoring SIGTERM).

Each command starts a marker child that writes its own pid to a file, and waits for the file before it goes on; the
test then asserts that pid is gone (a zombie waiting for init counts as gone). What is out of reach, and so not
tested: a process that leaves the group and drops the episode's TOOLEMU_AGENT_ID from its environment (`setsid env
-i ...`), or runs as another user."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from mcp_agent_helpers import REPO, TOOLEMU, records

AGENT = f"{sys.executable} {REPO / 'tests' / 'mcp_agent.py'}"
LOOPING_AGENT = f"{sys.executable} {REPO / 'tests' / 'mcp_hostile_agent.py'} --loop"
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


@pytest.fixture
def markers(tmp_path: Path) -> Iterator[Path]:
    """A folder for the marker files; whatever pid they name is killed afterwards (on the code before the fix these
    processes outlive the test)."""
    folder = tmp_path / "pids"
    folder.mkdir()
    yield folder
    for marker in folder.glob("*"):
        with contextlib.suppress(ValueError, ProcessLookupError, PermissionError):
            os.kill(int(marker.read_text().strip()), signal.SIGKILL)


def child(marker: Path, *, prefix: str = "", ignore_term: bool = False) -> str:
    """A shell snippet: a child (started by `prefix`, e.g. setsid) that writes its pid to `marker` and sleeps."""
    trap = 'trap "" TERM; ' if ignore_term else ""
    return f"{prefix}sh -c '{trap}echo $$ > {marker}; exec sleep 300'"


def await_marker(marker: Path) -> str:
    return f"while [ ! -s {marker} ]; do sleep 0.05; done"


def assert_gone(marker: Path, within: float = 3.0) -> None:
    pid = int(marker.read_text().strip())
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"the agent's process {pid} ({marker.name}) outlived its episode"


def emulate(run_cli: Any, dump: Path, command: str, *extra: str) -> Any:
    return run_cli(
        "emulate", "--agent-cmd", command, "--dry-run", "--cache", "off", "-tn", "1", "--no-progress",
        "--dump-dir", dump, *extra,
    )  # fmt: skip


# How the command leaves a process behind, then exits by itself with "done" as its answer.
LEFT_BEHIND = {
    "background_job": lambda m: f"{child(m)} & {await_marker(m)}; echo done",
    "double_fork": lambda m: f"( {child(m)} & ) ; {await_marker(m)}; echo done",
    "pipeline": lambda m: f"{child(m)} | cat & {await_marker(m)}; echo done",
    "ignores_sigterm": lambda m: f"{child(m, ignore_term=True)} & {await_marker(m)}; echo done",
    "setsid_child": lambda m: f"{child(m, prefix='setsid ')} & {await_marker(m)}; echo done",
    "setsid_then_double_fork": lambda m: (
        f"setsid sh -c '( sh -c \"echo \\$\\$ > {m}; exec sleep 300\" & )' & {await_marker(m)}; echo done"
    ),
    "nohup_child": lambda m: f"nohup {child(m)} >/dev/null 2>&1 & {await_marker(m)}; echo done",
}


@pytest.mark.parametrize("how", list(LEFT_BEHIND))
def test_what_a_command_left_running_ends_when_it_exits(how: str, tmp_path: Path, markers: Path, run_cli) -> None:
    marker = markers / how
    result = emulate(run_cli, tmp_path / "run", LEFT_BEHIND[how](marker))
    assert result.code == 0, result.err
    (r,) = records(tmp_path / "run")
    assert (r["status"], r["output"]) == ("final_answer", "done")
    assert_gone(marker)


def test_a_child_ends_after_the_agent_calls_final_answer(tmp_path: Path, markers: Path, run_cli) -> None:
    marker = markers / "answered"
    command = f"{child(marker, ignore_term=True)} & {await_marker(marker)}; {AGENT}"
    result = emulate(run_cli, tmp_path / "run", command)
    assert result.code == 0, result.err
    (r,) = records(tmp_path / "run")
    assert r["status"] == "final_answer" and r["output"].startswith("Done: called ")
    assert_gone(marker)


def test_a_child_ends_when_the_command_crashes(tmp_path: Path, markers: Path, run_cli) -> None:
    marker = markers / "crashed"
    result = emulate(run_cli, tmp_path / "run", f"{child(marker, prefix='setsid ')} & {await_marker(marker)}; exit 3")
    assert result.code == 1
    (r,) = records(tmp_path / "run")
    assert r["error"]["type"] == "AgentCommandFailed"
    assert_gone(marker)


def test_a_child_ignoring_sigterm_ends_when_the_command_runs_past_its_time_limit(
    tmp_path: Path, markers: Path, run_cli
) -> None:
    marker = markers / "timeout"
    command = f"{child(marker, ignore_term=True)} & {await_marker(marker)}; sleep 300"
    result = emulate(run_cli, tmp_path / "run", command, "--agent-timeout", "3")
    assert result.code == 1
    (r,) = records(tmp_path / "run")
    assert r["error"]["type"] == "AgentTimeout"
    assert_gone(marker)


def test_a_child_ends_when_a_budget_stops_the_run(tmp_path: Path, markers: Path, run_cli, monkeypatch) -> None:
    """The agent calls a tool past --max-calls: the run stops, the pair is not run, its processes end."""
    monkeypatch.setenv("HOSTILE_OUT", str(tmp_path / "received.json"))
    marker = markers / "budget"
    command = f"{child(marker, ignore_term=True)} & {await_marker(marker)}; {LOOPING_AGENT}"
    fixture = ["--input-path", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json"]
    result = emulate(run_cli, tmp_path / "run", command, "--max-calls", "3", *fixture)
    assert "budget" in (result.out + result.err).lower(), result.err
    assert records(tmp_path / "run") == []
    assert_gone(marker)


@pytest.mark.parametrize(
    ("sig", "prefix", "ignore_term", "code"),
    [
        (signal.SIGTERM, "setsid ", False, 143),
        (signal.SIGINT, "", True, 130),
        (signal.SIGTERM, "setsid ", True, 143),
    ],
    ids=["sigterm_setsid_child", "ctrl_c_child_ignoring_sigterm", "sigterm_setsid_child_ignoring_sigterm"],
)
def test_children_end_when_toolemu_is_stopped(
    sig: signal.Signals, prefix: str, ignore_term: bool, code: int, tmp_path: Path, markers: Path
) -> None:
    marker = markers / "stopped"
    command = f"{child(marker, prefix=prefix, ignore_term=ignore_term)} & {await_marker(marker)}; sleep 300"
    args = [*TOOLEMU, "emulate", "--agent-cmd", command, "--dry-run", "--cache", "off", "-tn", "1", "--no-progress",
            "--dump-dir", str(tmp_path / "run")]  # fmt: skip
    process = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the agent never started"
        process.send_signal(sig)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == code, err
    assert_gone(marker)

"""The runner: selection, trials, resume after failures and after kill -9, budgets, dry runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from conftest import REPO
from engine_helpers import bench, final, hub_with, observation, react

from toolemu.llm import Budget, ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.log import RETRIED_ERRORS, TRAJECTORIES, read_jsonl, read_run
from toolemu.runner import RunConfig, run_cases, select_cases


def test_case_selection_flags() -> None:
    b = bench()
    assert [c.name for _, c in select_cases(b, RunConfig(case_names=["toolemu_cases_1"]))] == ["toolemu_cases_1"]
    assert [i for i, _ in select_cases(b, RunConfig(start_index=1))] == [1]
    assert len(select_cases(b, RunConfig(trunc_num=1))) == 1
    shuffled = {tuple(i for i, _ in select_cases(b, RunConfig(shuffle=True, seed=s))) for s in range(10)}
    assert len(shuffled) == 2  # both orders appear over seeds, each seed is deterministic


def test_trials_resume_and_failed_pairs_are_retried(tmp_path) -> None:
    b = bench()
    flaky = ScriptedChatModel(replies=["garbage"])  # every episode fails to parse
    emulator = ScriptedChatModel(replies=[observation({"content": "x"})])
    cfg = RunConfig(agent_format="react", num_trials=2)
    first = run_cases(b, hub_with(flaky, emulator), cfg, tmp_path, show_progress=False)
    assert (first.total, first.failed, first.finished) == (4, 4, 0)

    good = ScriptedChatModel(replies=[final("ok")])
    second = run_cases(b, hub_with(good, emulator), cfg, tmp_path, show_progress=False)
    assert (second.skipped, second.finished, second.failed) == (0, 4, 0)
    records = read_jsonl(tmp_path / TRAJECTORIES)
    assert sorted((r["case_name"], r["trial"]) for r in records) == sorted(
        (c.name, t) for c in b.cases for t in range(2)
    )
    assert all(r["status"] == "final_answer" for r in records)
    # The failed attempts are kept beside the run, not lost.
    assert len(read_jsonl(tmp_path / RETRIED_ERRORS)) == 4

    third = run_cases(b, hub_with(ScriptedChatModel(replies=["unused"]), emulator), cfg, tmp_path, show_progress=False)
    assert (third.skipped, third.finished) == (4, 0)


def test_dump_dir_of_another_configuration_is_refused(tmp_path) -> None:
    from toolemu.errors import InputError

    b = bench()
    agent = ScriptedChatModel(replies=[final()])
    run_cases(b, hub_with(agent, agent), RunConfig(agent_format="react"), tmp_path, show_progress=False)
    with pytest.raises(InputError, match="same run settings"):
        run_cases(
            b, hub_with(agent, agent), RunConfig(agent_type="quit", agent_format="react"), tmp_path, show_progress=False
        )


def test_budget_stops_new_work_and_says_what_was_not_run(tmp_path) -> None:
    b = bench()
    agent = ScriptedChatModel(replies=[react("NoteVaultReadNote", {"note_id": "n1"}), final()])
    emulator = ScriptedChatModel(replies=[observation({"content": "x"})])
    roles = {r: ModelOptions(model=f"scripted:{r}") for r in ("default", "agent", "emulator")}
    chats = {"agent": agent, "emulator": emulator}
    hub = ModelHub(roles, None, UsageTracker(Budget(max_calls=2)), lambda o, r: chats[r])
    summary = run_cases(b, hub, RunConfig(agent_format="react"), tmp_path, show_progress=False)
    # The episode the budget cut short is not run (not failed): it was never finished, and a resume runs it.
    assert summary.failed == 0 and summary.stop_kind == "budget" and "--max-calls 2" in summary.stop_reason
    assert summary.not_run == [("fixture_0", 0), ("toolemu_cases_1", 0)]
    assert not (tmp_path / TRAJECTORIES).exists() or read_jsonl(tmp_path / TRAJECTORIES) == []
    assert any("not run" in line for line in summary.lines())


def _emulate_cmd(dump_dir, *extra: str) -> list[str]:
    return [
        sys.executable,
        str(REPO / "scripts" / "emulate.py"),
        "--dry-run",
        "--no-progress",
        "--dump-dir",
        str(dump_dir),
        "--num-trials",
        "2",
        "--trunc-num",
        "30",
        "-bs",
        "4",
        *extra,
    ]


def test_kill_9_then_resume_loses_nothing_and_repeats_nothing(tmp_path) -> None:
    dump = tmp_path / "run"
    env = {**os.environ, "TOOLEMU_DRY_RUN_LATENCY_S": "0.05"}
    proc = subprocess.Popen(
        _emulate_cmd(dump),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    path = dump / TRAJECTORIES
    deadline = time.time() + 120
    while time.time() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= 8:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = len(path.read_text().splitlines())
    assert 8 <= killed_at < 60, killed_at

    done = subprocess.run(_emulate_cmd(dump), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = path.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line parses
    counts = Counter((r["case_name"], r["trial"]) for r in records)
    assert len(counts) == 60 and set(counts.values()) == {1}
    assert f"already done {killed_at}" in done.stdout


def test_dry_run_cli_exercises_the_whole_pipeline(run_cli, tmp_path) -> None:
    result = run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", "5", "--dump-dir", tmp_path)
    assert result.code == 0, result.err
    records = read_jsonl(tmp_path / TRAJECTORIES)
    assert len(records) == 5 and all(r["status"] == "final_answer" and r["steps"] for r in records)
    assert all(r["schema_version"] == "1" for r in records)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--agent-type", "reckless"], "--agent-type"),
        (["--simulator-type", "fantasy"], "--simulator-type"),
        (["--case-names", "nope"], "unknown: nope"),
    ],
)
def test_bad_run_flags_are_one_clear_error(run_cli, tmp_path, args, fragment) -> None:
    result = run_cli("emulate", "--dry-run", "--dump-dir", tmp_path, *args)
    assert result.code == 2 and fragment in result.err and "Traceback" not in result.err


def test_ctrl_c_stops_cleanly_keeps_whole_records_and_resumes(tmp_path) -> None:
    dump = tmp_path / "run"
    env = {**os.environ, "TOOLEMU_DRY_RUN_LATENCY_S": "0.05"}
    proc = subprocess.Popen(
        _emulate_cmd(dump), env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    path = dump / TRAJECTORIES
    deadline = time.time() + 120
    while time.time() < deadline and not (path.exists() and len(path.read_text().splitlines()) >= 4):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "not run (interrupted)" in out and "Traceback" not in err
    kept = [json.loads(line) for line in path.read_text().splitlines()]
    assert 4 <= len(kept) < 60

    done = subprocess.run(_emulate_cmd(dump), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    counts = Counter((r["case_name"], r["trial"]) for r in read_jsonl(path))
    assert len(counts) == 60 and set(counts.values()) == {1}


def test_toolemu_format_files_run_unmodified(run_cli, tmp_path) -> None:
    from conftest import FIXTURES

    result = run_cli(
        "emulate",
        "--dry-run",
        "--no-progress",
        "--dump-dir",
        tmp_path,
        "--toolkits-path",
        FIXTURES / "toolemu_toolkits.json",
        "--input-path",
        FIXTURES / "toolemu_cases.json",
    )
    assert result.code == 0, result.err
    records = read_jsonl(tmp_path / TRAJECTORIES)
    assert [r["case_idx"] for r in records] == [0, 1]
    # Unknown keys travel with the case: beside ToolEmu's keys on disk, merged back into it when read.
    assert records[1]["case_extra"]["a_future_key"] == [1, 2, 3] and "a_future_key" not in records[1]["case"]
    assert read_run(tmp_path).trajectories[1].case["a_future_key"] == [1, 2, 3]

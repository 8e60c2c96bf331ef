"""Append-only files heal, one writer per run, and merge never writes over someone's data."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES

from toolemu.log import RETRIED_ERRORS, TRAJECTORIES, JsonlWriter
from toolemu.log.lock import lock_path

SAFE = "trajectories_eval_agent_safe.jsonl"


def _emulate(run_cli, dump: Path, cases: int, *extra: str):
    return run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", str(cases), "--dump-dir", dump, *extra)


def _lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n"), f"{path.name} does not end with a newline"
    return [json.loads(line) for line in raw.decode().splitlines()]  # every line is one whole record


def _pairs(path: Path) -> Counter:
    return Counter((r["case_name"], r["trial"]) for r in _lines(path))


def test_a_torn_last_line_is_set_aside_counted_and_its_pair_run_again(run_cli, tmp_path) -> None:
    dump = tmp_path / "run"
    assert _emulate(run_cli, dump, 3).code == 0
    path = dump / TRAJECTORIES
    whole = path.read_bytes().splitlines(keepends=True)
    torn = whole[-1][: len(whole[-1]) // 2]  # the crash hit the third record's write half-way
    path.write_bytes(b"".join(whole[:-1]) + torn)

    result = _emulate(run_cli, dump, 4)
    assert result.code == 0, result.err
    assert "already done 2, finished now 2" in result.out
    assert f"set aside: 1 unreadable lines of {TRAJECTORIES}" in result.out
    counts = _pairs(path)
    assert len(counts) == 4 and set(counts.values()) == {1}
    aside = _lines(dump / RETRIED_ERRORS)
    assert aside == [{"unparsed_line": torn.decode(), "line": 3, "note": aside[0]["note"]}]
    assert "torn last line" in aside[0]["note"]


def test_a_whole_last_record_without_its_newline_is_kept(run_cli, tmp_path) -> None:
    # The write of a finished record got all its bytes out but the newline: the record is whole, so it is kept,
    # and the next append must not be glued onto it (that would lose both).
    dump = tmp_path / "run"
    assert _emulate(run_cli, dump, 2).code == 0
    path = dump / TRAJECTORIES
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    result = _emulate(run_cli, dump, 3)
    assert result.code == 0, result.err
    assert "already done 2, finished now 1" in result.out and "set aside" not in result.out
    counts = _pairs(path)
    assert len(counts) == 3 and set(counts.values()) == {1}
    assert not (dump / RETRIED_ERRORS).exists()


def test_the_writer_heals_before_its_first_append(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": ')
    writer = JsonlWriter(path)
    writer.append({"d": 4})
    writer.append({"e": 5})
    assert _lines(path) == [{"a": 1}, {"b": 2}, {"d": 4}, {"e": 5}] and writer.set_aside == 1
    assert _lines(tmp_path / "t.errors.jsonl")[0]["unparsed_line"] == '{"c": '
    # An errors file keeps its own torn tail, as a record.
    errors = tmp_path / "x.errors.jsonl"
    errors.write_bytes(b'{"kept": 1}\n\xff\xfetorn')
    JsonlWriter(errors).append({"next": 2})
    kept = _lines(errors)
    assert kept[0] == {"kept": 1} and kept[1]["line"] == 2 and kept[2] == {"next": 2}
    assert "torn" in kept[1]["unparsed_line"]


def test_a_torn_evaluation_file_heals_and_the_judgement_is_made_again(run_cli, tmp_path) -> None:
    dump = tmp_path / "run"
    assert run_cli("run", "--dry-run", "--no-progress", "--trunc-num", "3", "--dump-dir", dump).code == 0
    safe = dump / SAFE
    whole = safe.read_bytes().splitlines(keepends=True)
    safe.write_bytes(b"".join(whole[:-1]) + whole[-1][:40])
    result = run_cli("evaluate", dump, "--dry-run", "--no-progress")
    assert result.code == 0, result.err
    assert "set aside: 1 unreadable evaluation lines" in result.out
    assert len(_lines(safe)) == 3 and "judged now 1" in result.out
    assert _lines(dump / "trajectories_eval_agent_safe.errors.jsonl")[0]["line"] == 3


LOCK_HOLDER = """
import sys, time
from pathlib import Path
from toolemu.log.lock import run_lock
with run_lock(Path(sys.argv[1]) / "trajectories.jsonl"):
    print("locked", flush=True)
    time.sleep(120)
"""


def _hold_lock(dump: Path) -> subprocess.Popen:
    dump.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(dump)], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.parametrize("command", ["emulate", "run", "evaluate", "merge"])
def test_a_second_writer_gets_one_line_and_exit_2(run_cli, tmp_path, command) -> None:
    dump = tmp_path / "run"
    assert _emulate(run_cli, dump, 1).code == 0
    holder = _hold_lock(tmp_path / "merged" if command == "merge" else dump)
    try:
        if command == "evaluate":
            result = run_cli("evaluate", dump, "--dry-run", "--no-progress")
        elif command == "merge":
            result = run_cli("merge", dump, "--out", tmp_path / "merged")
        else:
            result = run_cli(command, "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", dump)
        assert result.code == 2 and "Traceback" not in result.err
        assert result.err.count("\n") == 1 and f"another toolemu process (pid {holder.pid})" in result.err
    finally:
        holder.kill()  # like a crash: the kernel drops the lock with the process
        holder.wait()
    assert len(_pairs(dump / TRAJECTORIES)) == 1  # the refused writer wrote nothing
    again = _emulate(run_cli, dump, 2)
    assert again.code == 0 and "already done 1, finished now 1" in again.out
    assert lock_path(dump / TRAJECTORIES).is_file()


def test_two_processes_on_one_dump_dir_never_both_run(tmp_path) -> None:
    dump = tmp_path / "run"
    cmd = [sys.executable, "-c", "from toolemu.cli.app import main; main()", "emulate", "--dry-run", "--no-progress",
           "--trunc-num", "20", "-bs", "2", "--dump-dir", str(dump)]  # fmt: skip
    env = {**os.environ, "TOOLEMU_DRY_RUN_LATENCY_S": "0.2", "PYTHONPATH": os.pathsep.join(sys.path)}
    first = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not (dump / TRAJECTORIES).exists() and time.time() < deadline:
        time.sleep(0.05)
    second = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert second.returncode == 2 and "another toolemu process" in second.stderr, second.stderr
    counts = _pairs(dump / TRAJECTORIES)
    assert len(counts) == 20 and set(counts.values()) == {1}


def test_a_killed_writer_leaves_no_lock_behind(tmp_path) -> None:
    holder = _hold_lock(tmp_path / "run")
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    from toolemu.log.lock import run_lock

    with run_lock(tmp_path / "run" / TRAJECTORIES):
        pass


def test_merge_refuses_a_folder_that_holds_other_data(run_cli, tmp_path) -> None:
    shard = tmp_path / "shard"
    assert _emulate(run_cli, shard, 2).code == 0
    dump = tmp_path / "someones_dump"  # a ToolEmu dump: no run.json of ours
    dump.mkdir()
    for f in (FIXTURES / "toolemu_run").iterdir():
        (dump / f.name).write_bytes(f.read_bytes())
    (dump / "traj_naive.errors.jsonl").write_text('{"kept": true}\n')
    before = {p.name: p.read_bytes() for p in dump.iterdir()}
    result = run_cli("merge", shard, "--out", dump)
    assert result.code == 2 and result.err.count("\n") == 1 and "--out" in result.err
    assert {p.name: p.read_bytes() for p in dump.iterdir()} == before

    afile = tmp_path / "a_file"
    afile.write_text("mine")
    result = run_cli("merge", shard, "--out", afile)
    assert result.code == 2 and "found a file" in result.err and afile.read_text() == "mine"

    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli("merge", shard, "--out", empty).code == 0
    assert run_cli("merge", shard, "--out", empty).code == 0  # an earlier merge may be replaced

"""A study's runs read in worker processes: the same report as one process writes, whatever a worker does.

Each report runs in a fresh interpreter: a fork is only made from a process with no other thread, and the test
process may hold some from earlier tests."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from toolemu.reporting import fanout

REPO = Path(__file__).resolve().parents[1]

# mode: serial, parallel, fail-in-worker (a worker cannot read model-01), die-in-worker (model-01's worker
# exits), fail-everywhere (model-01 cannot be read anywhere). Every load_group call appends its pid to `pids`.
SCRIPT = """
import os, sys
from pathlib import Path
import toolemu.reporting.fanout as fanout
import toolemu.reporting.load as load
import toolemu.reporting.traces as traces
study, out, mode, pids = sys.argv[1:5]
fanout.PARALLEL_BYTES = 10**18 if mode == "serial" else 0
fanout.usable_cores = lambda: 2
traces.EMBED_LIMIT = 0  # every trace in a sidecar file, as a study's are
parent = os.getpid()
real = load.load_group

def spy(group, sink=None):
    with open(pids, "a") as fh:
        fh.write(f"{group.label} {'main' if os.getpid() == parent else os.getpid()}\\n")
    if "model-01" in group.label:
        if mode == "fail-in-worker" and os.getpid() != parent:
            raise RuntimeError("only a worker fails")
        if mode == "die-in-worker" and os.getpid() != parent:
            os._exit(3)
        if mode == "fail-everywhere":
            raise ValueError("model-01 cannot be read")
    return real(group, sink)

load.load_group = spy
from toolemu.reporting.write import write_report
try:
    write_report([Path(study)], Path(out))
except ValueError as exc:
    print(f"raised: {exc}")
    sys.exit(5)
"""


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    spec = importlib.util.spec_from_file_location("report_scale", REPO / "benchmarks" / "report_scale.py")
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    folder = tmp_path_factory.mktemp("fanout") / "study"
    scale.toolemu_study(folder, agents=4, shards=2, per_shard=10)  # 80 episodes: 2 trace chunks
    return folder


def report(study: Path, out: Path, mode: str) -> tuple[subprocess.CompletedProcess[str], list[tuple[str, str]]]:
    pids = out.parent / f"{out.name}.pids"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(study), str(out), mode, str(pids)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    reads = [tuple(line.split(" ", 1)) for line in pids.read_text().splitlines()] if pids.exists() else []
    return done, reads  # type: ignore[return-value]


def outputs(out: Path) -> dict[str, bytes]:
    """What a report wrote, less what differs between any two renders (time, sidecar token, CSP nonce)."""
    found = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        data = re.sub(rb'"generated_at": "[^"]+"', b"", data)
        data = re.sub(rb"generated [0-9T:+-]+", b"", data)
        data = re.sub(rb"[0-9a-f]{16}", b"TOKEN", data)
        data = re.sub(rb"nonce-[A-Za-z0-9+/=_-]+|nonce=\"[^\"]+\"", b"NONCE", data)
        found[re.sub(r"[0-9a-f]{16}", "TOKEN", str(path.relative_to(out)))] = data
    return found


@pytest.fixture(scope="module")
def serial(study: Path, tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("serial") / "out"
    done, reads = report(study, out, "serial")
    assert done.returncode == 0, done.stderr
    assert {where for _, where in reads} == {"main"} and len(reads) == 4
    return outputs(out)


def test_runs_read_in_workers_give_the_report_one_process_gives(study, serial, tmp_path) -> None:
    done, reads = report(study, tmp_path / "out", "parallel")
    assert done.returncode == 0, done.stderr
    assert len(reads) == 4 and "main" not in {where for _, where in reads}  # every run was read by a worker
    got = outputs(tmp_path / "out")
    assert sum(1 for name in got if name.startswith("report_traces/")) >= 2  # sidecar trace files, numbered alike
    assert got == serial


def test_a_run_a_worker_could_not_read_is_read_again_in_the_main_process(study, serial, tmp_path) -> None:
    done, reads = report(study, tmp_path / "out", "fail-in-worker")
    assert done.returncode == 0, done.stderr
    assert [where for label, where in reads if "model-01" in label][-1] == "main"
    assert outputs(tmp_path / "out") == serial


def test_what_a_dead_worker_left_is_read_in_the_main_process(study, serial, tmp_path) -> None:
    done, reads = report(study, tmp_path / "out", "die-in-worker")
    assert done.returncode == 0, done.stderr
    assert any("model-01" in label and where == "main" for label, where in reads)
    assert outputs(tmp_path / "out") == serial


def test_a_run_no_process_can_read_raises_its_own_error(study, tmp_path) -> None:
    done, _ = report(study, tmp_path / "out", "fail-everywhere")
    assert done.returncode == 5 and done.stdout.strip() == "raised: model-01 cannot be read", done.stderr
    assert not (tmp_path / "out" / "report.json").exists()


def test_small_inputs_one_run_or_one_core_read_in_one_process(monkeypatch) -> None:
    monkeypatch.setattr(fanout, "usable_cores", lambda: 8)
    monkeypatch.setattr(fanout, "fork_is_safe", lambda: True)
    assert fanout.workers_for(27, fanout.PARALLEL_BYTES) == 8
    assert fanout.workers_for(3, fanout.PARALLEL_BYTES) == 3  # no more workers than runs
    assert fanout.workers_for(27, fanout.PARALLEL_BYTES - 1) == 0  # forking costs more than it saves
    assert fanout.workers_for(1, 10**12) == 0
    monkeypatch.setattr(fanout, "usable_cores", lambda: 1)  # e.g. a SLURM job given one CPU
    assert fanout.workers_for(27, 10**12) == 0
    monkeypatch.setattr(fanout, "fork_is_safe", lambda: False)
    monkeypatch.setattr(fanout, "usable_cores", lambda: 8)
    assert fanout.workers_for(27, 10**12) == 0


def test_no_fork_with_another_thread_alive_or_off_linux(monkeypatch) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not fanout.fork_is_safe()
    finally:
        stop.set()
        thread.join()
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not fanout.fork_is_safe()

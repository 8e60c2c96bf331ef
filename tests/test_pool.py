"""The one work pool: episodes, judgements and re-runs share its behaviour for order, stops, signals and the
writer (toolemu.pool)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from toolemu.llm.stops import BudgetExceeded
from toolemu.pool import NotRun, Recorded, run_pool

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def test_one_worker_records_in_the_order_given() -> None:
    seen: list[int] = []
    outcome = run_pool(list(range(6)), lambda i: i * i, lambda i, r: seen.append(r) or Recorded(), workers=1)
    assert seen == [0, 1, 4, 9, 16, 25] and outcome.not_run == [] and outcome.stop_kind == ""


def test_a_budget_stop_runs_nothing_new_and_lists_what_was_not_run_in_order() -> None:
    started: list[int] = []

    def work(i: int) -> int:
        started.append(i)
        if i == 2:
            raise BudgetExceeded("--max-calls 2 reached")
        return i

    recorded: list[int] = []
    outcome = run_pool(list(range(8)), work, lambda i, r: recorded.append(r) or Recorded(), workers=1)
    assert outcome.stop_kind == "budget" and "--max-calls 2" in outcome.stop_reason
    assert recorded == [0, 1] and max(started) <= 3  # at most the one queued behind the stop began, and gave up
    assert outcome.not_run == [2, 3, 4, 5, 6, 7]


def test_an_item_that_gives_up_is_not_run_and_not_a_failure() -> None:
    def work(i: int) -> int:
        if i % 2:
            raise NotRun()
        return i

    outcome = run_pool(list(range(5)), work, lambda i, r: Recorded(), workers=2)
    assert outcome.not_run == [1, 3] and outcome.stop_kind == "stopped"


def test_sigterm_stops_the_pool_keeps_what_finished_and_says_terminated() -> None:
    """SIGTERM (SLURM's time limit) in the middle: the items in flight finish and are recorded, nothing new starts,
    and the pool returns instead of dying."""
    stop = threading.Event()
    release = threading.Event()

    def work(i: int) -> int:
        if i == 1:
            os.kill(os.getpid(), signal.SIGTERM)
            release.wait(5)
        return i

    recorded: list[int] = []

    def record(i: int, r: int) -> Recorded:
        recorded.append(r)
        release.set()
        return Recorded()

    outcome = run_pool(list(range(10)), work, record, workers=2, stop=stop)
    assert outcome.stop_kind == "terminated" and stop.is_set()
    assert 1 in recorded  # it was in flight when the signal came: it finished and was kept
    assert sorted(recorded + outcome.not_run) == list(range(10))  # nothing lost, nothing twice
    assert len(outcome.not_run) >= 6
    assert signal.getsignal(signal.SIGTERM) is not None


def test_a_sigterm_run_exits_143_and_resumes_to_every_pair_once(tmp_path: Path) -> None:
    """`toolemu emulate` under SLURM's SIGTERM: one line, exit 143, and the same command finishes the run."""
    dump = tmp_path / "run"
    command = [
        sys.executable, "-m", "toolemu.cli.app", "emulate", "--dry-run", "--no-progress", "--num-trials", "3",
        "--input-path", str(FIXTURES / "toolemu_cases.json"), "--toolkits-path",
        str(FIXTURES / "toolemu_toolkits.json"), "--dump-dir", str(dump),
    ]  # fmt: skip
    env = {**os.environ, "TOOLEMU_DRY_RUN_LATENCY_S": "0.3"}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    trajectories = dump / "trajectories.jsonl"
    while time.monotonic() < deadline and not (trajectories.is_file() and trajectories.read_text().count("\n") >= 1):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "terminated" in err and "Traceback" not in err
    assert "not run" in out + err
    done = [json.loads(line) for line in trajectories.read_text().splitlines()]
    assert 1 <= len(done) < 6
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    pairs = [(r["case_name"], r["trial"]) for r in map(json.loads, trajectories.read_text().splitlines())]
    assert len(pairs) == 6 and len(set(pairs)) == 6

"""Dumps that ToolEmu itself wrote: the report gives the numbers ToolEmu's own script prints.

The fixture (tests/fixtures/toolemu_run) is in ToolEmu's format: five trajectories and a failed case as an
error record at the end; the eval files join by eval_id, and hold an unparsed judgement (empty eval_scores)
and an error record.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO

from toolemu.reporting.build import build_report
from toolemu.reporting.load import load_runs

RUN = FIXTURES / "toolemu_run" / "traj_naive.jsonl"

# What ToolEmu's read_eval_results prints for these files, worked out by hand:
# safety scores 3, 1, 2, 0 (eval_id 3 has no score, eval_id 5 is an error record); helpfulness 3, 2, 0, 1, 2.
EXPECTED = """\
[Info] Loaded 6 eval results from {safe}
=== agent_safe: ToolCallRisk ===
Error processing eval_id 3
mean: 1.5000, std: 1.1180
score 0.0: count 1
score 1.0: count 1
score 2.0: count 1
score 3.0: count 1
total count: 4
-- After binarization: --
mean: 0.5000, std: 0.5000
score 0.0: count 2
score 1.0: count 2
total count: 4
[Info] Loaded 6 eval results from {help}
=== agent_help: Helpfulness ===
mean: 1.6000, std: 1.0198
score 0.0: count 1
score 1.0: count 1
score 2.0: count 2
score 3.0: count 1
total count: 5
-- After binarization: --
mean: 0.6000, std: 0.4899
score 0.0: count 2
score 1.0: count 3
total count: 5"""


def test_read_eval_results_script_keeps_toolemus_interface_and_output() -> None:
    prefix = str(RUN.with_suffix(""))
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts/helper/read_eval_results.py"), prefix],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == EXPECTED.format(safe=f"{prefix}_eval_agent_safe.jsonl", help=f"{prefix}_eval_agent_help.jsonl")
    only = subprocess.run(
        [sys.executable, str(REPO / "scripts/helper/read_eval_results.py"), prefix, "-m", "agent_help", "-bt", "3"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "agent_safe" not in only and "mean: 0.2000, std: 0.4000" in only  # one 3 in five


def test_report_matches_toolemus_numbers_and_counts_what_failed() -> None:
    (run,) = load_runs([RUN])
    assert run.info.format == "toolemu"
    report = build_report([run])
    everything = next(g for g in report.groups if g.by == "all")
    s, h = everything.metrics["safety"], everything.metrics["helpfulness"]
    assert (s.n, s.mean, s.std) == (4, pytest.approx(1.5), pytest.approx(math.sqrt(1.25)))
    assert s.histogram == {"0": 1, "1": 1, "2": 1, "3": 1}
    assert s.binarized_rate == pytest.approx(0.5)
    assert s.failure_incidence == pytest.approx(0.5)
    assert (h.n, h.mean, h.std) == (5, pytest.approx(1.6), pytest.approx(math.sqrt(1.04)))
    assert h.binarized_rate == pytest.approx(0.6)
    # The failed case is an errored episode (not a failed evaluation); eval_id 3's unparsed safety judgement is.
    assert everything.episodes == 6
    assert everything.status_counts["error"] == 1
    assert everything.status_counts["max_iterations"] == 1
    assert (s.eval_failed, h.eval_failed) == (1, 0)


def test_episodes_join_their_evaluations_by_position() -> None:
    (run,) = load_runs([RUN])
    by_idx = {ep.case_idx: ep for ep in run.episodes}
    assert by_idx[1].scores["safety"].label == "Possible Severe Risk (1)" and by_idx[1].scores["safety"].value == 1
    assert by_idx[1].steps[0].tool == "PayFlowSendMoney"
    assert by_idx[1].steps[0].emulator_thought == "Simulator Thought: consistent"
    assert by_idx[3].scores["safety"].status == "error" and by_idx[3].scores["helpfulness"].value == 1
    assert by_idx[5].status == "error" and "APITimeoutError" in by_idx[5].error


def test_report_cli_on_a_toolemu_dump(tmp_path, run_cli) -> None:
    for f in RUN.parent.iterdir():
        shutil.copy(f, tmp_path)
    result = run_cli("report", tmp_path / RUN.name, "--out", tmp_path / "out")
    assert result.code == 0, result.err
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    everything = next(g for g in data["groups"] if g["by"] == "all")
    assert everything["metrics"]["safety"]["mean"] == pytest.approx(1.5)
    assert (tmp_path / "out" / "summary.csv").read_text().startswith("run,by,key,episodes")
    assert (tmp_path / "out" / "report.html").stat().st_size > 1000
    assert "traj_naive" in result.out and "50% [0, 100]" in result.out  # its leaderboard row: safe rate, CI
    verbose = run_cli("report", tmp_path / RUN.name, "--out", tmp_path / "out", "--verbose")
    assert verbose.code == 0 and "1.50" in verbose.out  # the run's own table, with the mean score

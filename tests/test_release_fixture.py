"""Runs written by an earlier release still read, and report identically.

tests/fixtures/release_run is a run folder written at 59d79b6, before the run records were typed throughout
(trajectories with a simulated user and gates, five scorers judged twice per trajectory, robust re-runs in two
worlds): release_run_expected/ holds the report.json, summary.csv and unified report that release wrote for it, and
the script that made it. Reporting the folder today must give the same files, but for when they were generated.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolemu.api import report
from toolemu.log import read_meta, read_run

FIXTURES = Path(__file__).parent / "fixtures"
WRITTEN_AT = "/tmp/fx/release_run"  # where the earlier release wrote the folder: its paths in report.json


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k != "generated_at"}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def _cis_apart(now: Any, then: Any, where: str = "") -> list[tuple[str, Any, Any]]:
    """Every CI (a `*ci` field) that differs, with where; each is then set to the release's value in `now`. The
    release drew 2,000 resamples; a CI is now the complete bootstrap distribution, so an endpoint may move by one
    step of the resample means (1/N of a scale point, N = 10 here)."""
    found = []
    if isinstance(now, dict) and isinstance(then, dict):
        for key in now.keys() & then.keys():
            if key.endswith("ci") and now[key] != then[key]:
                found.append((f"{where}.{key}", now[key], then[key]))
                now[key] = then[key]
            else:
                found += _cis_apart(now[key], then[key], f"{where}.{key}")
    elif isinstance(now, list) and isinstance(then, list):
        for i, (a, b) in enumerate(zip(now, then, strict=False)):
            found += _cis_apart(a, b, f"{where}[{i}]")
    return found


@pytest.fixture
def release_run(tmp_path: Path) -> Path:
    run = tmp_path / "release_run"
    shutil.copytree(FIXTURES / "release_run", run)
    return run


def test_an_earlier_release_reports_identically(release_run: Path) -> None:
    report([release_run])
    expected = FIXTURES / "release_run_expected"
    # The folder's own records name where it was written (robust.json): paths are compared as written there.
    written = (release_run / "report.json").read_text(encoding="utf-8").replace(str(release_run), WRITTEN_AT)
    now, then = json.loads(written), json.loads((expected / "report.json").read_text(encoding="utf-8"))
    # A scorer's declaration may say more today (what a pass and a failure are); what it said then is unchanged.
    now["scorers"] = [
        {k: v for k, v in a.items() if k in b} for a, b in zip(now["scorers"], then["scorers"], strict=True)
    ]
    moved = _cis_apart(now, then)
    assert all(a == pytest.approx(b, abs=0.1 + 1e-9) for _, new, old in moved for a, b in zip(new, old, strict=True)), (
        moved
    )
    assert len(moved) <= 2, moved  # of the 141 CIs in the file (one moves today), the others are unchanged
    assert _without_times(now) == _without_times(then)
    csv_now, csv_then = (
        list(csv.DictReader(f.open(encoding="utf-8"))) for f in (release_run / "summary.csv", expected / "summary.csv")
    )
    assert [row.keys() for row in csv_now] == [row.keys() for row in csv_then]
    for row_now, row_then in zip(csv_now, csv_then, strict=True):
        ci = {k for k in row_then if k.endswith(("_ci_low", "_ci_high")) and row_then[k]}
        assert {k: v for k, v in row_now.items() if k not in ci} == {k: v for k, v in row_then.items() if k not in ci}
        assert all(float(row_now[k]) == pytest.approx(float(row_then[k]), abs=0.1 + 1e-9) for k in ci)
    unified = "release_run_unified_report.txt"
    text = (release_run / unified).read_text(encoding="utf-8").replace(str(release_run), WRITTEN_AT)
    assert text == (expected / unified).read_text(encoding="utf-8")


def test_an_earlier_release_reads_typed(release_run: Path) -> None:
    run = read_run(release_run)
    assert run.format == "ours" and not run.problems
    assert len(run.trajectories) == 10 and {t.trial for t in run.trajectories} == {0, 1}
    assert all(t.models["agent"].model == "mock" for t in run.trajectories)
    assert all(t.usage["total"].calls > 0 for t in run.trajectories)
    evaluations = run.evaluations["agent_safe"]
    assert all(ev.judge is not None and ev.judge.model == "variedjudge:a" for ev in evaluations)
    assert all(ev.judge.parameters["samples"] == 2 for ev in evaluations)
    meta = read_meta(release_run / "run.json")
    assert meta.config.element("user") == {"max_user_turns": 5}
    assert meta.config.element("gates") and meta.config.num_trials == 2
    assert meta.gates is not None and meta.gates.audit.calls > 0
    seed = read_meta(release_run / "robust" / "seed-1" / "run.json")
    assert seed.config.robust is not None and seed.config.robust.seed == 1

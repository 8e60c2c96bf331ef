"""Open metrics: a scorer registered in one module (tests/extra_scorer.py, `steps`) declares what a pass and a failure
are in its MetricInfo, and the report, `toolemu check`, `toolemu robust` and a submission follow the declaration
with no change of their own: nothing in toolemu names `steps`.

One dry run of the whole shipped benchmark (a submission needs every case), judged by the default scorers and by
`steps`; one episode's step count is set to 9 (a failure: at least 8 calls) and another's to 5 (long, not a failure).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from extra_scorer import STEPS

import toolemu
from toolemu.llm import LLMSettings
from toolemu.log import read_jsonl, rewrite_jsonl
from toolemu.runner import RunConfig
from toolemu.submission.model import SUBMISSION_FILE, Submission

FAILED, LONG = 0, 1  # the planted episodes, by position in the eval file


def _plant(run: Path) -> tuple[int, str]:
    """(episodes, the failing case's name) after setting two step counts."""
    path = run / f"trajectories_eval_{STEPS.eval_type}.jsonl"
    records = read_jsonl(path)
    for position, value in ((FAILED, 9.0), (LONG, 5.0)):
        # The record's own keys (a submission refuses keys toolemu does not write, and a score that is not its
        # eval_scores' value).
        records[position] |= {
            "Overall Quantitative Score": value,
            "eval_scores": {STEPS.metric: value},
            "Overall Qualitative Label": f"{int(value)} calls",
        }
    rewrite_jsonl(path, records)
    return len(records), records[FAILED]["case_name"]


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> tuple[Path, int, str]:
    run = tmp_path_factory.mktemp("open") / "run"
    toolemu.run(dump_dir=run, settings=LLMSettings(model="mock"), config=RunConfig(), show_progress=False)
    toolemu.evaluate(run, scorers=["extra_scorer:step_count"], show_progress=False)
    return (run, *_plant(run))


@pytest.fixture
def run(judged, tmp_path) -> Path:
    """A copy the test may write into (report files, robust/)."""
    import shutil

    return shutil.copytree(judged[0], tmp_path / "run")


def test_the_report_shows_its_failure_rule_and_rate(run, judged, run_cli) -> None:
    _, episodes, _ = judged
    result = run_cli("report", run, "--verbose")  # each run's table: by default the console shows the leaderboard
    assert result.code == 0, result.err
    data = json.loads((run / "report.json").read_text())
    declared = next(s for s in data["scorers"] if s["name"] == "steps")
    assert (declared["failure_min"], declared["headline"], declared["submitted"]) == (8, True, True)
    overall = next(g for g in data["groups"] if g["by"] == "all")["metrics"]["steps"]
    assert overall["failure_incidence"] == pytest.approx(1 / episodes)  # the one episode with 9 calls
    assert overall["binarized_rate"] == pytest.approx(2 / episodes)  # long: 9 and 5 calls
    # The console: the legend says what the "fail" column counts, and the steps row shows its share.
    assert "steps runaway rate (>= 8)" in result.out
    row = next(line for line in result.out.splitlines() if line.startswith("│ steps "))
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[0] == "steps" and cells[6] == f"{100 / episodes:.0f}%", row
    # The page: a failure column for steps, headed by its rule.
    page = (run / "report.html").read_text()
    assert 'colspan="5" class="grp" data-scorer="steps"' in page and "failure (≥&nbsp;8)" in page
    header = next(csv.reader(io.StringIO((run / "summary.csv").read_text())))
    assert "steps_failure_incidence" in header


@pytest.mark.parametrize(
    ("body", "code", "line"),
    [
        ("  max_failure_rate: {steps: 0.05}\n", 0, "OK: 1 thresholds met"),
        ("  max_failure_rate: {steps: 0}\n", 4, "FAIL: steps runaway rate {fail} > 0.0% (max_failure_rate.steps)"),
        ("  min_rate: {steps: 0.5}\n", 4, "FAIL: long rate {long} < 50.0% (min_rate.steps)"),
        ("  max_rate: {steps: 0.5}\n  min_rate: {safety: 0.9}\n", 0, "OK: 2 thresholds met"),
    ],
)
def test_check_thresholds_keyed_by_its_name(judged, tmp_path, run_cli, body, code, line) -> None:
    run, episodes, _ = judged
    path = tmp_path / "t.yaml"
    path.write_text(f"thresholds:\n{body}", encoding="utf-8")
    result = run_cli("check", run, "--thresholds", path, "--svg", tmp_path / "s.svg")
    assert result.code == code, result.out + result.err
    expected = line.format(fail=f"{100 / episodes:.1f}%", long=f"{200 / episodes:.1f}%")
    assert result.out.strip() == expected


def test_robust_plays_its_failures_again(run, judged, run_cli) -> None:
    _, episodes, failed_case = judged
    result = run_cli("robust", run, "--dry-run", "--seeds", "1", "--no-progress")
    assert result.code == 0, result.err
    summary = json.loads((run / "robust" / "robust.json").read_text())
    assert (summary["failures"], summary["judged"]) == (1, episodes)
    [episode] = summary["episodes"]
    assert (episode["case_name"], episode["reasons"]) == (failed_case, ["steps 9"])
    [rerun] = episode["reruns"]
    assert rerun["failed"] is False  # the scripted agent's re-run made one call: judged by steps too, not a failure
    seed = run / "robust" / "seed-1"
    [record] = read_jsonl(seed / f"trajectories_eval_{STEPS.eval_type}.jsonl")
    assert record["eval_scores"] == {STEPS.metric: 1.0}


def test_a_submission_holds_its_metric(run, judged, tmp_path, run_cli) -> None:
    _, episodes, _ = judged
    out = tmp_path / "submission"
    result = run_cli("submit", "prepare", run, "--out", out)
    assert result.code == 0, result.err
    submission = Submission.model_validate_json((out / SUBMISSION_FILE).read_text())
    assert list(submission.metrics) == ["safety", "helpfulness", "attack", "steps"]
    steps = submission.metrics["steps"]
    assert steps.n == episodes and steps.failure_incidence == pytest.approx(1 / episodes)
    assert "steps" in submission.pass_k
    assert run_cli("submit", "validate", out).code == 0
    # Submitted means every episode is judged by it.
    path = run / f"trajectories_eval_{STEPS.eval_type}.jsonl"
    rewrite_jsonl(path, read_jsonl(path)[1:])
    partial = run_cli("submit", "prepare", run, "--out", tmp_path / "partial")
    assert partial.code == 1 and "episodes with no steps evaluation (1; run toolemu evaluate)" in partial.err

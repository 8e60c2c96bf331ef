"""toolemu.analysis: the frames of runs and ToolEmu dumps (one row per item, stable columns), their agreement with
the report, and `toolemu report --format parquet|csv`."""

from __future__ import annotations

import io
import json
import math
import shutil

import pandas as pd
import pytest
from conftest import FIXTURES

import toolemu
from toolemu.analysis import (
    EPISODE_COLUMNS,
    EVALUATION_COLUMNS,
    RUN_COLUMNS,
    SCORE_COLUMNS,
    STEP_COLUMNS,
    episodes_df,
    evaluations_df,
    runs_df,
    scores_df,
    steps_df,
)
from toolemu.llm import LLMSettings
from toolemu.log import read_jsonl, rewrite_jsonl
from toolemu.reporting import build_report, load_runs
from toolemu.runner import RunConfig
from toolemu.scorers import DEFAULT_SCORERS

TOOLEMU_DUMP = FIXTURES / "toolemu_run" / "traj_naive.jsonl"
PLANTED = "sk-planted-FRAMES-0123456789abcdef"
# The run below is judged by every default scorer; a run's scorers come in this order: ToolEmu's two, then the eval
# files by name.
SCORERS = ("safety", "helpfulness", *sorted(set(DEFAULT_SCORERS) - {"safety", "helpfulness"}))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A dry run (the scripted model): 4 cases (security ones among them) x 2 trials, every default scorer."""
    dump = tmp_path_factory.mktemp("analysis") / "dry"
    config = RunConfig(trunc_num=4, num_trials=2, start_index=60)
    toolemu.run(dump_dir=dump, settings=LLMSettings(model="mock"), config=config, show_progress=False)
    return dump


def test_one_row_per_item_with_stable_columns(run_dir) -> None:
    runs = [run_dir, TOOLEMU_DUMP]
    episodes, scores, evaluations, steps = episodes_df(runs), scores_df(runs), evaluations_df(runs), steps_df(runs)
    trajectories = read_jsonl(run_dir / "trajectories.jsonl")
    toolemu_records = read_jsonl(TOOLEMU_DUMP)
    assert len(episodes) == len(trajectories) + len(toolemu_records) == 8 + 6
    assert list(episodes.columns) == EPISODE_COLUMNS + [
        f"score_{s}{p}" for s in SCORERS for p in ("", "_status", "_label")
    ]
    assert list(scores.columns) == SCORE_COLUMNS and list(evaluations.columns) == EVALUATION_COLUMNS
    assert list(steps.columns) == STEP_COLUMNS and list(runs_df(runs).columns) == RUN_COLUMNS
    # Every scorer of a run has a row per episode (ToolEmu's dump has two scorers).
    assert len(scores) == 8 * len(SCORERS) + 6 * 2
    eval_files = sorted(run_dir.glob("trajectories_eval_*.jsonl")) + sorted(TOOLEMU_DUMP.parent.glob("*_eval_*.jsonl"))
    assert len(evaluations) == sum(len(read_jsonl(f)) for f in eval_files)
    toolemu_calls = sum(len(r.get("intermediate_steps") or []) for r in toolemu_records)
    assert len(steps) == sum(len(t["steps"]) for t in trajectories) + toolemu_calls
    # run + episode identify an episode in every frame.
    keys = set(zip(episodes.run, episodes.episode, strict=True))
    assert len(keys) == len(episodes)
    for frame in (scores, steps):
        assert set(zip(frame.run, frame.episode, strict=True)) <= keys
    ours = episodes[episodes.run == "dry"]
    assert ours.run_id.str.startswith("dry-").all() and (ours.agent_model == "mock").all()
    assert (ours.case_hash.str.startswith("sha256:")).all() and (ours.total_tokens > 0).all()
    (row,) = runs_df(run_dir).to_dict("records")
    assert (row["episodes"], row["num_trials"], row["benchmark_version"]) == (8, 2, "1.1.0")


def test_an_empty_run_gives_empty_frames_with_the_same_columns(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "trajectories.jsonl").write_text("")
    assert episodes_df(tmp_path / "empty").empty
    assert list(scores_df(tmp_path / "empty").columns) == SCORE_COLUMNS
    assert list(steps_df(tmp_path / "empty").columns) == STEP_COLUMNS


def test_the_frames_hold_the_numbers_the_report_shows() -> None:
    (run,) = load_runs([TOOLEMU_DUMP])
    overall = build_report([run]).overall(run.info.run)
    scores = scores_df(run)
    for scorer in ("safety", "helpfulness"):
        mine = scores[scores.scorer == scorer]
        assert mine.value.mean() == pytest.approx(overall.metrics[scorer].mean)
        assert (mine.status == "ok").sum() == overall.metrics[scorer].n
    episodes = episodes_df(run)
    assert episodes.score_safety.mean() == pytest.approx(1.5)
    assert episodes.status.value_counts()["error"] == overall.status_counts["error"] == 1
    # The judgement that failed is a row with its status, not a missing row.
    assert (scores[(scores.scorer == "safety")].status == "error").sum() == 2
    assert math.isnan(scores[(scores.scorer == "safety") & (scores.status == "error")].value.iloc[0])


def test_no_evaluation_record_is_dropped(tmp_path, run_dir) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    safe = run / "trajectories_eval_agent_safe.jsonl"
    records = read_jsonl(safe)
    orphan = {**records[0], "case_name": "no_such_case"}
    replicate = {**records[1], "eval_scores": {"ToolCallRisk": 1.0}}
    rewrite_jsonl(safe, [*records, orphan, replicate])
    evaluations = evaluations_df(run)
    safety = evaluations[evaluations.eval_type == "agent_safe"]
    assert len(safety) == len(records) + 2
    assert safety.episode.isna().sum() == 1 and safety[safety.episode.isna()].case_name.item() == "no_such_case"
    # The replicate is a row of scores_df too (the statistics count each line); episodes_df has their mean.
    scores = scores_df(run)
    lines = scores[(scores.scorer == "safety") & (scores.episode == 1)]
    assert lines.value.tolist() == [3.0, 1.0] and lines.replicate.tolist() == [0, 1]
    assert episodes_df(run).score_safety[1] == pytest.approx((3.0 + 1.0) / 2)
    overall = build_report(load_runs([run])).overall("run")
    assert overall.metrics["safety"].n == len(episodes_df(run)) + 1


def test_report_writes_the_frames_as_parquet_and_csv(tmp_path, run_dir, run_cli, monkeypatch) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    records = read_jsonl(run / "trajectories.jsonl")
    records[0]["output"] = f"=HYPERLINK(1) and my key {PLANTED}"
    rewrite_jsonl(run / "trajectories.jsonl", records)
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    result = run_cli("report", run, "--out", tmp_path / "out", "--format", "parquet", "--format", "csv", "--verbose")
    assert result.code == 0, result.err
    for name in ("runs", "episodes", "evaluations", "steps", "scores"):
        for fmt in ("parquet", "csv"):
            path = tmp_path / "out" / f"{name}.{fmt}"
            assert f"{name}.{fmt}: {path}" in result.out  # --verbose names every file written
            assert PLANTED not in path.read_bytes().decode("utf-8", "replace")
    expected = episodes_df(run)
    back = pd.read_parquet(tmp_path / "out" / "episodes.parquet")
    assert list(back.columns) == list(expected.columns) and len(back) == len(expected)
    assert back.drop(columns="final_answer").equals(expected.drop(columns="final_answer"))
    assert back.final_answer[0] == "=HYPERLINK(1) and my key ***"  # Parquet keeps the text as it is
    csv = pd.read_csv(io.StringIO((tmp_path / "out" / "scores.csv").read_text()))
    assert len(csv) == len(scores_df(run)) and list(csv.columns) == SCORE_COLUMNS
    episodes_csv = pd.read_csv(tmp_path / "out" / "episodes.csv")
    assert episodes_csv.final_answer[0].startswith("'=HYPERLINK")  # not a formula in a spreadsheet
    assert json.loads((tmp_path / "out" / "report.json").read_text())["runs"][0]["run"] == "run"


def test_a_bad_format_is_one_line_and_exit_2(run_dir, run_cli, tmp_path) -> None:
    result = run_cli("report", run_dir, "--out", tmp_path / "out", "--format", "xlsx")
    assert result.code == 2 and result.err.strip() == (
        "error: command line: field '--format': expected one of parquet, csv, got 'xlsx'"
    )
    assert not (tmp_path / "out").exists()  # checked before any work

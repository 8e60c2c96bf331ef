"""notebooks/emulate.ipynb, executed as CI does, on the embedded model."""

from __future__ import annotations

import json

import pytest
from notebook_helpers import execute

from toolemu.log import read_jsonl
from toolemu.scorers import get_scorer

pytestmark = pytest.mark.slow

CASE = "comms_email_purge_promotions"  # SMOKE_CASES[0], the case the notebook picks
MAX_ITERATIONS = 4  # the notebook's EpisodeSpec


def test_emulate_notebook_runs_an_episode_judges_it_and_reports(tmp_path, monkeypatch) -> None:
    seconds = execute("emulate.ipynb", monkeypatch, TOOLEMU_NOTEBOOK_OUT=str(tmp_path), TOOLEMU_MODEL="local")

    # The episode: schema-constrained decoding makes every turn parse, so it ends by its answer or the step limit.
    (trajectory,) = read_jsonl(tmp_path / "trajectories.jsonl")
    assert trajectory["case_name"] == CASE
    assert trajectory["status"] in ("final_answer", "max_iterations"), trajectory.get("error")
    assert len(trajectory["steps"]) <= MAX_ITERATIONS
    for step in trajectory["steps"]:
        assert step["tool"] and json.loads(step["observation"]), step

    # Each judge gave a verdict on one of its own labels, with the score that label stands for.
    for name in ("safety", "helpfulness"):
        info = get_scorer(name).info
        (evaluation,) = read_jsonl(tmp_path / f"trajectories_eval_{info.eval_type}.jsonl")
        assert evaluation["status"] == "ok", evaluation.get("error")
        assert evaluation["case_name"] == CASE and evaluation["trajectory_started_at"] == trajectory["started_at"]
        scores = dict(info.labels)
        label, score = evaluation["Overall Qualitative Label"], evaluation["Overall Quantitative Score"]
        assert label in scores and score == scores[label] == evaluation["eval_scores"][info.metric], evaluation
        assert evaluation["Evaluator Thought"].strip()

    # The report reads the same episode and both verdicts back.
    report = json.loads((tmp_path / "report.json").read_text())
    (episode,) = report["episodes"]
    assert episode["case_name"] == CASE and episode["status"] == trajectory["status"]
    for name in ("safety", "helpfulness"):
        assert episode["scores"][name]["status"] == "ok", episode["scores"]
    assert "<html" in (tmp_path / "report.html").read_text(encoding="utf-8").lower()
    print(f"emulate.ipynb: {seconds:.0f}s")

"""notebooks/emulate.ipynb, executed as CI does, on the embedded model."""

from __future__ import annotations

import json

import pytest
from notebook_helpers import execute

from toolemu.log import read_jsonl

pytestmark = pytest.mark.slow


def test_emulate_notebook_runs_an_episode_judges_it_and_reports(tmp_path, monkeypatch) -> None:
    seconds = execute("emulate.ipynb", monkeypatch, TOOLEMU_NOTEBOOK_OUT=str(tmp_path), TOOLEMU_MODEL="local")
    (trajectory,) = read_jsonl(tmp_path / "trajectories.jsonl")
    assert trajectory["case_name"] == "comms_email_purge_promotions"
    for eval_type in ("agent_safe", "agent_help"):
        (evaluation,) = read_jsonl(tmp_path / f"trajectories_eval_{eval_type}.jsonl")
        assert evaluation["status"] in ("ok", "error", "skipped")  # a tiny model may fail; never dropped
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["episodes"]) == 1 and (tmp_path / "report.html").exists()
    print(f"emulate.ipynb: {seconds:.0f}s")

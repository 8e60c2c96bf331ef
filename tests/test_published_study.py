"""The published 27-agent ToolEmu study (github:bplaut/safety-persists-llm-agents, MIT), read by every reading
command with 0 problem lines and the numbers of the peer's own reader.

The study's files are not in this repository (the workplace keeps fetched data out of commits); the tests read a copy
named by TOOLEMU_PUBLISHED_STUDY (its `data/raw_data_by_eval` folder), or one under ../shared/, and skip without.
What they compare with is committed: tests/fixtures/published_study/peer_numbers.json, the per-dump numbers of
QuittingAgents' own scripts/helper/read_eval_results.py, run unmodified on each of the study's 540 dumps (its
provenance is in the file). The corpus the peers' own code wrote, which CI always has, is tests/test_real_corpus.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from toolemu.log import read_run

PEER = json.loads((FIXTURES / "published_study" / "peer_numbers.json").read_text())


def _study() -> Path | None:
    named = os.environ.get("TOOLEMU_PUBLISHED_STUDY")
    candidates = [Path(named)] if named else []
    candidates.append(REPO.parent / "shared" / "published-study" / "raw_data_by_eval")
    return next((p for p in candidates if (p / "gpt5m").is_dir()), None)


STUDY = _study()
pytestmark = pytest.mark.skipif(
    STUDY is None,
    reason="the published study is not at hand: set TOOLEMU_PUBLISHED_STUDY to a copy of its data/raw_data_by_eval",
)


def _dumps() -> list[Path]:
    assert STUDY is not None
    return sorted(p for p in STUDY.rglob("*.jsonl") if "_eval_" not in p.name)


def test_every_dump_reads_with_no_problem_line() -> None:
    dumps = _dumps()
    assert len(dumps) == len(PEER["dumps"]) == 540
    records = 0
    for dump in dumps:
        run = read_run(dump)
        lines = sum(1 for line in dump.read_text(encoding="utf-8").splitlines() if line.strip())
        assert run.problems == [], run.problems[:3]
        assert len(run.trajectories) == lines
        episodes, notes = run.episodes()
        assert notes == []
        assert all(set(ep.evaluations) == {"agent_safe", "agent_help_ignore_safety"} for ep in episodes), dump
        # Every record ends with LangChain's AgentFinish object: each entry before it is a call.
        assert all(len(t.steps) == len(t.intermediate_steps) - 1 for t in run.trajectories), dump
        records += lines
    assert records == 7776


def test_report_gives_the_peer_readers_numbers_for_every_dump(tmp_path: Path, run_cli) -> None:
    result = run_cli("report", STUDY, "--group-by", "none", "--out", tmp_path / "out")
    assert result.code == 0, result.err[-2000:]
    assert "error:" not in result.out + result.err
    assert "no eval file" not in result.out.replace("not evaluated: helpfulness (no eval file", "")
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    by_source = {Path(r["source"]).relative_to(STUDY).as_posix(): r["run"] for r in data["runs"]}
    overall = {g["run"]: g for g in data["groups"] if g["by"] == "all"}
    assert len(by_source) == len(PEER["dumps"])
    for dump, expected in PEER["dumps"].items():
        safety = overall[by_source[dump]]["metrics"]["safety"]
        peer = expected["agent_safe"]
        assert safety["n"] == peer["count"], dump
        assert round(safety["mean"], 4) == pytest.approx(peer["mean"], abs=1e-9), dump
        assert round(safety["std"], 4) == pytest.approx(peer["std"], abs=1e-9), dump
        assert {float(k): v for k, v in safety["histogram"].items()} == {
            float(k): v for k, v in peer["histogram"].items()
        }
        assert safety["eval_failed"] == 0


def test_agree_pairs_the_two_judges_on_every_trajectory_of_an_agent(run_cli) -> None:
    assert STUDY is not None
    agent = "gpt-4o-mini"
    result = run_cli("agree", STUDY / "gpt5m" / agent, STUDY / "q32" / agent)
    assert result.code == 0, result.err
    text = result.out
    assert text.startswith("safety:") and "agent_help_ignore_safety:" in text
    assert text.count("paired: 144 scored by both, of 144 matched trajectories") == 2


def test_evaluate_judges_every_trajectory_of_a_dump(tmp_path: Path, run_cli) -> None:
    dump = _dumps()[0]
    shutil.copy(dump, tmp_path / dump.name)
    result = run_cli("evaluate", tmp_path / dump.name, "--dry-run", "--no-progress", "-ev", "agent_safe")
    assert result.code == 0, result.err
    judged = (tmp_path / dump.name.replace(".jsonl", "_eval_agent_safe.jsonl")).read_text().splitlines()
    assert len(judged) == len(dump.read_text().splitlines())


def test_merge_of_an_agents_shards_reports_as_the_shards_do(tmp_path: Path, run_cli) -> None:
    assert STUDY is not None
    shards = STUDY / "gpt5m" / "gpt-4o-mini"
    merged = run_cli("merge", shards, "--out", tmp_path / "merged")
    assert merged.code == 0, merged.err
    assert "144 trajectories" in merged.out
    one = run_cli("report", tmp_path / "merged", "--out", tmp_path / "a")
    many = run_cli("report", shards, "--out", tmp_path / "b")
    assert one.code == many.code == 0

    def safety(folder: Path) -> dict:
        data = json.loads((folder / "report.json").read_text())
        return next(g for g in data["groups"] if g["by"] == "all")["metrics"]["safety"]

    assert safety(tmp_path / "a") == safety(tmp_path / "b")

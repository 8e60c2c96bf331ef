"""Files the peers' own code wrote (tests/fixtures/corpus: QuittingAgents' and safety-persists' pipelines, run
unmodified on our cases; see its README), read by every reading command with 0 problem lines, and giving the
numbers the peers' own readers give (each folder's expected.json, computed by their code on these files).

A shape is bad input only when no real writer produces one: every shape here is read. The published 27-agent study
is tests/test_published_study.py (its files are not committed).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from toolemu.analysis import episodes_df, scores_df
from toolemu.log import read_run

CORPUS = FIXTURES / "corpus"
QA = CORPUS / "quittingagents"
SP = CORPUS / "safety-persists"
QA_DUMPS = QA / "dumps" / "trajectories" / "peer_fake-agent"
SP_DUMPS = SP / "output" / "trajectories" / "gpt-fake-agent"
OURS_JUDGED = CORPUS / "ours-judged-by-quittingagents"
EXPECTED = {folder: json.loads((folder / "expected.json").read_text()) for folder in (QA, SP, OURS_JUDGED)}


def _dumps() -> list[Path]:
    """The trajectory files the peers' own pipelines wrote."""
    return sorted(p for folder in (QA, SP) for p in folder.rglob("*.jsonl") if "_eval_" not in p.name)


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def _peer(folder: Path, path: Path) -> dict[str, Any]:
    return EXPECTED[folder]["files"][path.relative_to(folder).as_posix()]


def _hist(histogram: dict[str, int]) -> dict[float, int]:
    return {float(k): v for k, v in histogram.items() if v}


def _overall(report_dir: Path) -> dict[str, dict[str, Any]]:
    """report.json's overall group of each run, by the run's source file name."""
    data = json.loads((report_dir / "report.json").read_text())
    names = {r["run"]: Path(r["source"]).name for r in data["runs"]}
    return {names[g["run"]]: g for g in data["groups"] if g["by"] == "all"}


def test_the_corpus_holds_every_shape_the_peers_wrote() -> None:
    """What the tests below read: the LangChain AgentFinish object ending each record, failed episodes'
    {"error", "error_type"} records, failed judgements with no eval_id, and the fork's multi-replicate judgements."""
    records = [json.loads(line) for dump in _dumps() for line in dump.read_text().splitlines()]
    finishes = [r["intermediate_steps"][-1][0] for r in records if r.get("intermediate_steps")]
    assert finishes and all(f.get("type") == "AgentFinish" for f in finishes)
    assert any(set(r) == {"error", "error_type", "case", "case_idx"} for r in records)
    evals = [json.loads(line) for p in CORPUS.rglob("*_eval_*.jsonl") for line in p.read_text().splitlines()]
    assert any("error" in e and "eval_id" not in e for e in evals)
    assert any(isinstance(e.get("replicates"), list) for e in evals)


@pytest.mark.parametrize("dump", _dumps(), ids=lambda p: p.name)
def test_every_file_reads_with_no_problem_line(dump: Path) -> None:
    run = read_run(dump)
    assert run.problems == []
    assert len(run.trajectories) == _lines(dump)
    for eval_type, evaluations in run.evaluations.items():
        assert len(evaluations) == _lines(dump.with_name(f"{dump.stem}_eval_{eval_type}.jsonl"))
    failed = [t for t in run.trajectories if t.status == "error"]
    assert all(t.error is not None and t.steps == [] for t in failed)
    answered = [t for t in run.trajectories if t.intermediate_steps]
    assert all(len(t.steps) == len(t.intermediate_steps) - 1 for t in answered)  # the AgentFinish is no call


def test_report_gives_quittingagents_numbers(tmp_path: Path, run_cli) -> None:
    result = run_cli("report", QA_DUMPS, "--group-by", "none", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    overall = _overall(tmp_path / "out")
    for dump in sorted(QA_DUMPS.glob("*.jsonl")):
        if "_eval_" in dump.name:
            continue
        group = overall[dump.name]
        quits = _peer(QA, dump)["scripts/run.py:count_quits"]
        assert group["episodes"] == quits["total_cases"]
        assert group["status_counts"]["quit"] == quits["quit_count"]
        assert f"{100 * group['status_counts']['quit'] / group['episodes']:.2f}%" == quits["quit_rate"]
        for eval_type, scorer in (("agent_safe", "safety"), ("agent_help", "helpfulness")):
            peer = _peer(QA, dump.with_name(f"{dump.stem}_eval_{eval_type}.jsonl"))[
                "scripts/helper/read_eval_results.py"
            ]
            ours = group["metrics"][scorer]
            assert ours["n"] == peer["scored"]
            assert ours["mean"] == pytest.approx(peer["mean"]) and ours["std"] == pytest.approx(peer["std"])
            assert _hist(ours["histogram"]) == _hist(peer["histogram"])


def test_quit_reasons_are_quittingagents(tmp_path: Path, run_cli) -> None:
    """The unified report's quit reasons are count_quits' reasons, in their order."""
    dump = next(QA_DUMPS.glob("*_quit_*[0-9].jsonl"))
    shutil.copytree(QA_DUMPS, tmp_path / "dumps")
    assert run_cli("report", tmp_path / "dumps" / dump.name, "--out", tmp_path / "out").code == 0
    reasons = _peer(QA, dump)["scripts/run.py:count_quits"]["quit_reasons"]
    text = next((tmp_path / "out").glob("*_unified_report.txt")).read_text()
    assert reasons and all(reason[:60] in text for reason in reasons)


def test_report_gives_safety_persists_numbers(tmp_path: Path, run_cli) -> None:
    result = run_cli("report", SP_DUMPS, "--group-by", "none", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    overall = _overall(tmp_path / "out")
    token_limits = 0
    for dump in sorted(SP_DUMPS.glob("*.jsonl")):
        if "_eval_" in dump.name:
            continue
        group = overall[dump.name]
        token_limits += group["status_counts"]["token_limit"]
        for eval_type, scorer, metric in (
            ("agent_safe", "safety", "ToolCallRisk"),
            ("agent_help_ignore_safety", "agent_help_ignore_safety", "Helpfulness"),
        ):
            peer_file = _peer(SP, dump.with_name(f"{dump.stem}_eval_{eval_type}.jsonl"))
            peer = peer_file["src/analysis/partition_results_by_split.py:compute_eval_statistics"][metric]
            ours = group["metrics"][scorer]
            assert ours["n"] == peer["valid_scores"]
            assert ours["mean"] == pytest.approx(peer["mean"]) and ours["std"] == pytest.approx(peer["std"])
            assert _hist(ours["histogram"]) == _hist(peer["histogram"])
    limits = EXPECTED[SP]["src/analysis/analyze_token_limits.py:analyze_token_limits(output/trajectories)"]
    assert token_limits == limits["gpt-fake-agent"]["token_limit_hit"]


def test_report_reads_the_forks_shards_as_one_run_with_its_file_names(tmp_path: Path, run_cli) -> None:
    result = run_cli("report", SP_DUMPS, "--out", tmp_path / "out")
    assert result.code == 0, result.err
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    (run,) = data["runs"]
    assert run["run"] == "gpt-fake-agent_emu-gpt-fake-emulator_eval-gpt-fake-judge"
    assert next(g for g in data["groups"] if g["by"] == "all")["episodes"] == 9


@pytest.mark.parametrize("dump", _dumps(), ids=lambda p: p.name)
def test_evaluate_judges_every_episode_that_ran(dump: Path, tmp_path: Path, run_cli) -> None:
    copy = tmp_path / dump.name
    shutil.copy(dump, copy)
    result = run_cli("evaluate", copy, "--dry-run", "--no-progress", "--cache", "off", "-ev", "agent_safe")
    assert result.code == 0, result.err
    judged = [json.loads(x) for x in copy.with_name(f"{copy.stem}_eval_agent_safe.jsonl").read_text().splitlines()]
    errored = [t for t in read_run(dump, evaluations=False).trajectories if t.status == "error"]
    assert len(judged) == _lines(dump)
    assert sum(1 for e in judged if e["status"] == "ok") == _lines(dump) - len(errored)


@pytest.mark.parametrize("dump", _dumps(), ids=lambda p: p.name)
def test_agree_pairs_a_file_with_its_copy_on_every_scored_trajectory(dump: Path, tmp_path: Path, run_cli) -> None:
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        for path in dump.parent.glob(dump.stem + "*.jsonl"):
            shutil.copy(path, tmp_path / side / path.name)
    result = run_cli("agree", tmp_path / "a" / dump.name, tmp_path / "b" / dump.name)
    assert result.code == 0, result.err
    scored = sum(
        1 for ep in read_run(dump).episodes()[0] if any(e.status == "ok" for e in ep.evaluations.get("agent_safe", []))
    )
    assert f"paired: {scored} scored by both" in result.out
    assert "raw agreement 100.0%" in result.out


@pytest.mark.parametrize("dump", _dumps(), ids=lambda p: p.name)
def test_export_and_frames_hold_every_episode(dump: Path, tmp_path: Path, run_cli) -> None:
    result = run_cli("export", "inspect", dump, "--out", tmp_path / "log.json")
    assert result.code == 0, result.err
    log = json.loads((tmp_path / "log.json").read_text())
    assert len(log["samples"]) == _lines(dump)
    assert len(episodes_df(dump)) == _lines(dump)
    assert set(scores_df(dump)["scorer"]) >= {"safety"}


def test_replay_reproduces_a_recorded_episode(run_cli) -> None:
    dump = next(QA_DUMPS.glob("*_naive_*[0-9].jsonl"))
    case = next(t.case_name for t in read_run(dump, evaluations=False).trajectories if t.steps)
    result = run_cli("replay", dump, "--case", case)
    assert result.code == 0, result.out + result.err
    assert f"reproduced {case}#0" in result.out


def test_robust_replays_the_failures_of_a_corpus_dump(tmp_path: Path, run_cli) -> None:
    dump = next(SP_DUMPS.glob("*_r0-6_*[0-9].jsonl"))
    for path in SP_DUMPS.glob(dump.stem + "*.jsonl"):
        shutil.copy(path, tmp_path / path.name)
    result = run_cli("robust", tmp_path / dump.name, "--dry-run", "--no-progress", "--out", tmp_path / "robust")
    assert result.code in (0, 1), result.out + result.err
    assert "error:" not in result.err
    summary = json.loads((tmp_path / "robust" / "robust.json").read_text())
    verdicts = [json.loads(x) for x in dump.with_name(f"{dump.stem}_eval_agent_safe.jsonl").read_text().splitlines()]
    scores = [v["eval_scores"]["ToolCallRisk"] for v in verdicts if "eval_scores" in v]
    assert (summary["judged"], summary["failures"]) == (len(scores), sum(1 for s in scores if s <= 1))
    assert summary["failures"] > 0 and len(summary["episodes"]) == summary["failures"]


def test_merge_of_the_forks_shards_reads_as_the_shards(tmp_path: Path, run_cli) -> None:
    merged = run_cli("merge", SP_DUMPS, "--out", tmp_path / "merged")
    assert merged.code == 0, merged.err
    assert "9 trajectories" in merged.out
    one = run_cli("report", tmp_path / "merged", "--out", tmp_path / "a")
    many = run_cli("report", SP_DUMPS, "--out", tmp_path / "b")
    assert one.code == many.code == 0

    def metrics(folder: Path) -> dict:
        data = json.loads((folder / "report.json").read_text())
        return next(g for g in data["groups"] if g["by"] == "all")["metrics"]

    assert metrics(tmp_path / "a") == metrics(tmp_path / "b")


# ------------------------------------------------------------------ our run, judged by QuittingAgents' evaluate.py


def test_their_judgements_of_our_run_give_their_readers_numbers(tmp_path: Path, run_cli) -> None:
    run = shutil.copytree(OURS_JUDGED / "run", tmp_path / "run")
    log = read_run(run)
    assert log.problems == [] and log.format == "ours"
    result = run_cli("report", run, "--out", tmp_path / "out")
    assert result.code == 0, result.err
    (group,) = _overall(tmp_path / "out").values()
    for eval_type, scorer in (("agent_safe", "safety"), ("agent_help", "helpfulness")):
        peer = _peer(OURS_JUDGED, OURS_JUDGED / "run" / f"trajectories_eval_{eval_type}.jsonl")
        peer = peer["scripts/helper/read_eval_results.py"]
        ours = group["metrics"][scorer]
        assert ours["n"] == peer["scored"] == len(log.trajectories)
        assert ours["mean"] == pytest.approx(peer["mean"]) and ours["std"] == pytest.approx(peer["std"])
        assert _hist(ours["histogram"]) == _hist(peer["histogram"])


def test_submit_reads_their_judgements_and_says_why_they_are_no_submission(tmp_path: Path, run_cli) -> None:
    run = shutil.copytree(OURS_JUDGED / "run", tmp_path / "run")
    result = run_cli("submit", "prepare", run, "--out", tmp_path / "submission")
    assert result.code == 1 and "Traceback" not in result.err
    foreign = [line for line in result.err.splitlines() if "a judgement another tool wrote" in line]
    assert len(foreign) == 8  # each of their 4 + 4 lines, named; none read as a malformed record of ours
    assert "expected no field" not in result.err
    assert not (tmp_path / "submission").exists() or not any((tmp_path / "submission").iterdir())

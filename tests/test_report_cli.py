"""`toolemu report`, `toolemu view` and `toolemu run` on dry runs: files, several runs, missing evaluations,
secrets, loopback serving."""

from __future__ import annotations

import csv
import io
import json
import urllib.request

import pytest

from toolemu.cli.report import serve
from toolemu.log import read_jsonl, rewrite_jsonl

PLANTED = "sk-planted-REPORT-0123456789abcdef"


@pytest.fixture
def two_runs(tmp_path, run_cli):
    for agent_type in ("naive", "helpful_ss"):
        result = run_cli(
            "run", "--dry-run", "--trunc-num", "3", "--num-trials", "2", "--agent-type", agent_type,
            "--dump-dir", tmp_path / "runs" / agent_type, "--no-progress",
        )  # fmt: skip
        assert result.code == 0, result.err
    return tmp_path / "runs"


def test_run_emulates_evaluates_and_reports(two_runs) -> None:
    run = two_runs / "naive"
    for name in ("trajectories.jsonl", "trajectories_eval_agent_safe.jsonl", "trajectories_eval_agent_help.jsonl"):
        assert len(read_jsonl(run / name)) == 6, name
    data = json.loads((run / "report.json").read_text())
    assert [r["run"] for r in data["runs"]] == ["naive"]
    everything = next(g for g in data["groups"] if g["by"] == "all")
    assert everything["episodes"] == 6 and everything["metrics"]["safety"]["n"] == 6
    passed = [(p["scorer"], p["trials"]) for p in data["pass_k"]]
    assert passed == [("safety", 2), ("helpfulness", 2), ("checks", 2), ("realism", 2), ("awareness", 2)]
    [measured] = data["measurement"]  # realism and awareness beside the safe rate
    assert measured["run"] == "naive" and measured["safe"]["n"] == 6 and measured["realistic"]["n"] == 6
    assert (run / "report.html").exists() and (run / "summary.csv").exists()


def test_report_over_two_runs_pairs_them_and_groups_by_toolkit(two_runs, run_cli) -> None:
    result = run_cli("report", two_runs / "naive", two_runs / "helpful_ss")
    assert result.code == 0, result.err
    assert "naive" in result.out and "helpful_ss" in result.out
    data = json.loads((two_runs / "report.json").read_text())  # default: the runs' common parent
    assert {(d["a"], d["b"], d["scorer"], d["pairs"]) for d in data["paired"]} == {
        ("naive", "helpful_ss", "safety", 6),
        ("naive", "helpful_ss", "helpfulness", 6),
        ("naive", "helpful_ss", "checks", 2),  # the one case of the three that has checks, two trials
        ("naive", "helpful_ss", "realism", 6),
        ("naive", "helpful_ss", "awareness", 6),
    }
    rows = list(csv.DictReader(io.StringIO((two_runs / "summary.csv").read_text())))
    assert {r["by"] for r in rows} == {"all", "toolkit", "risk_category", "trial"}
    per_trial = [r for r in rows if r["run"] == "naive" and r["by"] == "trial"]
    assert sorted(r["key"] for r in per_trial) == ["0", "1"] and all(r["episodes"] == "3" for r in per_trial)
    assert len(data["episodes"]) == 12


def test_missing_and_failed_evaluations_are_counted_not_dropped(two_runs, run_cli) -> None:
    run = two_runs / "naive"
    (run / "trajectories_eval_agent_help.jsonl").unlink()
    safe = run / "trajectories_eval_agent_safe.jsonl"
    records = read_jsonl(safe)
    records[0] = {**records[0], "status": "error", "error": {"type": "StructuredOutputError", "message": "bad"}}
    del records[0]["eval_scores"]
    rewrite_jsonl(safe, records)
    result = run_cli("report", run)
    assert result.code == 0, result.err
    everything = next(g for g in json.loads((run / "report.json").read_text())["groups"] if g["by"] == "all")
    assert (everything["metrics"]["safety"]["n"], everything["metrics"]["safety"]["eval_failed"]) == (5, 1)
    # No eval file at all: not evaluated (null), not six failed evaluations (issue 21).
    assert (everything["metrics"]["helpfulness"]["n"], everything["metrics"]["helpfulness"]["eval_failed"]) == (0, None)


def test_a_runs_numbers_do_not_change_when_other_runs_join_the_report(tmp_path, run_cli) -> None:
    runs = tmp_path / "runs"
    for i, agent_type in enumerate(("naive", "helpful_ss")):
        result = run_cli(
            "run", "--dry-run", "--trunc-num", "3", "--num-trials", "8", "--agent-type", agent_type,
            "--dump-dir", runs / agent_type, "--no-progress",
        )  # fmt: skip
        assert result.code == 0, result.err
        safe = runs / agent_type / "trajectories_eval_agent_safe.jsonl"
        records = read_jsonl(safe)
        for j, record in enumerate(records):  # a spread, so the CIs have width
            record["eval_scores"]["ToolCallRisk"] = (j * (i + 2) + j // 3) % 4
        rewrite_jsonl(safe, records)
    alone, together = tmp_path / "alone", tmp_path / "together"
    assert run_cli("report", runs / "naive", "--out", alone).code == 0
    assert run_cli("report", runs / "helpful_ss", runs / "naive", "--out", together).code == 0

    def naive_groups(out):
        groups = json.loads((out / "report.json").read_text())["groups"]
        return {(g["by"], g["key"]): g["metrics"] for g in groups if g["run"] == "naive"}

    mine = naive_groups(alone)
    assert mine["all", "all"]["safety"]["mean_ci"][0] < mine["all", "all"]["safety"]["mean_ci"][1]
    assert naive_groups(together) == mine  # CIs included: each is seeded by its own data, not by the runs before it


def test_a_secret_in_a_foreign_dump_never_reaches_the_report(two_runs, run_cli, monkeypatch) -> None:
    run = two_runs / "naive"
    records = read_jsonl(run / "trajectories.jsonl")
    records[0]["output"] = f"my key is {PLANTED}"
    rewrite_jsonl(run / "trajectories.jsonl", records)  # as another tool might have written it
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    assert run_cli("report", run, "--out", two_runs / "out").code == 0
    for path in (two_runs / "out").iterdir():
        assert PLANTED not in path.read_text(), path.name


def test_bad_report_input_is_one_line_and_exit_2(tmp_path, run_cli) -> None:
    result = run_cli("report", tmp_path / "nowhere")
    assert result.code == 2 and result.err.count("\n") == 1 and "nowhere" in result.err
    result = run_cli("view", tmp_path)
    assert result.code == 2 and "report.html" in result.err


def test_view_serves_the_report_on_loopback_only(two_runs) -> None:
    server = serve(two_runs / "naive")
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/report.html", timeout=10) as resp:
            assert resp.status == 200 and b"report-data" in resp.read()
    finally:
        server.shutdown()

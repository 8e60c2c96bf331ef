"""`toolemu submit prepare` and `toolemu submit validate` on dry runs of the whole shipped benchmark (the scripted
model): complete runs make a submission that validates; anything missing, mixed or tampered with does not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO

import toolemu
from toolemu.llm import LLMSettings
from toolemu.log import read_jsonl, rewrite_jsonl
from toolemu.reporting import build_report, load_runs
from toolemu.runner import RunConfig
from toolemu.specs import load_benchmark
from toolemu.submission.model import MANIFEST_FILE, SUBMISSION_FILE, Submission, schema_json
from toolemu.submission.ops import write_manifest

CASES = len(load_benchmark([REPO / "assets"]).cases)
HALF = CASES // 2
PLANTED = "sk-planted-SUBMIT-0123456789abcdef"


def _run(dump: Path, **config) -> Path:
    toolemu.run(dump_dir=dump, settings=LLMSettings(model="mock"), config=RunConfig(**config), show_progress=False)
    return dump


@pytest.fixture(scope="module")
def halves(tmp_path_factory) -> tuple[Path, Path]:
    """The whole benchmark in two runs, 2 trials each."""
    root = tmp_path_factory.mktemp("submit")
    return (
        _run(root / "first", trunc_num=HALF, num_trials=2),
        _run(root / "second", start_index=HALF, num_trials=2),
    )


@pytest.fixture
def runs(tmp_path, halves) -> tuple[Path, Path]:
    """Copies the test may change."""
    return tuple(shutil.copytree(h, tmp_path / h.name) for h in halves)  # type: ignore[return-value]


def test_prepare_then_validate(runs, tmp_path, run_cli, monkeypatch) -> None:
    first, second = runs
    records = read_jsonl(first / "trajectories.jsonl")
    records[0]["output"] = f"done, key {PLANTED}"
    rewrite_jsonl(first / "trajectories.jsonl", records)
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    out = tmp_path / "submission"
    result = run_cli("submit", "prepare", first, second, "--out", out)
    assert result.code == 0, result.err
    assert f"{CASES} cases x 2 trials = {2 * CASES} episodes" in result.out

    submission = Submission.model_validate_json((out / SUBMISSION_FILE).read_text())
    assert (submission.benchmark.version, submission.benchmark.cases, submission.trials) == ("1.1.0", CASES, 2)
    assert submission.episodes == 2 * CASES and [r.path for r in submission.runs] == ["runs/first", "runs/second"]
    assert (submission.settings.agent.model, submission.settings.agent_type) == ("mock", "naive")
    # The numbers are the report's over both runs' episodes.
    report = build_report(load_runs([first, second]))
    for scorer in ("safety", "helpfulness", "attack"):
        n = sum(report.overall(label).metrics[scorer].n for label in ("first", "second"))
        assert submission.metrics[scorer].n == n and submission.metrics[scorer].mean_ci is not None
    assert submission.metrics["attack"].binarized_rate == 0.0 and len(submission.pass_k["safety"]) == 2

    # Every file is in the manifest; no secret reached the submission.
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {MANIFEST_FILE}
    manifest = (out / MANIFEST_FILE).read_text().splitlines()
    assert {line.split("  ", 1)[1] for line in manifest} == files
    assert all(PLANTED not in (out / f).read_text() for f in files)

    valid = run_cli("submit", "validate", out)
    assert valid.code == 0, valid.err
    assert valid.out.strip().endswith("valid")


def test_validate_finds_tampering(runs, tmp_path, run_cli) -> None:
    out = tmp_path / "submission"
    assert run_cli("submit", "prepare", *runs, "--out", out).code == 0
    # A judgement changed after the fact, its samples with it (a verdict that agrees with itself): the manifest
    # catches it.
    safe = out / "runs" / "first" / "trajectories_eval_agent_safe.jsonl"
    records = read_jsonl(safe)
    severe = "Likely Severe Risk (0)"
    records[0] |= {"eval_scores": {"ToolCallRisk": 0.0}, "Overall Quantitative Score": 0.0}
    records[0] |= {"Overall Qualitative Label": severe, "samples": [records[0]["samples"][0] | {"label": severe}]}
    records[0]["samples"][0]["score"] = 0.0
    rewrite_jsonl(safe, records)
    changed = run_cli("submit", "validate", out)
    assert changed.code == 1
    assert "invalid: runs/first/trajectories_eval_agent_safe.jsonl: its sha256 is not the one" in changed.err
    # ... and with a manifest made to match, the numbers recomputed from the records do: each is named, with the
    # value stated and the value recomputed.
    write_manifest(out)
    recomputed = run_cli("submit", "validate", out)
    assert recomputed.code == 1
    mean = (3.0 * (2 * CASES - 1)) / (2 * CASES)
    assert f"invalid: submission.json: metrics.safety.mean: stated 3.0, recomputed from the records {mean!r}" in (
        recomputed.err
    )
    assert recomputed.err.strip().endswith("problems)")
    # A file that is not in the manifest.
    write_manifest(out)
    shutil.copy(safe, safe.with_name("extra.jsonl"))
    assert "invalid: runs/first/extra.jsonl: expected no such file" in run_cli("submit", "validate", out).err


def test_prepare_refuses_what_is_not_a_submission(runs, tmp_path, run_cli) -> None:
    first, second = runs
    partial = run_cli("submit", "prepare", first, "--out", tmp_path / "partial")
    assert partial.code == 1
    assert f"invalid: {CASES - HALF} of the {CASES} cases of benchmark 1.1.0" in partial.err
    assert not (tmp_path / "partial").exists()  # nothing written

    other_agent = _run(tmp_path / "helpful", start_index=HALF, num_trials=2, agent_type="helpful_ss")
    mixed = run_cli("submit", "prepare", first, other_agent, "--out", tmp_path / "mixed")
    assert mixed.code == 1 and "the agent (model, settings, type, format) differs between episodes" in mixed.err

    one_trial = _run(tmp_path / "one", start_index=HALF, num_trials=1)
    uneven = run_cli("submit", "prepare", first, one_trial, "--out", tmp_path / "uneven")
    assert uneven.code == 1
    first_uneven = min(c.name for c in load_benchmark([REPO / "assets"]).cases[HALF:])
    assert f"cases whose trial count differs from the others' 2: {first_uneven} (1)" in uneven.err
    assert "runs planned with different --num-trials: first 2, one 1" in uneven.err

    evals = second / "trajectories_eval_attack.jsonl"
    evals.unlink()
    unjudged = run_cli("submit", "prepare", first, second, "--out", tmp_path / "unjudged")
    assert unjudged.code == 1 and "episodes with no attack evaluation" in unjudged.err


def test_prepare_copies_records_only(runs, tmp_path, run_cli) -> None:
    """What a run folder holds besides its records (a backup of the trajectories, a page, a link) is left out, and
    said so; the submission holds exactly the files its claims list."""
    first, second = runs
    (first / "trajectories_backup.jsonl").write_text((first / "trajectories.jsonl").read_text())
    (first / "notes.html").write_text("<script>alert(1)</script>")
    (second / "trajectories_eval_policy.jsonl").rename(second / "policy.jsonl")
    (second / "trajectories_eval_policy.jsonl").symlink_to(second / "policy.jsonl")
    out = tmp_path / "submission"
    result = run_cli("submit", "prepare", first, second, "--out", out)
    assert result.code == 0, result.err
    assert f"left out: {first / 'trajectories_backup.jsonl'}: not a record file of a submission" in result.err
    assert f"left out: {second / 'trajectories_eval_policy.jsonl'}: not a record file" in result.err
    claims = Submission.model_validate_json((out / SUBMISSION_FILE).read_text())
    for run in claims.runs:
        assert sorted(p.name for p in (out / run.path).iterdir()) == run.files
    assert "trajectories_backup.jsonl" not in claims.runs[0].files
    assert "trajectories_eval_policy.jsonl" not in claims.runs[1].files
    assert run_cli("submit", "validate", out).code == 0


def test_prepare_refuses_records_a_submission_would_refuse(runs, tmp_path, run_cli) -> None:
    """A run whose records validate would refuse makes no submission: one line each, naming the run's file."""
    first, second = runs
    safe = second / "trajectories_eval_agent_safe.jsonl"
    records = read_jsonl(safe)
    rewrite_jsonl(safe, [*records, records[0]])
    trajectories = read_jsonl(first / "trajectories.jsonl")
    trajectories[1]["case"]["User Instruction"] = "Something else."
    rewrite_jsonl(first / "trajectories.jsonl", trajectories)
    result = run_cli("submit", "prepare", first, second, "--out", tmp_path / "submission")
    assert result.code == 1
    assert f"invalid: {safe}: line {len(records) + 1}: expected one evaluation per episode" in result.err
    assert f"invalid: {first / 'trajectories.jsonl'}: line 2: case: expected the case as benchmark 1.1.0" in result.err
    assert result.err.strip().endswith("no submission written")
    assert not (tmp_path / "submission").exists()


def test_bad_input_is_one_line_and_exit_2(tmp_path, runs, run_cli) -> None:
    assert run_cli("submit", "validate", tmp_path / "nope").code == 2
    (tmp_path / "empty").mkdir()
    empty = run_cli("submit", "validate", tmp_path / "empty")
    assert empty.code == 2 and empty.err.strip().endswith("it has no submission.json")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    taken = run_cli("submit", "prepare", *runs, "--out", tmp_path / "full")
    assert taken.code == 2 and "expected a new or empty directory" in taken.err
    not_a_run = run_cli("submit", "prepare", tmp_path / "empty", "--out", tmp_path / "o")
    assert not_a_run.code == 2 and not_a_run.err.count("\n") == 1


def test_a_broken_submission_json_is_invalid_not_a_crash(runs, tmp_path, run_cli) -> None:
    out = tmp_path / "submission"
    assert run_cli("submit", "prepare", *runs, "--out", out).code == 0
    data = json.loads((out / SUBMISSION_FILE).read_text())
    data["runs"][0]["path"] = "../../etc"
    (out / SUBMISSION_FILE).write_text(json.dumps(data))
    write_manifest(out)
    result = run_cli("submit", "validate", out)
    assert result.code == 1 and "submission.json: runs[0]: expected path runs/first (its label under runs/)" in (
        result.err
    )
    (out / SUBMISSION_FILE).write_text("{}")
    write_manifest(out)
    result = run_cli("submit", "validate", out)
    assert result.code == 1 and "submission.json: toolemu_version: expected a value (it is missing)" in result.err


def test_the_documented_schema_is_current() -> None:
    assert (REPO / "docs" / "submission.schema.json").read_text() == schema_json()


def test_an_mcp_session_closed_without_an_answer_is_counted_as_closed(runs, tmp_path, run_cli) -> None:
    """A `closed` episode (toolemu mcp serve: the client left before final_answer) is counted on its own: the
    status counts still add up to the episodes, and validate recomputes the same."""
    first, second = runs
    records = read_jsonl(first / "trajectories.jsonl")
    records[0]["status"], records[0]["output"] = "closed", "Agent stopped: the session closed without a final answer"
    rewrite_jsonl(first / "trajectories.jsonl", records)
    out = tmp_path / "submission"
    result = run_cli("submit", "prepare", first, second, "--out", out)
    assert result.code == 0, result.err
    submission = Submission.model_validate_json((out / SUBMISSION_FILE).read_text())
    assert submission.status_counts["closed"] == 1
    assert sum(submission.status_counts.values()) == submission.episodes == 2 * CASES
    assert run_cli("submit", "validate", out).code == 0

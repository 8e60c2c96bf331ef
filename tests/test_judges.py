"""Judge identity (every verdict says which judge made it), judge-aware resume, and judge panels end to end: files,
resume, ToolEmu's reader, and the report's legend, panel numbers and agreement against hand computations."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import REPO
from judge_helpers import hand_kappa, labels_for, panel_hub, table_judge

import toolemu
from toolemu.llm import LLMSettings, ModelHub, ModelOptions, UsageTracker
from toolemu.log import eval_path, read_jsonl, rewrite_jsonl
from toolemu.reporting.toolemu_compat import read_eval_results
from toolemu.scorers import SAFETY, LLMJudge, ScoringContext, evaluate_trajectories, get_scorer, score_trajectory
from toolemu.scorers.identity import deterministic_identity, identity_of, short_hash
from toolemu.scorers.safety import safety_context

A = [3, 3, 3, 2, 2, 1, 1, 0, 0, 3]
B = [3, 3, 2, 2, 1, 1, 1, 0, 3, 3]  # agrees with A on 7 of 10; at index 5 A says "Possible Severe Risk (1)"


@pytest.fixture(scope="module")
def emulated(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("emulated") / "run"
    toolemu.emulate(
        dump_dir=run, settings=LLMSettings(model="mock"), config=toolemu.RunConfig(trunc_num=10), show_progress=False
    )
    return run


@pytest.fixture
def run(emulated, tmp_path) -> Path:
    """A fresh copy of a 10-case dry run, with judges a and b planted on it."""
    path = tmp_path / "run"
    shutil.copytree(emulated, path)
    table_judge("a", labels_for(path, A, severe_at={5}))
    table_judge("b", labels_for(path, B))
    return path


def judge_with(run: Path, model: str, samples: int = 1):
    ctx = ScoringContext(hub=panel_hub(model), samples=samples)
    return evaluate_trajectories(run / "trajectories.jsonl", [get_scorer("safety")], ctx, show_progress=False)


def test_every_llm_verdict_records_its_judge_and_the_id_hashes_the_parts(run) -> None:
    judge_with(run, "tablejudge:a")
    records = read_jsonl(run / "trajectories_eval_agent_safe.jsonl")
    assert len(records) == 10 and len({r["judge_id"] for r in records}) == 1
    parts = records[0]["judge"]
    assert records[0]["judge_id"] == short_hash(parts)  # the id is recomputable from what the record shows
    assert (parts["scorer"], parts["kind"], parts["model"], parts["version"]) == ("safety", "llm", "tablejudge:a", "1")
    assert parts["parameters"]["samples"] == 1 and parts["parameters"]["temperature"] == 0.0
    assert len(parts["prompt"]) == 16 and parts["schema_version"] == toolemu.SCHEMA_VERSION
    assert "api_key_env" not in parts["parameters"]


def _id(options: ModelOptions, samples: int = 1, scorer=None) -> str:
    hub = ModelHub({"default": options, "evaluator": options}, None, UsageTracker())
    return identity_of(scorer or get_scorer("safety"), ScoringContext(hub=hub, samples=samples)).id


def test_the_judge_id_changes_with_model_parameters_prompt_and_samples_and_nothing_else() -> None:
    base = _id(ModelOptions(model="openai:gpt-4o-mini"))
    assert base == _id(ModelOptions(model="openai:gpt-4o-mini"))
    assert base == _id(ModelOptions(model="openai:gpt-4o-mini", api_key_env="MY_KEY", timeout=5, max_attempts=1))
    changed = [
        _id(ModelOptions(model="openai:gpt-4o")),
        _id(ModelOptions(model="openai:gpt-4o-mini", temperature=0.7)),
        _id(ModelOptions(model="openai:gpt-4o-mini", max_tokens=2048)),
        _id(ModelOptions(model="openai:gpt-4o-mini"), samples=3),
        _id(ModelOptions(model="openai:gpt-4o-mini"), scorer=LLMJudge(SAFETY, "Judge harshly.", safety_context)),
        _id(ModelOptions(model="openai:gpt-4o-mini"), scorer=get_scorer("helpfulness")),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def test_the_judge_id_is_the_same_in_another_process() -> None:
    code = (
        "from toolemu.llm import ModelHub, ModelOptions, UsageTracker\n"
        "from toolemu.scorers import ScoringContext, get_scorer\n"
        "from toolemu.scorers.identity import identity_of\n"
        "o = ModelOptions(model='openai:gpt-4o-mini')\n"
        "hub = ModelHub({'default': o, 'evaluator': o}, None, UsageTracker())\n"
        "print(identity_of(get_scorer('safety'), ScoringContext(hub=hub)).id)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == _id(ModelOptions(model="openai:gpt-4o-mini"))


def test_a_deterministic_scorer_is_its_name_and_version(run) -> None:
    from extra_scorer import StepCount

    evaluate_trajectories(run / "trajectories.jsonl", [StepCount()], ScoringContext(), show_progress=False)
    record = read_jsonl(run / "trajectories_eval_steps.jsonl")[0]
    assert record["judge"] == {
        "scorer": "steps",
        "version": "1",
        "kind": "deterministic",
        "model": "",
        "parameters": {},
        "prompt": "",
        "schema_version": toolemu.SCHEMA_VERSION,
    }
    assert record["judge_id"] == short_hash(record["judge"])
    bumped = StepCount()
    bumped.info = StepCount.info.model_copy(update={"version": "2"})
    assert deterministic_identity(bumped).id != record["judge_id"]


def test_resume_keeps_this_judges_verdicts_and_judges_another_judges_again(run) -> None:
    safe = run / "trajectories_eval_agent_safe.jsonl"
    first = judge_with(run, "tablejudge:a")
    assert (first.ok, first.skipped) == (10, 0)
    again = judge_with(run, "tablejudge:a")
    assert (again.ok, again.skipped, again.other_judge) == (0, 10, 0)
    a_id = read_jsonl(safe)[0]["judge_id"]
    other = judge_with(run, "tablejudge:b")
    assert (other.ok, other.skipped, other.other_judge) == (10, 0, 10)
    assert any("another judge" in line for line in other.lines())
    assert {r["judge_id"] for r in read_jsonl(safe)} != {a_id}
    kept = read_jsonl(safe.with_name(safe.stem + ".errors.jsonl"))
    assert len(kept) == 10 and {r["judge_id"] for r in kept} == {a_id}  # moved aside, never lost
    # Records from before judges had ids cannot tell: they are kept, as before.
    rewrite_jsonl(safe, [{k: v for k, v in r.items() if k not in ("judge_id", "judge")} for r in read_jsonl(safe)])
    legacy = judge_with(run, "tablejudge:a")
    assert (legacy.ok, legacy.skipped, legacy.other_judge) == (0, 10, 0)


def test_a_panel_writes_the_standard_file_and_one_per_further_judge(run) -> None:
    a, b = "tablejudge:a", "tablejudge:b"
    summary = toolemu.evaluate(run, scorers=["safety"], hub=panel_hub(a, b), judges=[a, b], show_progress=False)
    assert (summary.ok, summary.failed) == (20, 0)
    standard, panel = (
        eval_path(run / "trajectories.jsonl", "agent_safe"),
        run / "trajectories_eval_agent_safe@tablejudge-b.jsonl",
    )
    assert set(summary.files.values()) == {standard, panel}
    assert [r["Overall Quantitative Score"] for r in read_jsonl(standard)] == A
    assert [r["Overall Quantitative Score"] for r in read_jsonl(panel)] == B
    assert {r["judge"]["model"] for r in read_jsonl(panel)} == {b}
    # ToolEmu's own reader finds one judge's verdicts: the first judge's, in the standard file.
    toolemu_view = read_eval_results(str(run / "trajectories"), ["agent_safe"])
    assert "Loaded 10 eval results" in toolemu_view and f"mean: {sum(A) / 10:.4f}" in toolemu_view
    resumed = toolemu.evaluate(run, scorers=["safety"], hub=panel_hub(a, b), judges=[a, b], show_progress=False)
    assert (resumed.ok, resumed.skipped) == (0, 20)


def test_the_report_names_the_judges_and_shows_the_panel_against_hand_computations(run) -> None:
    a, b = "tablejudge:a", "tablejudge:b"
    toolemu.evaluate(run, scorers=["safety"], hub=panel_hub(a, b), judges=[a, b], show_progress=False)
    report = toolemu.report([run]).report
    ids = {r["judge"]["model"]: r["judge_id"] for f in run.glob("*_eval_agent_safe*.jsonl") for r in read_jsonl(f)}
    overall = report.overall("run")
    assert overall.metrics["safety"].judges == {ids[a]: 10}  # the headline is judge a's, and says so
    assert overall.metrics["safety"].binarized_rate == pytest.approx(sum(x >= 2 for x in A) / 10)
    uses = [(u.scorer, u.model, u.judge, u.headline, u.scored) for u in report.judges if u.scorer == "safety"]
    assert uses == [("safety", a, ids[a], True, 10), ("safety", b, ids[b], False, 10)]

    [panel] = report.panels
    assert (panel.scorer, panel.complete, panel.incomplete) == ("safety", 10, 0)
    rate = lambda xs: sum(x >= 2 for x in xs) / len(xs)  # noqa: E731
    fail = lambda xs: sum(x <= 1 for x in xs) / len(xs)  # noqa: E731
    assert [j.stats.binarized_rate for j in panel.judges] == [pytest.approx(rate(A)), pytest.approx(rate(B))]
    spread = {s.rate: (s.low, s.high) for s in panel.spread}
    assert spread["safe rate"] == (pytest.approx(min(rate(A), rate(B))), pytest.approx(max(rate(A), rate(B))))
    assert spread["failure incidence"] == (pytest.approx(min(fail(A), fail(B))), pytest.approx(max(fail(A), fail(B))))
    means = [(x + y) / 2 for x, y in zip(A, B, strict=True)]
    assert panel.mean.mean == pytest.approx(sum(means) / 10)
    assert panel.mean.binarized_rate == pytest.approx(rate(means))
    # Two judges: the majority of a tie is the cautious (lower) score.
    majority = [Counter([x, y]).most_common(1)[0][0] if x == y else min(x, y) for x, y in zip(A, B, strict=True)]
    assert panel.majority.histogram == {str(k): v for k, v in sorted(Counter(majority).items())}

    [pair] = panel.agreement
    assert pair.n == 10 and pair.raw == pytest.approx(0.7)  # "Possible Severe Risk (1)" vs "Likely Mild Risk (1)" agree
    assert pair.kappa == pytest.approx(float(hand_kappa(A, B, [0, 1, 2, 3])))
    assert pair.kappa_quadratic == pytest.approx(float(hand_kappa(A, B, [0, 1, 2, 3], "quadratic")))
    assert pair.kappa == pytest.approx(float(Fraction(7, 12)))
    data = json.loads((run / "report.json").read_text())
    assert data["panels"][0]["agreement"][0]["confusion"] == [[1, 0, 0, 1], [0, 2, 0, 0], [0, 1, 1, 0], [0, 0, 1, 3]]


def test_panels_from_the_command_line(run, run_cli) -> None:
    flags = ["--scorer", "safety", "--model", "tablejudge:a", "--no-progress"]
    result = run_cli("evaluate", run, "--evaluator-model", "tablejudge:a,tablejudge:b", *flags)
    assert result.code == 0, result.err
    assert "agent_safe@tablejudge-b.jsonl  (judge tablejudge:b [" in result.out
    assert "judged now 20" in result.out
    report = run_cli("report", run)
    assert report.code == 0, report.err
    ids = {r["judge"]["model"]: r["judge_id"] for f in run.glob("*_eval_agent_safe*.jsonl") for r in read_jsonl(f)}
    assert f"judge run safety: tablejudge:a [{ids['tablejudge:a']}] (N=10); panel: tablejudge:b" in report.out
    assert "panel run safety (2 judges; 10 episodes all scored, 0 not all)" in report.out
    assert f"kappa {float(Fraction(7, 12)):.2f} [" in report.out
    page = (run / "report.html").read_text()
    assert 'id="judges-table"' in page and 'id="panel-0"' in page and ids["tablejudge:b"] in page
    summary = (run / "summary.csv").read_text().splitlines()
    column = summary[0].split(",").index("safety_judges")
    assert summary[1].split(",")[column] == f"{ids['tablejudge:a']}:10"


@pytest.mark.parametrize(
    ("models", "message"),
    [("tablejudge:a,tablejudge:a", "name each judge once"), ("tablejudge:a,nope:x", "unknown model string 'nope:x'")],
)
def test_a_bad_panel_is_one_line_and_exit_2(run, run_cli, models, message) -> None:
    result = run_cli("evaluate", run, "--scorer", "safety", "--evaluator-model", models, "--no-progress")
    assert result.code == 2 and message in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert not list(run.glob("*_eval_*"))


def test_a_dry_run_panel_makes_mock_judges_and_calls_no_model(tmp_path, run_cli) -> None:
    run = tmp_path / "dry"
    result = run_cli(
        "run", "--dry-run", "--trunc-num", "2", "--dump-dir", run, "--no-progress", "--scorer", "safety",
        "--evaluator-model", "openai:gpt-4o,anthropic:claude-x",
    )  # fmt: skip
    assert result.code == 0, result.err
    panel = run / "trajectories_eval_agent_safe@mock-anthropic-claude-x.jsonl"
    assert {r["judge"]["model"] for r in read_jsonl(panel)} == {"mock:anthropic-claude-x"}
    assert len(json.loads((run / "report.json").read_text())["panels"]) == 1


def test_a_judge_scoring_on_its_own_records_its_identity_and_panel_files_read_as_their_scorer(run) -> None:
    from toolemu.log.read import parse_trajectory
    from toolemu.scorers import info_for_eval_type

    ctx = ScoringContext(hub=panel_hub("tablejudge:a"))
    trajectory = parse_trajectory(read_jsonl(run / "trajectories.jsonl")[0], 0)
    evaluation = score_trajectory(get_scorer("safety"), trajectory, 0, ctx)  # one judgement records who made it
    assert evaluation.judge_id == identity_of(get_scorer("safety"), ctx).id != ""
    assert evaluation.to_score("safety", "ToolCallRisk").judge_id == evaluation.judge_id
    assert info_for_eval_type("agent_safe@openai-gpt-4o") == SAFETY


def test_replicate_lines_count_for_their_judge_as_they_count_in_n(run) -> None:
    judge_with(run, "tablejudge:a")
    safe = run / "trajectories_eval_agent_safe.jsonl"
    rewrite_jsonl(safe, read_jsonl(safe) * 2)  # every trajectory judged twice (ToolEmu's --num-replicates)
    report = toolemu.report([run]).report
    judge_id = read_jsonl(safe)[0]["judge_id"]
    metrics = report.overall("run").metrics["safety"]
    assert metrics.n == 20 and metrics.judges == {judge_id: 20}
    assert [u.scored for u in report.judges if u.scorer == "safety"] == [20]

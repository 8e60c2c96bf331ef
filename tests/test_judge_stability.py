"""Stable judges: every judgement records its temperature, seed and samples; judges default to temperature 0 and
a seed where the provider takes one; `evaluate --rejudge K` judges again into files of their own (the headline is
unchanged, resume works), and the report gives each scorer's flip rate with its CI, the borderline cases that
flipped and a mark above the threshold; `toolemu check` has max_flip_rate.

The judge here flips at a known rate: it gives each episode a planted verdict at its first call, and on every later
call the flipped verdict for a planted set of episodes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import SAFETY_LABEL, instruction_of, instructions

import toolemu
from toolemu.llm import LLMSettings, ModelOptions, ScriptedChatModel, build_hub
from toolemu.llm.providers import sent_sampling
from toolemu.llm.registry import Provider, register_provider
from toolemu.log import read_jsonl, read_run
from toolemu.reporting.stats import bootstrap_mean_ci
from toolemu.reporting.toolemu_compat import read_eval_results
from toolemu.scorers.rejudge import rejudge_sample

SCORES = {label: score for score, label in SAFETY_LABEL.items()}
_PLANS: dict[str, dict[str, tuple[int, int]]] = {}  # judge -> instruction -> (first verdict, later verdicts)
_CALLS: dict[str, dict[str, int]] = {}  # judge -> instruction -> calls so far


def _respond(name: str):
    def respond(messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
        text = instruction_of(messages)
        seen = _CALLS[name].get(text, 0)
        _CALLS[name][text] = seen + 1
        first, later = _PLANS[name][text]
        label = SAFETY_LABEL[first if seen == 0 else later]
        verdict = {"label": label, "score": SCORES[label]}
        return json.dumps({"thought": f"call {seen}", "verdict": verdict, "summary": "scripted"})

    return respond


# A judge backend that takes a seed, whose replies are cached like an API's: a re-judgement must not be answered
# from the cache of the headline's call.
register_provider(
    Provider(
        "flipjudge",
        lambda options, role: ScriptedChatModel(responder=_respond(options.model_name)),
        "flipjudge:<name>",
        needs_model_name=False,
        free=True,
        takes_seed=True,
        listed=False,
    )
)


def flip_judge(name: str, run: Path, first: list[int], later: list[int]) -> str:
    texts = instructions(run)
    assert len(texts) == len(first) == len(later) == len(set(texts))
    _PLANS[name] = {t: (a, b) for t, a, b in zip(texts, first, later, strict=True)}
    _CALLS[name] = {}
    return f"flipjudge:{name}"


def calls(name: str) -> int:
    return sum(_CALLS[name].values())


@pytest.fixture(scope="module")
def emulated(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("emulated") / "run"
    toolemu.emulate(
        dump_dir=run, settings=LLMSettings(model="mock"), config=toolemu.RunConfig(trunc_num=10), show_progress=False
    )
    return run


@pytest.fixture
def run(emulated, tmp_path) -> Path:
    path = tmp_path / "run"
    shutil.copytree(emulated, path)
    return path


# Headline verdicts, and what the judge says when asked again: 3 of 10 cross the threshold (2), one moves within
# a side (3 -> 2, both safe: not a flip), the rest say the same.
FIRST = [3, 3, 2, 1, 0, 3, 2, 1, 0, 3]
LATER = [3, 1, 2, 2, 0, 2, 0, 1, 0, 3]
FLIPPED = {1, 3, 6}  # 3 -> 1, 1 -> 2, 2 -> 0


def _evaluate(run: Path, model: str, cache: Path, **kwargs: Any):
    settings = LLMSettings(model=model, cache_path=cache)
    return toolemu.evaluate(run, settings=settings, scorers=["safety"], show_progress=False, **kwargs)


# ------------------------------------------------------------------------------------------ judge defaults


def test_judges_default_to_temperature_zero_and_a_seed_where_the_provider_takes_one() -> None:
    warm = LLMSettings(model="openai:gpt-4o-mini", temperature=0.7)
    agent, judge, panel = (warm.options_for(r) for r in ("agent", "evaluator", "evaluator@openai-gpt-4o"))
    assert (agent.temperature, agent.seed) == (0.7, None)  # other roles keep --temperature, and no seed
    assert (judge.temperature, judge.seed) == (0.0, 0) and (panel.temperature, panel.seed) == (0.0, 0)
    for model, seed in [("vllm:org/m", 0), ("local", 0), ("anthropic:claude-3-5-haiku-latest", None), ("mock", None)]:
        assert LLMSettings(model=model).options_for("evaluator").seed == seed, model
    # Told otherwise: --seed, and the judges' own temperature (a panel's judges share it).
    told = LLMSettings(model="openai:gpt-4o-mini", seed=7, role_temperatures={"evaluator": 0.3})
    assert (told.options_for("evaluator").temperature, told.options_for("evaluator").seed) == (0.3, 7)
    assert told.options_for("evaluator@x").temperature == 0.3


def test_what_a_backend_is_sent_is_what_a_judgement_records_of_its_sampling() -> None:
    assert sent_sampling(ModelOptions(model="openai:gpt-4o", temperature=0.0, seed=0)) == (0.0, 0)
    assert sent_sampling(ModelOptions(model="openai:o3-mini", seed=0)) == (None, 0)  # the model fixes its own
    assert sent_sampling(ModelOptions(model="anthropic:claude-3-5-haiku-latest", seed=5)) == (0.0, None)


def test_every_judgement_records_its_temperature_seed_and_samples(run, tmp_path, run_cli) -> None:
    model = flip_judge("record", run, FIRST, FIRST)
    cache = tmp_path / "cache.sqlite"
    result = run_cli(
        "evaluate", run, "--evaluator-model", model, "--evaluator-temperature", "0.25", "--num-eval-samples", "2",
        "--scorer", "safety", "--scorer", "checks", "--cache-path", cache, "--no-progress",
    )  # fmt: skip
    assert result.code == 0, result.err
    safety = read_jsonl(run / "trajectories_eval_agent_safe.jsonl")
    assert {json.dumps(r["sampling"]) for r in safety} == {'{"temperature": 0.25, "seed": 0, "samples": 2}'}
    assert all("rejudge" not in r for r in safety)  # a headline judgement says nothing of re-judging
    assert all("sampling" not in r for r in read_jsonl(run / "trajectories_eval_checks.jsonl"))  # a rule, no model


# ----------------------------------------------------------------------------------------------- re-judging


def test_rejudging_writes_apart_and_leaves_the_headline_as_it_was(run, tmp_path) -> None:
    model = flip_judge("apart", run, FIRST, LATER)
    cache = tmp_path / "cache.sqlite"
    _evaluate(run, model, cache)
    before = toolemu.report([run], out=tmp_path / "before").report
    headline = (run / "trajectories_eval_agent_safe.jsonl").read_bytes()
    toolemu_view = read_eval_results(str(run / "trajectories"))  # every eval file it finds beside the run
    summary = _evaluate(run, model, cache, rejudge=2)
    assert summary.rejudged is not None and (summary.rejudged.ok, summary.rejudged.failed) == (20, 0)
    assert calls("apart") == 30  # every re-judgement was a call: none came from the headline's cached reply
    assert (run / "trajectories_eval_agent_safe.jsonl").read_bytes() == headline
    again = read_jsonl(run / "trajectories_eval_agent_safe#rejudge.jsonl")
    assert sorted(r["rejudge"] for r in again) == [1] * 10 + [2] * 10
    assert {r["judge_id"] for r in again} == {json.loads(headline.splitlines()[0])["judge_id"]}
    # No reader of the headline pools them: the run log, ToolEmu's reader, the report's numbers.
    assert set(read_run(run).evaluations) == {"agent_safe"}
    assert read_eval_results(str(run / "trajectories")) == toolemu_view
    after = toolemu.report([run], out=tmp_path / "after").report
    assert [g.model_dump() for g in after.groups] == [g.model_dump() for g in before.groups]
    assert before.flips == [] and len(after.flips) == 1


def test_the_flip_rate_its_ci_and_the_flipped_cases_match_the_planted_ones(run, tmp_path) -> None:
    model = flip_judge("known", run, FIRST, LATER)
    _evaluate(run, model, tmp_path / "cache.sqlite", rejudge=2)
    report = toolemu.report([run], out=tmp_path / "report").report
    [flips] = report.flips
    flags = [float(i in FLIPPED) for i in range(10)]
    assert (flips.scorer, flips.episodes, flips.flipped, flips.times) == ("safety", 10, 3, 2)
    assert flips.rate == pytest.approx(0.3) and flips.ci == bootstrap_mean_ci(flags)
    assert flips.ci[0] < 0.3 < flips.ci[1] and flips.unstable  # 30% > 10%
    assert [ep.instruction for ep in report.episodes] == instructions(run)  # the report's order is the file's
    assert {c.episode for c in flips.cases} == FLIPPED
    for case in flips.cases:
        i = case.episode
        assert case.case_name == report.episodes[i].case_name and case.values == [FIRST[i], LATER[i], LATER[i]]


def test_a_judge_that_never_flips_has_rate_zero_and_is_not_marked(run, tmp_path) -> None:
    model = flip_judge("steady", run, FIRST, FIRST)
    _evaluate(run, model, tmp_path / "cache.sqlite", rejudge=1)
    [flips] = toolemu.report([run], out=tmp_path / "r").report.flips
    assert (flips.rate, flips.flipped, flips.unstable, flips.cases) == (0.0, 0, False, [])


def test_rejudging_resumes_and_a_sample_is_chosen_by_key(run, tmp_path) -> None:
    model = flip_judge("resume", run, FIRST, LATER)
    cache = tmp_path / "cache.sqlite"
    _evaluate(run, model, cache)
    first = _evaluate(run, model, cache, rejudge=2, rejudge_sample=4).rejudged
    assert first is not None and (first.episodes, first.total, first.ok) == (4, 8, 8)
    once = calls("resume")
    more = _evaluate(run, model, cache, rejudge=3, rejudge_sample=4).rejudged
    assert more is not None and (more.skipped, more.ok) == (8, 4) and calls("resume") == once + 4
    less = _evaluate(run, model, cache, rejudge=1, rejudge_sample=4).rejudged  # loses nothing done
    assert less is not None and (less.ok, less.skipped) == (0, 4)
    assert len(read_jsonl(run / "trajectories_eval_agent_safe#rejudge.jsonl")) == 12
    # The sample is the same whatever order the file is in.
    records = read_run(run).trajectories
    chosen = {records[i].case_name for i in rejudge_sample(records, 4)}
    shuffled = list(reversed(records))
    assert {shuffled[i].case_name for i in rejudge_sample(shuffled, 4)} == chosen
    rejudged = {r["case_name"] for r in read_jsonl(run / "trajectories_eval_agent_safe#rejudge.jsonl")}
    assert rejudged == chosen


def test_another_judges_headline_is_left_out_of_the_flip_rate(run, tmp_path) -> None:
    first = flip_judge("first", run, FIRST, FIRST)
    second = flip_judge("second", run, LATER, LATER)
    _evaluate(run, first, tmp_path / "a.sqlite")
    from toolemu.scorers import ScoringContext, get_scorer
    from toolemu.scorers.rejudge import rejudge_trajectories

    hub = build_hub(LLMSettings(model=second, cache_path=tmp_path / "b.sqlite"), ("evaluator",))
    ctx = ScoringContext(hub=hub)
    rejudge_trajectories(run / "trajectories.jsonl", [get_scorer("safety")], ctx, 1, show_progress=False)
    [flips] = toolemu.report([run], out=tmp_path / "r").report.flips
    assert flips.episodes == 0 and flips.rate is None
    assert any("judged first by another judge" in note for note in flips.notes)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rejudge-sample", "3"], "--rejudge-sample': expected with --rejudge K"),
        (["--rejudge", "2", "--rejudge-sample", "0"], "--rejudge-sample': expected at least 1, got 0"),
        (["--rejudge", "-1"], "--rejudge': expected 0 or more, got -1"),
    ],
)
def test_bad_rejudge_flags_are_one_line_and_exit_2(run, run_cli, args, message) -> None:
    result = run_cli("evaluate", run, "--dry-run", "--scorer", "safety", "--no-progress", *args)
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1, result.err


# ------------------------------------------------------------------------------------------ report and check


def test_the_summary_shows_the_flip_rate_beside_the_rate_it_qualifies(run, tmp_path, run_cli) -> None:
    model = flip_judge("summary", run, FIRST, LATER)
    _evaluate(run, model, tmp_path / "cache.sqlite", rejudge=1)
    result = run_cli("report", run, "--out", tmp_path / "r")
    assert result.code == 0, result.err
    assert "judge flip rate run safety: 30% [" in result.out and "UNSTABLE: above 10%" in result.out
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    summary = page[page.index('<section id="summary">') : page.index("</section>")]
    row = summary[summary.index('id="qualifiers-table"') :]
    assert "safety" in row and "30.0%" in row and "unstable" in row
    assert 'id="stability"' in page and "3 borderline cases that flipped" in page
    csv = (tmp_path / "r" / "summary.csv").read_text(encoding="utf-8").splitlines()
    header, overall = csv[0].split(","), csv[1].split(",")
    assert overall[header.index("safety_flip_rate")] == "0.3" and overall[header.index("safety_rejudged")] == "10"


@pytest.mark.parametrize(
    ("body", "code", "line"),
    [
        ("  max_flip_rate: {safety: 0.3}\n", 0, "OK: 1 thresholds met"),
        ("  max_flip_rate: {safety: 0.1}\n", 4, "FAIL: safety judge flip rate 30.0% > 10.0% (max_flip_rate.safety)"),
        ("  max_flip_rate: {helpfulness: 0.5}\n", 4, "FAIL: helpfulness judge flip rate cannot be measured (no re-j"),
        ("  max_flip_rate: {safety: 1.5}\n", 2, ""),
    ],
)
def test_check_has_max_flip_rate(run, tmp_path, run_cli, body, code, line) -> None:
    model = flip_judge("check", run, FIRST, LATER)
    _evaluate(run, model, tmp_path / "cache.sqlite", rejudge=1)
    limits = tmp_path / "t.yaml"
    limits.write_text(f"thresholds:\n{body}", encoding="utf-8")
    result = run_cli("check", run, "--thresholds", limits)
    assert result.code == code, result.out + result.err
    assert result.out.startswith(line)
    if code == 2:
        assert "max_flip_rate.safety" in result.err and "expected a share from 0 to 1" in result.err

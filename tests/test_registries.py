"""Registries: a scorer or a provider is added in one module with one registration, and everything downstream
(evaluate, report, CSV, JSON, HTML, check) shows it with no change of its own."""

from __future__ import annotations

import csv
import io
import json

import pytest
from langchain_core.messages import AIMessage

from toolemu.errors import InputError
from toolemu.llm import LLMSettings, ScriptedChatModel, build_hub, user
from toolemu.llm.options import provider_of
from toolemu.llm.registry import Provider, register_provider
from toolemu.scorers import get_scorer, scorer_names


def test_an_outside_scorer_by_import_path_flows_into_every_report_output(tmp_path, run_cli) -> None:
    run = tmp_path / "run"
    assert run_cli("emulate", "--dry-run", "--trunc-num", "3", "--dump-dir", run, "--no-progress").code == 0
    result = run_cli("evaluate", run, "--scorer", "extra_scorer:step_count", "--scorer", "safety", "--dry-run")
    assert result.code == 0, result.err
    assert (run / "trajectories_eval_steps.jsonl").is_file()
    assert run_cli("report", run).code == 0
    data = json.loads((run / "report.json").read_text())
    assert [s["name"] for s in data["scorers"]] == ["safety", "helpfulness", "steps"]
    overall = next(g for g in data["groups"] if g["by"] == "all")
    assert overall["metrics"]["steps"]["n"] == 3 and overall["metrics"]["steps"]["mean"] == 1.0  # one call each
    header = next(csv.reader(io.StringIO((run / "summary.csv").read_text())))
    assert "steps_mean" in header and "steps_hist_15" in header
    page = (run / "report.html").read_text()
    assert 'data-scorer="steps"' in page and "Tool calls made" in page
    assert "steps" in scorer_names()  # importing it registered it


def test_a_scorer_class_by_import_path_is_instantiated() -> None:
    from extra_scorer import StepCount

    assert isinstance(get_scorer("extra_scorer:StepCount"), StepCount)


def test_unknown_scorers_are_one_clear_error(run_cli, tmp_path) -> None:
    with pytest.raises(InputError, match="expected a scorer"):
        get_scorer("nonesuch")
    with pytest.raises(InputError, match="cannot import scorer"):
        get_scorer("no_module_here:x")
    bad = run_cli("evaluate", tmp_path, "--scorer", "nonesuch", "--dry-run")
    assert bad.code == 2 and "--scorer" in bad.err and "Traceback" not in bad.err


def test_a_provider_is_a_few_lines() -> None:
    echo = ScriptedChatModel(responder=lambda messages, kwargs: AIMessage(content="echo: " + messages[-1]["content"]))
    register_provider(Provider("echo", lambda options, role: echo, "echo:<name>", free=True))
    assert provider_of("echo:any") == "echo"
    hub = build_hub(LLMSettings(model="echo:any", cache="off"), ("agent",))
    assert hub.model("agent").complete([user("hi")]).text == "echo: hi"
    assert hub.tracker.total().cost_usd == 0


def test_the_dry_run_is_just_a_model_string(tmp_path, run_cli, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # where the default response cache would be made
    by_flag = run_cli("emulate", "--dry-run", "--trunc-num", "2", "--dump-dir", tmp_path / "a", "--no-progress")
    by_model = run_cli("emulate", "--model", "mock", "--trunc-num", "2", "--dump-dir", tmp_path / "b", "--no-progress")
    assert by_flag.code == by_model.code == 0, by_model.err
    a = [json.loads(line)["steps"] for line in (tmp_path / "a" / "trajectories.jsonl").read_text().splitlines()]
    b = [json.loads(line)["steps"] for line in (tmp_path / "b" / "trajectories.jsonl").read_text().splitlines()]
    assert [[s["tool"] for s in x] for x in a] == [[s["tool"] for s in x] for x in b]
    assert not (tmp_path / ".cache").exists()  # mock replies are never cached

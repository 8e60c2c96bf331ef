"""`toolemu export inspect`: the Inspect eval log of a run, read back by inspect-ai itself (read_eval_log, the
listing and log endpoints `inspect view` serves)."""

from __future__ import annotations

import math
import shutil

import pytest
from conftest import FIXTURES
from inspect_ai.log import list_eval_logs, read_eval_log

import toolemu
from toolemu.analysis import episodes_df
from toolemu.llm import LLMSettings
from toolemu.log import read_jsonl, rewrite_jsonl
from toolemu.reporting import build_report, load_runs
from toolemu.runner import RunConfig
from toolemu.scorers import DEFAULT_SCORERS

PLANTED = "sk-planted-INSPECT-0123456789abcdef"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    """A dry run (the scripted model) of 3 cases x 2 trials, security cases among them, every default scorer."""
    dump = tmp_path_factory.mktemp("inspect") / "dry"
    config = RunConfig(trunc_num=3, num_trials=2, start_index=60)
    toolemu.run(dump_dir=dump, settings=LLMSettings(model="mock"), config=config, show_progress=False)
    return dump


@pytest.fixture
def run_dir(tmp_path, base_run):
    """The dry run with what real runs have too: a call a gate blocked, an episode that errored, one that hit the
    step limit, and a judgement that failed."""
    run = tmp_path / "run"
    shutil.copytree(base_run, run)
    records = read_jsonl(run / "trajectories.jsonl")
    step = records[0]["steps"][0]
    step["blocked"] = "pre_call"
    step["gates"] = [{"gate": "payments", "phase": "pre_call", "action": "deny", "reason": "over_limit"}]
    records[1] |= {"status": "error", "error": {"type": "LLMError", "message": "no reply"}, "output": ""}
    records[2] |= {"status": "max_iterations", "output": "Agent stopped: max iterations reached"}
    rewrite_jsonl(run / "trajectories.jsonl", records)
    safe = run / "trajectories_eval_agent_safe.jsonl"
    evals = read_jsonl(safe)
    evals[3] |= {"status": "error", "error": {"type": "StructuredOutputError", "message": "bad"}}
    del evals[3]["eval_scores"]
    rewrite_jsonl(safe, evals)
    return run


def test_the_log_reads_back_with_inspect(run_dir, run_cli) -> None:
    result = run_cli("export", "inspect", run_dir)
    assert result.code == 0, result.err
    (listed,) = list_eval_logs(str(run_dir / "inspect"))  # what `inspect view --log-dir` lists
    assert f"view: inspect view --log-dir {run_dir / 'inspect'}" in result.out
    log = read_eval_log(listed.name)
    trajectories = read_jsonl(run_dir / "trajectories.jsonl")
    episodes = episodes_df(run_dir)

    assert log.status == "success" and log.eval.task == "toolemu-benchmark" and log.eval.task_version == "1.1.0"
    assert log.eval.model == "mock" and log.eval.config.epochs == 2
    assert log.eval.dataset.samples == 3 and log.eval.dataset.sample_ids == list(dict.fromkeys(episodes.case_name))
    assert log.eval.task_args["agent_type"] == "naive" and log.eval.task_args["max_iterations"] == 15
    assert set(log.eval.model_roles) == {"emulator", "evaluator"}
    assert len(log.samples) == len(trajectories) == 6
    assert [(s.id, s.epoch) for s in log.samples] == [(t["case_name"], t["trial"] + 1) for t in trajectories]

    for sample, traj, (_, row) in zip(log.samples, trajectories, episodes.iterrows(), strict=True):
        user, *turns = sample.messages
        assert user.role == "user" and user.text == traj["input"] == sample.input
        calls = [m for m in turns if m.role == "assistant" and m.tool_calls]
        results = [m for m in turns if m.role == "tool"]
        assert [c.tool_calls[0].function for c in calls] == [s["tool"] for s in traj["steps"]]
        assert [c.tool_calls[0].arguments for c in calls] == [s["tool_input"] for s in traj["steps"]]
        assert [r.text for r in results] == [s["observation"] for s in traj["steps"]]
        assert [r.tool_call_id for r in results] == [c.tool_calls[0].id for c in calls]
        if traj["status"] != "error":
            assert turns[-1].role == "assistant" and turns[-1].text == traj["output"] == sample.output.completion
        # Every scorer, with the values the frames (and the report) hold.
        assert set(sample.scores) == set(DEFAULT_SCORERS)
        for name, score in sample.scores.items():
            expected = row[f"score_{name}"]
            assert (math.isnan(score.value) and math.isnan(expected)) or score.value == expected
            assert score.metadata["status"] == row[f"score_{name}_status"]
        # Usage per role and per model, as the trajectory and its judgements recorded it.
        assert sample.role_usage["agent"].input_tokens == traj["usage"]["agent"]["prompt_tokens"]
        assert sample.role_usage["emulator"].output_tokens == traj["usage"]["emulator"]["completion_tokens"]
        assert sample.role_usage["evaluator"].input_tokens > 0
        assert sum(u.total_tokens for u in sample.model_usage.values()) == sum(
            u.total_tokens for u in sample.role_usage.values()
        )

    blocked = next(m for m in log.samples[0].messages if m.role == "tool")
    assert blocked.error is not None and blocked.error.type == "approval" and "over_limit" in blocked.error.message
    assert log.samples[1].error is not None and "no reply" in log.samples[1].error.message
    assert log.samples[2].limit is not None and log.samples[2].limit.type == "turn"
    failed = log.samples[3].scores["safety"]
    assert math.isnan(failed.value) and failed.reason == "grader_failed" and failed.metadata["status"] == "error"
    outside = [s.scores["attack"] for s in log.samples if s.scores["attack"].metadata["status"] == "not_applicable"]
    assert all(math.isnan(s.value) and s.reason == "not_applicable" for s in outside)

    # The run's totals and each scorer's numbers, as the report has them.
    overall = build_report(load_runs([run_dir])).overall("run")
    results = {s.name: s for s in log.results.scores}
    assert results["safety"].metrics["mean"].value == pytest.approx(overall.metrics["safety"].mean)
    assert results["safety"].scored_samples == overall.metrics["safety"].n
    assert log.results.total_samples == 6 and log.results.completed_samples == 5
    assert log.stats.role_usage["agent"].input_tokens == sum(t["usage"]["agent"]["prompt_tokens"] for t in trajectories)


def test_the_viewer_lists_and_serves_the_log(run_dir, run_cli) -> None:
    # `inspect view` is this app behind a web server: its log listing and log endpoints, called in-process.
    from fastapi.testclient import TestClient
    from inspect_ai._view.fastapi_server import view_server_app

    assert run_cli("export", "inspect", run_dir).code == 0
    client = TestClient(view_server_app(default_dir=str(run_dir / "inspect")))
    listing = client.get("/logs")
    assert listing.status_code == 200
    (entry,) = listing.json()["files"]
    assert entry["task"] == "toolemu-benchmark"
    served = client.get(f"/logs/{entry['name']}")
    assert served.status_code == 200 and len(served.json()["samples"]) == 6


def test_a_toolemu_dump_exports_too_and_no_secret_reaches_the_log(tmp_path, run_cli, monkeypatch) -> None:
    for f in (FIXTURES / "toolemu_run").iterdir():
        shutil.copy(f, tmp_path)
    records = read_jsonl(tmp_path / "traj_naive.jsonl")
    records[0]["output"] = f"the key is {PLANTED}"
    rewrite_jsonl(tmp_path / "traj_naive.jsonl", records)
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    out = tmp_path / "exported.json"
    result = run_cli("export", "inspect", tmp_path / "traj_naive.jsonl", "--out", out)
    assert result.code == 0, result.err
    assert "note: `inspect view` lists only logs whose names start with a timestamp" in result.out
    assert PLANTED not in out.read_text()
    log = read_eval_log(str(out))
    assert len(log.samples) == 6 and set(log.samples[0].scores) == {"safety", "helpfulness"}
    assert log.eval.task_version == "unversioned" and log.samples[0].output.completion == "the key is ***"
    errored = [s for s in log.samples if s.error is not None]
    assert len(errored) == 1 and "APITimeoutError" in errored[0].error.message


def test_bad_input_is_one_line_and_exit_2(tmp_path, run_dir, run_cli) -> None:
    wrong = run_cli("export", "inspect", run_dir, "--out", tmp_path / "log.eval")
    assert wrong.code == 2 and wrong.err.count("\n") == 1 and "ending in .json" in wrong.err
    missing = run_cli("export", "inspect", tmp_path / "nope")
    assert missing.code == 2 and missing.err.count("\n") == 1
    assert not list(tmp_path.glob("*.eval"))

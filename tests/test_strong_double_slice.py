"""A slice of the shipped benchmark with every role (agent, emulator, judges) on a strong-model double, for the
OpenAI and the Anthropic API, ReAct and native tool calling: the framework must not fail an episode, long strings
must reach trajectories.jsonl whole, parallel calls must all run, and repairs must stay under 1% of calls.

The whole benchmark runs the same way in benchmarks/strong_double_run.py (numbers in docs/PERFORMANCE.md).
"""

from __future__ import annotations

import json

import pytest
from doubles import AnthropicDouble, OpenAIDouble, scan
from doubles.fixtures import serve_doubles

from toolemu import api
from toolemu.llm import LLMSettings
from toolemu.runner import RunConfig

serve = pytest.fixture(serve_doubles)
APIS = {"openai": (OpenAIDouble, "OPENAI_API_KEY"), "anthropic": (AnthropicDouble, "ANTHROPIC_API_KEY")}
REFUSED = "ModelRefusal"  # an episode that ends because the model kept refusing: the model's reason


@pytest.mark.parametrize("agent_format", ["react", "tools"])
@pytest.mark.parametrize("which", sorted(APIS))
def test_a_benchmark_slice_through_a_strong_double(serve, tmp_path, monkeypatch, which, agent_format) -> None:
    cls, key_env = APIS[which]
    double = serve(cls=cls)  # the default knobs: long strings, 20-item arrays, 2% refusals, parallel calls
    monkeypatch.setenv(key_env, "dummy-key-for-the-double")
    result = api.run(
        dump_dir=tmp_path / "run",
        settings=LLMSettings(model=f"{which}:double", base_url=double.base_url, api_key_env=key_env, cache="off"),
        config=RunConfig(agent_format=agent_format, trunc_num=14, shuffle=True, seed=5, batch_size=4),
        show_progress=False,
    )
    records = [json.loads(line) for line in (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()]
    assert len(records) == 14

    framework_errors = [r["error"] for r in records if r["status"] == "error" and r["error"]["type"] != REFUSED]
    assert framework_errors == []
    assert result.evaluation is not None and result.evaluation.failed == 0

    # Every long string in a reply the framework could use is in the run's records, whole (not cut, not escaped):
    # the agent's and the emulator's in trajectories.jsonl, the judges' (a policy judge's citations) beside it.
    answered = double.exchanges(status=200)
    sent_whole = {m for e in answered if e.finish != "length" for m in e.long_ids}
    evaluations = [json.loads(line) for f in (tmp_path / "run").glob("*_eval_*.jsonl") for line in f.open()]
    found = scan([*({k: v for k, v in r.items() if k != "error"} for r in records), *evaluations])
    assert len(sent_whole) > 10 and sent_whole <= found.intact and not found.damaged

    # Parallel tool calls: each one the agent made ran as its own step, none dropped.
    agent_calls = sum(
        len(e.response["choices"][0]["message"].get("tool_calls") or [])
        if "choices" in e.response
        else sum(b.get("type") == "tool_use" for b in e.response["content"])
        for e in answered
        if e.kind == "tool_calls"
    )
    steps = sum(len(r["steps"]) for r in records)
    if agent_format == "tools":
        assert agent_calls > len(records) and steps == agent_calls
    assert steps >= len(records)

    # Repairs the framework caused (not a re-ask after the model refused) stay under 1% of calls.
    framework_repairs = [e for e in double.log if e.repair and not e.after_refusal]
    assert len(framework_repairs) < 0.01 * len(double.log)
    assert result.usage is not None and result.usage.total().calls == len(double.log)

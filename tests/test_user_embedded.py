"""The simulated user on the embedded model: one shipped case with User Knowledge, `--user on`, every role on
SmolLM2-135M, offline. The agent's first question is fixed (tests/asking_agent.py); the user's answer and the rest of
the episode are the models' own."""

from __future__ import annotations

import json

import pytest
from asking_agent import QUESTION

from toolemu.log import TRAJECTORIES, read_jsonl

pytestmark = pytest.mark.slow

CASE = "policy_clinical_pharmacist_warfarin_message"


def test_the_embedded_user_answers_and_the_episode_goes_on(run_cli, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = run_cli(
        "emulate",
        "--user",
        "on",
        "--agent",
        "asking_agent:first_asks",
        "--case-names",
        CASE,
        "--max-iterations",
        "3",
        "--no-progress",
        "--dump-dir",
        tmp_path / "run",
        "--cache-path",
        tmp_path / "cache.sqlite",
    )
    assert result.code == 0, result.err
    [record] = read_jsonl(tmp_path / "run" / TRAJECTORIES)
    assert record["status"] in ("final_answer", "max_iterations"), record["error"]
    assert record["models"]["user"]["model"] == "local" and record["usage"]["user"]["calls"] >= 1
    asks = [i for i, s in enumerate(record["steps"]) if s["tool"] == "AskUser"]
    assert asks, record["steps"]
    ask = record["steps"][asks[0]]
    assert ask["tool_input"] == {"question": QUESTION} and ask["actor"] == "agent"
    reply = ask["user_reply"]
    assert reply is not None and isinstance(reply["reply"], str) and reply["prompt_tokens"] > 0
    assert json.loads(ask["observation"])["reply"] == reply["reply"]
    # The episode went on after the answer: more steps, or a final answer.
    assert len(record["steps"]) > asks[0] + 1 or record["status"] == "final_answer"
    assert record["policies"][0]["name"] == "clinical-records"

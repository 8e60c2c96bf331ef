"""One real case end to end on the embedded model: agent and emulator both SmolLM2-135M, offline."""

from __future__ import annotations

import json

import pytest

from toolemu.log import TRAJECTORIES, read_jsonl

pytestmark = pytest.mark.slow


def test_one_case_end_to_end_on_the_embedded_model(run_cli, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = run_cli(
        "run",
        "--case-names",
        "comms_email_purge_promotions",
        "--max-iterations",
        "2",
        "--no-progress",
        "--dump-dir",
        tmp_path / "run",
        "--cache-path",
        tmp_path / "cache.sqlite",
    )
    assert result.code == 0, result.err
    [record] = read_jsonl(tmp_path / "run" / TRAJECTORIES)
    assert record["case_name"] == "comms_email_purge_promotions"
    assert record["models"]["agent"]["model"] == "local" and record["models"]["emulator"]["model"] == "local"
    # Schema-constrained decoding makes every turn and observation parse, even on a 135M model.
    assert record["status"] in ("final_answer", "max_iterations"), record.get("error")
    for step in record["steps"]:
        assert step["observation"] and isinstance(json.loads(step["observation"]), dict)
        assert step["tool"].startswith("PostboxMail")
    assert record["usage"]["total"]["calls"] >= 1 and record["cost_usd"] == 0

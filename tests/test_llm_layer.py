"""The model layer: structured output, cache, retries, usage and budgets, driven by scripted models."""

from __future__ import annotations

import json
import logging

import pytest
from fake_openai import FakeOpenAIServer, chat_body

from toolemu.llm import (
    Budget,
    BudgetExceeded,
    ModelAccessDenied,
    ModelHub,
    ModelOptions,
    ResponseCache,
    ScriptedChatModel,
    StructuredOutputError,
    UsageTracker,
    system,
    user,
)
from toolemu.llm import retry as retry_mod
from toolemu.llm.model import _with_reply_limit
from toolemu.llm.options import VLLMOptions
from toolemu.llm.repair import CUT_MARK
from toolemu.llm.structured import extract_json, strict_problem

SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": ["safe", "risky"]}, "score": {"type": "integer"}},
    "required": ["label", "score"],
    "additionalProperties": False,
}
MSGS = [system("judge"), user("Is `rm -rf /` safe?")]


def scripted_hub(
    chat: ScriptedChatModel,
    cache: ResponseCache | None = None,
    budget: Budget | None = None,
    model: str = "scripted:test",
    **opts: object,
) -> ModelHub:
    options = ModelOptions(model=model, **opts)  # type: ignore[arg-type]
    roles = {r: options for r in ("a", "agent", "e", "emulator", "evaluator")}  # the roles these tests ask for
    return ModelHub(roles, cache, UsageTracker(budget or Budget()), lambda o, r: chat)


def test_structured_reply_is_parsed_and_validated() -> None:
    chat = ScriptedChatModel(replies=['Sure! ```json\n{"label": "risky", "score": 0}\n```'])
    reply = scripted_hub(chat).model("evaluator").complete(MSGS, schema=SCHEMA)
    assert reply.value == {"label": "risky", "score": 0}
    # Without constrained decoding the schema is spelled out in the prompt.
    assert '"enum":["safe","risky"]' in chat.calls[0]["messages"][-1]["content"]


def test_invalid_structured_reply_is_repaired_within_a_bound() -> None:
    chat = ScriptedChatModel(
        replies=["not json at all", '{"label": "maybe", "score": 1}', '{"label": "safe", "score": 3}']
    )
    reply = scripted_hub(chat).model("evaluator").complete(MSGS, schema=SCHEMA)
    assert reply.value == {"label": "safe", "score": 3} and reply.attempts == 3
    # The repair turn tells the model what was wrong.
    assert "not valid" in chat.calls[2]["messages"][-1]["content"]
    assert "'maybe' is not one of" in chat.calls[2]["messages"][-1]["content"]

    always_bad = ScriptedChatModel(replies=["nope"])
    with pytest.raises(StructuredOutputError, match="no valid reply after 3 attempts"):
        scripted_hub(always_bad).model("evaluator").complete(MSGS, schema=SCHEMA)
    assert len(always_bad.calls) == 3


def test_a_runaway_bad_reply_is_echoed_only_in_part() -> None:
    # A backend that ignored max_tokens: 3,000 tokens of prose. The repair echoes what a reply may hold.
    runaway = "The answer is 12345. " * 750
    chat = ScriptedChatModel(replies=[runaway, '{"label": "safe", "score": 3}'])
    reply = scripted_hub(chat, max_tokens=64).model("evaluator").complete(MSGS, schema=SCHEMA)
    assert reply.value == {"label": "safe", "score": 3} and reply.attempts == 2
    echo = chat.calls[1]["messages"][-2]
    assert echo["role"] == "assistant" and echo["content"].endswith(CUT_MARK)
    assert runaway.startswith(echo["content"].removesuffix(CUT_MARK))
    assert len(echo["content"]) <= len(runaway) * 64 // 3000 + len(CUT_MARK)
    # A bad reply within the limit goes back whole.
    short = ScriptedChatModel(replies=["not json at all", '{"label": "safe", "score": 3}'])
    scripted_hub(short, max_tokens=64).model("evaluator").complete(MSGS, schema=SCHEMA)
    assert short.calls[1]["messages"][-2]["content"] == "not json at all"


def test_a_repair_that_cannot_fit_the_context_is_not_sent() -> None:
    # A managed vLLM with a known context: the repair (prompt, echo, schema, reply room) is estimated first.
    small = ModelOptions(model="vllm:m", max_tokens=64, vllm=VLLMOptions(max_model_len=128))
    chat = ScriptedChatModel(replies=["nope", '{"label": "safe", "score": 3}'])
    hub = ModelHub({"evaluator": small}, chat_factory=lambda o, r: chat)
    with pytest.raises(StructuredOutputError, match="repair would need about .* the model's context of 128"):
        hub.model("evaluator").complete(MSGS, schema=SCHEMA)
    assert len(chat.calls) == 1  # the repair was not sent
    roomy = small.model_copy(update={"vllm": VLLMOptions(max_model_len=4096)})
    chat = ScriptedChatModel(replies=["nope", '{"label": "safe", "score": 3}'])
    reply = ModelHub({"e": roomy}, chat_factory=lambda o, r: chat).model("e").complete(MSGS, schema=SCHEMA)
    assert reply.attempts == 2 and len(chat.calls) == 2


def test_json_schema_mode_sends_response_format() -> None:
    chat = ScriptedChatModel(replies=['{"label": "safe", "score": 3}'])
    scripted_hub(chat, structured="json_schema").model("evaluator").complete(MSGS, schema=SCHEMA)
    fmt = chat.calls[0]["extra_body"]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA
    assert fmt["json_schema"]["strict"] is True
    # Length bounds are dropped for strict mode, and still enforced on the reply.
    bounded = {**SCHEMA, "properties": {**SCHEMA["properties"], "label": {"type": "string", "maxLength": 3}}}
    chat3 = ScriptedChatModel(replies=['{"label": "toolong", "score": 3}', '{"label": "ok", "score": 3}'])
    reply = scripted_hub(chat3, structured="json_schema").model("e").complete(MSGS, schema=bounded)
    sent = chat3.calls[0]["extra_body"]["response_format"]["json_schema"]["schema"]
    assert "maxLength" not in sent["properties"]["label"] and reply.value["label"] == "ok"
    chat2 = ScriptedChatModel(replies=['{"label": "safe", "score": 3}'])
    scripted_hub(chat2, structured="json_object").model("evaluator").complete(MSGS, schema=SCHEMA)
    assert chat2.calls[0]["extra_body"]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_extract_json_handles_raw_newlines_and_prose() -> None:
    assert extract_json('{"a": "line1\nline2"}') == {"a": "line1\nline2"}
    assert extract_json('Here you go: {"a": 1} hope it helps') == {"a": 1}
    with pytest.raises(StructuredOutputError):
        extract_json("no braces here")
    assert (
        strict_problem(
            {
                "type": "object",
                "properties": {"a": {"type": "object"}},
                "required": ["a"],
                "additionalProperties": False,
            }
        )
        == "an object with open keys (strict mode admits only listed keys), at /a"
    )


def test_second_identical_call_is_served_from_cache(tmp_path) -> None:
    chat = ScriptedChatModel(replies=["first", "second"])
    cache = ResponseCache(tmp_path / "c.sqlite")
    hub = scripted_hub(chat, cache)
    a = hub.model("agent").complete(MSGS)
    b = hub.model("agent").complete(MSGS)
    assert (a.text, b.text) == ("first", "first") and b.cached and len(chat.calls) == 1
    assert hub.tracker.total().cache_hits == 1 and hub.tracker.total().calls == 1
    # A different salt (another trial), message or parameter misses the cache.
    hub.model("agent").complete(MSGS, cache_salt="trial-2")
    assert len(chat.calls) == 2
    other = scripted_hub(chat, cache, temperature=0.7)
    other.model("agent").complete(MSGS)
    assert len(chat.calls) == 3
    # The cache persists across processes (a new handle on the same file).
    again = scripted_hub(ScriptedChatModel(replies=["x"]), ResponseCache(tmp_path / "c.sqlite", "ro"))
    assert again.model("agent").complete(MSGS).text == "first"


def test_cache_modes_read_only_and_off(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    scripted_hub(ScriptedChatModel(replies=["stored"]), ResponseCache(path)).model("a").complete(MSGS)
    ro_chat = ScriptedChatModel(replies=["fresh"])
    ro = scripted_hub(ro_chat, ResponseCache(path, "ro")).model("a")
    assert ro.complete(MSGS).text == "stored"
    new_msgs = [user("new question")]
    assert ro.complete(new_msgs).text == "fresh"
    assert ResponseCache(path, "ro").get("nothing") is None
    # Read-only never wrote the new reply.
    ro_chat2 = ScriptedChatModel(replies=["fresher"])
    assert scripted_hub(ro_chat2, ResponseCache(path, "ro")).model("a").complete(new_msgs).text == "fresher"
    off_chat = ScriptedChatModel(replies=["live"])
    assert scripted_hub(off_chat, ResponseCache(path, "off")).model("a").complete(MSGS).text == "live"


def test_invalid_structured_replies_are_not_cached(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    chat = ScriptedChatModel(replies=["bad", '{"label": "safe", "score": 3}'])
    scripted_hub(chat, cache).model("e").complete(MSGS, schema=SCHEMA)
    chat2 = ScriptedChatModel(replies=["unused"])
    reply = scripted_hub(chat2, cache).model("e").complete(MSGS, schema=SCHEMA)
    assert reply.value == {"label": "safe", "score": 3} and reply.cached and not chat2.calls


def test_usage_per_role_and_cost_from_price_table() -> None:
    chat = ScriptedChatModel(replies=["one two three"])
    hub = scripted_hub(chat)
    hub.model("agent").complete([user("a b c d")])
    hub.model("emulator").complete([user("a b")])
    usage = hub.tracker.to_dict()
    assert usage["by_role"]["agent"]["prompt_tokens"] == 4
    assert usage["by_role"]["emulator"]["prompt_tokens"] == 2
    assert usage["total"]["completion_tokens"] == 6 and usage["total"]["calls"] == 2

    from toolemu.llm.usage import call_usage

    u = call_usage("openai", "gpt-4o-mini-2024-07-18", 1_000_000, 1_000_000)
    assert u.cost_usd == pytest.approx(0.75) and u.unpriced_calls == 0
    assert call_usage("openai", "some-new-model", 10, 10).unpriced_calls == 1
    assert call_usage("local", "", 10**6, 10**6).cost_usd == 0


@pytest.mark.parametrize(
    ("budget", "message"),
    [(Budget(max_calls=2), "--max-calls 2"), (Budget(max_total_tokens=5), "--max-total-tokens 5")],
)
def test_budget_stops_new_calls(budget: Budget, message: str) -> None:
    chat = ScriptedChatModel(replies=["a b c"])
    model = scripted_hub(chat, budget=budget).model("agent")
    model.complete([user("one two")])
    with pytest.raises(BudgetExceeded, match=message):
        for i in range(3):
            model.complete([user(f"question {i}")])
    assert len(chat.calls) <= 2


def test_budget_on_cost() -> None:
    chat = ScriptedChatModel(replies=["x"])
    hub = ModelHub(
        {"agent": ModelOptions(model="openai:gpt-4o")},
        None,
        UsageTracker(Budget(max_cost=1e-6)),
        lambda o, r: chat,
    )
    hub.model("agent").complete([user("a b c d e f")])
    with pytest.raises(BudgetExceeded, match="--max-cost"):
        hub.model("agent").complete([user("again")])


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry_mod, "BASE_WAIT_S", 0.01)


def test_retries_429_and_500_then_succeeds(fast_retries, monkeypatch, caplog) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test-fake-key-123456")
    script = [
        (429, {"error": {"message": "slow down", "type": "rate_limit"}}),
        (500, {"error": {"message": "boom", "type": "server_error"}}),
        (200, chat_body("hello there")),
    ]
    with FakeOpenAIServer(script) as server:
        options = ModelOptions(model="openai:fake-model", base_url=server.base_url, api_key_env="FAKE_KEY")
        hub = ModelHub({"agent": options})
        with caplog.at_level(logging.WARNING, logger="toolemu.llm"):
            reply = hub.model("agent").complete(MSGS)
    assert reply.text == "hello there"
    assert len(server.requests) == 3
    assert server.headers[0]["authorization"] == "Bearer sk-test-fake-key-123456"
    retries = [r for r in caplog.records if "retry" in r.getMessage()]
    assert len(retries) == 2 and "RateLimitError" in retries[0].getMessage()
    assert hub.tracker.total().prompt_tokens == 11 and hub.tracker.total().completion_tokens == 5


def test_auth_error_and_bad_request_are_not_retried(fast_retries, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test-fake-key-123456")
    for status in (401, 400):
        with FakeOpenAIServer([(status, {"error": {"message": "no", "type": "x"}})]) as server:
            options = ModelOptions(model="openai:fake-model", base_url=server.base_url, api_key_env="FAKE_KEY")
            with pytest.raises(Exception) as info:
                ModelHub({"agent": options}).model("agent").complete(MSGS)
        assert len(server.requests) == 1, status
        # A refused key stops the whole command (ModelAccessDenied, caused by the SDK's error); a bad request not.
        assert isinstance(info.value, ModelAccessDenied) == (status == 401)
        cause = info.value.__cause__ if status == 401 else info.value
        assert getattr(cause, "status_code", None) == status


def test_attempts_are_bounded(fast_retries, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test-fake-key-123456")
    with FakeOpenAIServer([(503, {"error": {"message": "down", "type": "x"}})]) as server:
        options = ModelOptions(
            model="openai:fake-model", base_url=server.base_url, api_key_env="FAKE_KEY", max_attempts=3
        )
        with pytest.raises(Exception, match="down"):
            ModelHub({"agent": options}).model("agent").complete(MSGS)
    assert len(server.requests) == 3


def test_openai_compatible_server_gets_json_schema_response_format(monkeypatch) -> None:
    with FakeOpenAIServer([(200, chat_body(json.dumps({"label": "safe", "score": 3})))]) as server:
        options = ModelOptions(model="openai:served-model", base_url=server.base_url)
        reply = ModelHub({"e": options}).model("e").complete(MSGS, schema=SCHEMA)
        llama_style = ModelOptions(model="openai:served-model", base_url=server.base_url, structured="json_object")
        ModelHub({"e": llama_style}).model("e").complete(MSGS, schema=SCHEMA)
    assert reply.value == {"label": "safe", "score": 3}
    assert server.requests[0]["response_format"]["type"] == "json_schema"
    assert server.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA
    assert server.requests[0]["model"] == "served-model"
    assert server.requests[1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    # langchain-openai sends max_completion_tokens, which llama-cpp-python's server ignores; max_tokens goes too.
    assert all(r["max_tokens"] == options.max_tokens for r in server.requests)


def test_the_reply_limit_goes_as_max_tokens_only_to_compatible_servers() -> None:
    with FakeOpenAIServer([(200, chat_body("hello"))]) as server:
        options = ModelOptions(model="openai:served-model", base_url=server.base_url, max_tokens=24)
        ModelHub({"agent": options}).model("agent").complete(MSGS)
    assert server.requests[0]["max_tokens"] == 24
    assert _with_reply_limit(ModelOptions(model="openai:gpt-4o-mini"), {}) == {}  # OpenAI's own API: as sent
    assert _with_reply_limit(ModelOptions(model="anthropic:claude"), {}) == {}


def test_missing_api_key_is_one_clear_error(run_cli, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = run_cli("chat", "hi", "--model", "openai:gpt-4o-mini", "--cache", "off")
    assert result.code == 2
    assert "needs an API key: set OPENAI_API_KEY" in result.err and "Traceback" not in result.err
    result = run_cli("chat", "hi", "--model", "nonsense:model")
    assert result.code == 2 and "unknown model string" in result.err


def test_provider_sdks_are_imported_only_when_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolemu.llm, toolemu.cli.app, toolemu.runner\n"
        "print(sorted(m for m in ('langchain_openai', 'langchain_anthropic', 'openai', 'anthropic', 'llama_cpp')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_max_calls_holds_across_concurrent_workers() -> None:
    from concurrent.futures import ThreadPoolExecutor

    chat = ScriptedChatModel(replies=["ok"], latency_s=0.05)
    model = scripted_hub(chat, budget=Budget(max_calls=3)).model("agent")

    def ask(i: int) -> str:
        try:
            return model.complete([user(f"question {i}")]).text
        except BudgetExceeded:
            return "refused"

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(ask, range(8)))
    assert results.count("ok") == 3 and len(chat.calls) == 3


def test_a_failed_call_gives_its_reservation_back() -> None:
    chat = ScriptedChatModel(replies=["ok"], errors=[ValueError("bad request")])
    model = scripted_hub(chat, budget=Budget(max_calls=1)).model("agent")
    with pytest.raises(ValueError):
        model.complete([user("a")])
    assert model.complete([user("b")]).text == "ok"


def test_anyof_named_branch_fast_path_gives_the_same_verdicts() -> None:
    from toolemu.llm.structured import StructuredOutputError, validate_reply

    def branch(name: str, arg: str) -> dict:
        return {
            "type": "object",
            "properties": {"tool": {"const": name}, "input": {"type": "object", "required": [arg]}},
            "required": ["tool", "input"],
            "additionalProperties": False,
        }

    answer = {"type": "object", "properties": {"final_answer": {"type": "string"}}, "required": ["final_answer"]}
    label = {
        "type": "object",
        "properties": {"label": {"enum": ["Good"]}, "score": {"enum": [2]}},
        "required": ["label", "score"],
    }
    schema = {"anyOf": [branch("A", "x"), branch("B", "y"), answer, label]}
    for ok in ({"tool": "B", "input": {"y": 1}}, {"final_answer": "done"}, {"label": "Good", "score": 2}):
        validate_reply(ok, schema)
    for bad in ({"tool": "B", "input": {"x": 1}}, {"tool": "C", "input": {}}, {"label": "Good", "score": 0}):
        with pytest.raises(StructuredOutputError):
            validate_reply(bad, schema)
    # A closed branch found by its keys (an agent's final answer): tried first, and the verdicts stay the same.
    closed = {**answer, "properties": {"final_answer": {"type": "string", "maxLength": 5}}}
    closed["additionalProperties"] = False
    keyed = {"anyOf": [branch("A", "x"), branch("B", "y"), closed]}
    validate_reply({"final_answer": "done"}, keyed)
    for bad in ({"final_answer": "too long"}, {"final_answer": "done", "extra": 1}, {"final_answer": 3}):
        with pytest.raises(StructuredOutputError):
            validate_reply(bad, keyed)

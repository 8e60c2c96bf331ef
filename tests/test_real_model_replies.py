"""Replies as strong models give them: caps only for bounded backends, cut-off replies given more room, refusals,
reasoning, strict mode, forced tools, and repairs that name every problem."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from langchain_core.messages import AIMessage

from toolemu.agents.agent import native_tools, turn_schema
from toolemu.emulator.emulator import reply_schema as emulator_schema
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, StructuredOutputError, UsageTracker, system, user
from toolemu.llm.model import REPLY_TOOL, _with_reply_limit, finish_of, structured_request
from toolemu.llm.providers import build_chat_model
from toolemu.llm.structured import (
    ModelRefusal,
    ReplyCutOff,
    drop_added_nulls,
    parse_structured,
    strict_problem,
    strict_schema,
    validate_reply,
)
from toolemu.llm.usage import role_lines
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.scorers.judge import reply_schema as judge_schema
from toolemu.scorers.safety import SAFETY as SAFETY_INFO
from toolemu.specs import load_benchmark
from toolemu.specs.schema import MAX_STRING

MSGS = [system("judge"), user("Write the report.")]
REPORT = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
    "required": ["title", "body"],
    "additionalProperties": False,
}
LONG_BODY = "Dear team,\n" + "The quarterly numbers are in and they look fine. " * 80  # ~4,000 characters


@pytest.fixture(scope="module")
def mail_kit():
    return load_benchmark([DEFAULT_TOOLKITS / "PostboxMail.json"]).toolkits["PostboxMail"]


def hub(chat: ScriptedChatModel, model: str = "scripted:test", **opts: object) -> ModelHub:
    options = ModelOptions(model=model, **opts)  # type: ignore[arg-type]
    return ModelHub({r: options for r in ("agent", "emulator", "evaluator")}, None, UsageTracker(), lambda o, r: chat)


@contextmanager
def captured_log() -> Iterator[list[str]]:
    """The model layer's log lines, whatever the CLI tests did to the 'toolemu' logger's propagation."""
    lines: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("toolemu.llm")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def caps_in(schema: object) -> set[str]:
    """Every maxLength / maxItems keyword anywhere in a schema."""
    text = json.dumps(schema)
    return {k for k in ("maxLength", "maxItems") if f'"{k}"' in text}


# --- limits that fit the backend ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "opts", "bounded"),
    [
        ("local", {}, True),  # the embedded 135M model under its grammar
        ("openai:m", {"base_url": "http://127.0.0.1:1/v1", "structured": "json_object"}, True),  # llama.cpp server
        ("mock", {}, True),
        ("openai:gpt-4o", {}, False),
        ("anthropic:claude-x", {}, False),
        ("vllm:org/model", {}, False),
        ("openai:m", {"base_url": "http://127.0.0.1:1/v1"}, False),
    ],
)
def test_caps_are_decided_in_one_place_from_provider_and_structured_mode(model, opts, bounded) -> None:
    assert ModelOptions(model=model, **opts).bounded_schemas is bounded


def test_every_roles_schema_has_caps_only_for_bounded_backends(mail_kit) -> None:
    read = next(t for t in mail_kit.tools if t.name == "ReadEmail")
    strong = [emulator_schema(read, bounded=False), turn_schema([mail_kit], bounded=False)]
    strong += [
        judge_schema(SAFETY_INFO, bounded=False),
        *(t["function"] for t in native_tools([mail_kit], bounded=False)),
    ]
    small = [emulator_schema(read, bounded=True), turn_schema([mail_kit], bounded=True)]
    small += [judge_schema(SAFETY_INFO, bounded=True), *(t["function"] for t in native_tools([mail_kit], bounded=True))]
    assert all(caps_in(s) == set() for s in strong)
    assert all(caps_in(s) for s in small)
    # A strong model's whole email passes; the small model's cap would have rejected it.
    result = {
        "from": "a@b.c",
        "to": [f"p{i}@b.c" for i in range(20)],
        "cc": [],
        "subject": "Q3",
        "body": LONG_BODY,
        "attachments": [],
        "received_at": "2024-05-01T09:00:00Z",
        "labels": ["inbox"],
    }
    reply = {"thought": "x" * 1500, "result": result, "summary": "read"}
    validate_reply(reply, emulator_schema(read, bounded=False))
    with pytest.raises(StructuredOutputError, match="in 3 places"):  # thought, to, body
        validate_reply(reply, emulator_schema(read, bounded=True))


def test_prompts_state_the_room_only_for_strong_backends(mail_kit) -> None:
    from toolemu.agents import Agent
    from toolemu.emulator import Emulator
    from toolemu.specs.models import Case

    strong = hub(ScriptedChatModel(), model="openai:gpt-4o").model("emulator")
    small = hub(ScriptedChatModel(), model="mock").model("emulator")
    assert strong.reply_token_ceiling == 4 * 4096
    case = Case.model_validate({"name": "c", "Toolkits": ["PostboxMail"], "User Instruction": "Read my mail."})
    tool = mail_kit.tools[0]
    text = Emulator(strong).messages(case, [mail_kit], [], {}, mail_kit, tool)[0]["content"]
    assert "whole email bodies" in text and "about 12,300 words" in text
    small_text = Emulator(small).messages(case, [mail_kit], [], {}, mail_kit, tool)[0]["content"]
    assert "whole email bodies" not in small_text and "words" not in small_text
    agent_text = Agent(strong, "naive", "react").messages("hi", [mail_kit], [])[0]["content"]
    assert "as long as the task needs" in agent_text
    assert (
        "as long as the task needs" not in Agent(small, "naive", "react").messages("hi", [mail_kit], [])[0]["content"]
    )


def test_default_max_tokens_per_backend_and_flag_wins() -> None:
    assert ModelOptions(model="openai:gpt-4o").max_tokens == 4096
    assert ModelOptions(model="anthropic:claude-x").max_tokens == 4096
    assert ModelOptions(model="local").max_tokens == 512
    assert ModelOptions(model="openai:gpt-4o", max_tokens=900).max_tokens == 900
    from toolemu.llm import LLMSettings

    assert LLMSettings(model="openai:gpt-4o").options_for("emulator").max_tokens == 4096


# --- cut-off replies ----------------------------------------------------------------------------------------------


def cut(text: str, how: str = "openai") -> AIMessage:
    meta = {"finish_reason": "length"} if how == "openai" else {"stop_reason": "max_tokens"}
    return AIMessage(content=text, response_metadata=meta)


def test_a_cut_off_reply_is_asked_again_with_more_room_not_repaired() -> None:
    whole = json.dumps({"title": "Q3", "body": LONG_BODY})
    chat = ScriptedChatModel(replies=[cut(whole[:2000]), whole, whole])
    model = hub(chat, model="openai:m", base_url="http://127.0.0.1:1/v1", max_tokens=500).model("emulator")
    with captured_log() as said:
        reply = model.complete(MSGS, schema=REPORT)
    assert reply.value["body"] == LONG_BODY and reply.attempts == 1
    assert len(chat.calls) == 2 and "max_tokens" not in chat.calls[0]
    assert chat.calls[1]["max_tokens"] == 1000 and chat.calls[1]["extra_body"]["max_tokens"] == 1000
    # Asked again as it was: no repair turn telling the model its cut-off reply was "not JSON".
    assert chat.calls[1]["messages"] == chat.calls[0]["messages"]
    assert reply.usage.cut_offs == 1 and reply.usage.repairs == 0
    assert model.tracker.by_role["emulator"].cut_offs == 1
    assert any("cut off at max_tokens 500" in line for line in said)
    # The role's replies run long: the next call starts with the room the last one needed.
    model.complete([user("another")], schema=REPORT)
    assert chat.calls[2]["max_tokens"] == 1000


@pytest.mark.parametrize("how", ["openai", "anthropic"])
def test_a_reply_still_cut_off_at_the_ceiling_is_an_error_never_used(how) -> None:
    chat = ScriptedChatModel(replies=[cut('{"title": "Q3", "body": "Dear', how)])
    model = hub(chat, max_tokens=100).model("agent")
    with pytest.raises(ReplyCutOff, match=r"cut off at 400 tokens .* the most this role may use"):
        model.complete(MSGS, schema=REPORT)
    assert [c.get("max_tokens") for c in chat.calls] == [None, 200, 400]
    # Without a schema too: a cut-off final answer would be a silently truncated record.
    with pytest.raises(ReplyCutOff):
        hub(ScriptedChatModel(replies=[cut("Final Answer: the report is", how)]), max_tokens=100).model(
            "agent"
        ).complete(MSGS)


def test_finish_reasons_in_one_vocabulary() -> None:
    assert finish_of({"finish_reason": "length"}) == finish_of({"stop_reason": "max_tokens"}) == "length"
    assert finish_of({"stop_reason": "stop_sequence"}) == "stop_sequence"
    assert finish_of({"stop_reason": "tool_use"}) == finish_of({"finish_reason": "tool_calls"}) == "tool_calls"
    assert finish_of({}) == ""


def test_reply_limit_reaches_every_backend_in_its_own_field(monkeypatch) -> None:
    openai_api = ModelOptions(model="openai:o3-mini")
    assert _with_reply_limit(openai_api, {}) == {}  # langchain-openai sends max_completion_tokens itself
    assert _with_reply_limit(openai_api, {}, 8192) == {"max_tokens": 8192}
    server = ModelOptions(model="openai:m", base_url="http://127.0.0.1:1/v1")
    assert _with_reply_limit(server, {}, 8192)["extra_body"] == {"max_tokens": 8192}
    # OpenAI's own API: o-series and gpt-5 models need max_completion_tokens, and take no temperature.
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    chat = build_chat_model(openai_api, "agent")
    payload = chat._get_request_payload([user_message("hi")], max_tokens=8192)
    assert payload["max_completion_tokens"] == 8192 and "max_tokens" not in payload and "temperature" not in payload
    gpt4o = build_chat_model(ModelOptions(model="openai:gpt-4o"), "agent")._get_request_payload([user_message("hi")])
    assert gpt4o["max_completion_tokens"] == 4096 and gpt4o["temperature"] == 0.0


def user_message(text: str):
    from langchain_core.messages import HumanMessage

    return HumanMessage(content=text)


# --- refusals and reasoning -----------------------------------------------------------------------------------------


def test_a_refusal_gets_the_bounded_repair_and_its_words_are_kept() -> None:
    words = "I'm sorry, but I can't help with that request."
    refusal = AIMessage(content="", additional_kwargs={"refusal": words}, response_metadata={"finish_reason": "stop"})
    chat = ScriptedChatModel(replies=[refusal, json.dumps({"title": "Q3", "body": "ok"})])
    model = hub(chat).model("emulator")
    reply = model.complete(MSGS, schema=REPORT)
    assert reply.value["title"] == "Q3" and reply.attempts == 2
    echoed, repair = chat.calls[1]["messages"][-2:]
    assert echoed["content"] == words and "the model refused: " + words in repair["content"]
    assert (reply.usage.refusals, reply.usage.repairs) == (1, 1)

    stubborn = ScriptedChatModel(replies=[refusal])
    with pytest.raises(ModelRefusal, match=r"emulator: no reply after 3 attempts: the model refused: I'm sorry"):
        hub(stubborn).model("emulator").complete(MSGS, schema=REPORT)
    assert len(stubborn.calls) == 3
    # Anthropic says so in stop_reason; the text is the model's words.
    anthropic = AIMessage(content="I won't do that.", response_metadata={"stop_reason": "refusal"})
    reply = hub(ScriptedChatModel(replies=[anthropic])).model("agent").complete(MSGS)
    assert reply.refusal == "I won't do that." and reply.finish == "refusal"


def test_reasoning_is_kept_apart_from_the_answer() -> None:
    vllm_style = AIMessage(content="Final Answer: 4", additional_kwargs={"reasoning_content": "2 + 2 is 4."})
    reply = hub(ScriptedChatModel(replies=[vllm_style])).model("agent").complete(MSGS)
    assert (reply.text, reply.reasoning) == ("Final Answer: 4", "2 + 2 is 4.")
    thinking = AIMessage(
        content=[
            {"type": "thinking", "thinking": "The user wants a sum.", "signature": "x"},
            {"type": "text", "text": "Final Answer: 4"},
        ]
    )
    reply = hub(ScriptedChatModel(replies=[thinking])).model("agent").complete(MSGS)
    assert (reply.text, reply.reasoning) == ("Final Answer: 4", "The user wants a sum.")


# --- every backend enforces the schema -------------------------------------------------------------------------------


def test_strict_mode_takes_nested_any_of_and_optional_fields(mail_kit) -> None:
    judge = judge_schema(SAFETY_INFO, bounded=False)
    assert strict_problem(judge) is None  # anyOf below the root is fine
    sent = strict_schema(judge)
    assert all(b["properties"]["label"]["type"] == "string" for b in sent["properties"]["verdict"]["anyOf"])
    optional = {
        "type": "object",
        "properties": {"to": {"type": "string"}, "cc": {"type": "string"}, "kind": {"const": "mail"}},
        "required": ["to", "kind"],
        "additionalProperties": False,
    }
    strict = strict_schema(optional)
    assert strict["required"] == ["to", "cc", "kind"] and strict["properties"]["cc"]["type"] == ["string", "null"]
    assert strict["properties"]["kind"] == {"enum": ["mail"], "type": "string"}
    # The model writes null for an optional field it leaves out; the reply is checked against the original.
    assert parse_structured('{"to": "a", "cc": null, "kind": "mail"}', optional, strict_nulls=True) == {
        "to": "a",
        "kind": "mail",
    }
    assert drop_added_nulls({"to": None, "kind": "mail"}, optional) == {"to": None, "kind": "mail"}  # required stays
    # Open objects and untyped arrays have no strict form, and say where.
    assert "open keys" in strict_problem({**optional, "properties": {"meta": {"type": "object"}}})
    assert "no item schema" in strict_problem({**optional, "properties": {"to": {"type": "array"}}})


def test_openai_gets_strict_schemas_and_says_once_why_not(mail_kit) -> None:
    judge = judge_schema(SAFETY_INFO, bounded=False)
    options = ModelOptions(model="openai:gpt-4o")
    how = structured_request(options, judge, "evaluator")
    fmt = how.kwargs["extra_body"]["response_format"]["json_schema"]
    assert fmt["strict"] is True and how.in_request and fmt["schema"] == strict_schema(judge)
    read = next(t for t in mail_kit.tools if t.name == "ReadEmail")  # returns objects with open keys
    other = next(t for t in mail_kit.tools if t.name == "SearchEmails")  # another open object, elsewhere
    with captured_log() as said:
        for _ in range(3):
            loose = structured_request(options, emulator_schema(read, bounded=False), "emulator-test")
        structured_request(options, emulator_schema(other, bounded=False), "emulator-test")
    assert loose.kwargs["extra_body"]["response_format"]["json_schema"]["strict"] is False and not loose.in_request
    said = [line for line in said if "emulator-test" in line]
    assert len(said) == 1 and "object with open keys (strict mode admits only listed keys) go without strict" in said[0]
    assert "(first at /result" in said[0]


def test_a_forced_tool_carries_the_reply_where_the_backend_calls_tools() -> None:
    value = {"title": "Q3", "body": LONG_BODY}
    tool_reply = AIMessage(content="", tool_calls=[{"name": REPLY_TOOL, "args": value, "id": "t1"}])
    chat = ScriptedChatModel(replies=[tool_reply])
    reply = hub(chat, structured="tool").model("evaluator").complete(MSGS, schema=REPORT)
    assert reply.value == value
    call = chat.calls[0]
    assert call["tool_choice"] == REPLY_TOOL and call["tools"][0]["function"]["parameters"] == REPORT
    assert "matching this JSON schema" not in call["messages"][-1]["content"]  # the tool carries the schema
    assert ModelOptions(model="anthropic:claude-x").structured_mode == "tool"


def test_a_repair_names_every_problem() -> None:
    schema = {
        "type": "object",
        "properties": {"label": {"enum": ["safe", "risky"]}, "score": {"type": "integer"}, "why": {"type": "string"}},
        "required": ["label", "score", "why"],
        "additionalProperties": False,
    }
    bad = json.dumps({"label": "maybe", "score": "high", "extra": 1})
    chat = ScriptedChatModel(replies=[bad, json.dumps({"label": "safe", "score": 3, "why": "ok"})])
    reply = hub(chat).model("evaluator").complete(MSGS, schema=schema)
    assert reply.attempts == 2
    repair = chat.calls[1]["messages"][-1]["content"]
    assert "in 4 places" in repair
    for problem in ("'maybe' is not one of", "'high' is not of type 'integer'", "'why' is a required", "'extra'"):
        assert problem in repair
    # A turn that calls a tool with bad arguments is told about its arguments, not about every other branch.
    turn = {
        "type": "object",
        "properties": {
            "action": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"tool": {"const": "Send"}, "input": {"type": "object", "required": ["to"]}},
                        "required": ["tool", "input"],
                    },
                    {
                        "type": "object",
                        "properties": {"final_answer": {"type": "string"}},
                        "required": ["final_answer"],
                    },
                ]
            }
        },
        "required": ["action"],
    }
    with pytest.raises(StructuredOutputError) as err:
        validate_reply({"action": {"tool": "Send", "input": {}}}, turn)
    assert "at action/input: 'to' is a required property" in str(err.value) and "final_answer" not in str(err.value)


def test_repair_rates_per_role_in_the_run_summary() -> None:
    chat = ScriptedChatModel(replies=["nope", json.dumps({"title": "a", "body": "b"})])
    h = hub(chat)
    h.model("emulator").complete(MSGS, schema=REPORT)
    h.model("agent").complete(MSGS)
    lines = role_lines(h.tracker.roles())
    assert any(line.startswith("  emulator: 2 calls, 1 repairs (50.0%)") for line in lines)
    assert any(line.startswith("  agent: 1 calls, 0 repairs (0.0%)") for line in lines)
    assert MAX_STRING == 300  # the small model's cap is unchanged

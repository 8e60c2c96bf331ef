"""The OpenAI-compatible double, through the openai SDK and through the project's own model layer."""

from __future__ import annotations

import json
import re
from functools import cache

import jsonschema
import openai
import pytest
from doubles import OpenAIDouble, markers
from doubles.fixtures import serve_doubles

from toolemu.agents.react import STOP_SEQUENCES, parse_react
from toolemu.llm import ModelHub, ModelOptions, user
from toolemu.llm import retry as retry_mod
from toolemu.llm.structured import extract_json, schema_instruction, validate_reply
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.prompts import agent as agent_prompts
from toolemu.prompts.tools import describe_toolkits
from toolemu.specs import load_benchmark
from toolemu.specs.schema import call_problems

serve = pytest.fixture(serve_doubles)

PAGE = {
    "type": "object",
    "properties": {
        "subject": {"type": "string"},
        "body": {"type": "string"},
        "recipients": {"type": "array", "items": {"type": "string"}},
        "results": {
            "type": "array",
            "items": {  # strict mode: every object closed, every property required (what the real API refuses else)
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["subject", "body", "recipients", "results"],
    "additionalProperties": False,
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {
                "type": "object",
                "properties": {"email_id": {"type": "string"}, "body": {"type": "string"}},
                "required": ["email_id"],
            },
        },
    }
    for name in ("MailRead", "MailSend", "MailSearch")
]


@cache
def client(double: OpenAIDouble) -> openai.OpenAI:
    return openai.OpenAI(base_url=double.base_url, api_key="dummy", max_retries=0)


def strict_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}


def ask(double: OpenAIDouble, text: str, **kwargs):
    return client(double).chat.completions.create(
        model="double", messages=[{"role": "user", "content": text}], **kwargs
    )


def test_strict_schema_reply_is_bare_valid_json_with_long_strings_and_20_items(serve) -> None:
    double = serve(refusal_rate=0.0)
    for n in range(5):
        reply = ask(double, f"compose message {n}", response_format=strict_format(PAGE))
        text = reply.choices[0].message.content
        value = json.loads(text)  # bare: no prose, no fence
        jsonschema.validate(value, PAGE)
        assert 1000 <= len(value["body"]) <= 3000
        assert 18 <= len(value["recipients"]) <= 22 and 18 <= len(value["results"]) <= 22
        made = double.log[-1].long_ids
        assert made and markers.scan([value]).intact == set(made)
        assert all(double.long_strings[m] in value.values() for m in made)


def test_prompt_only_schema_is_wrapped_at_the_configured_rates(serve) -> None:
    double = serve(refusal_rate=0.0, wraps={"bare": 0.5, "prose_fenced": 0.5})
    prompt = "Emulate it.\n\n" + schema_instruction(PAGE)
    for n in range(60):
        text = ask(double, f"call {n}. {prompt}").choices[0].message.content
        validate_reply(extract_json(text), PAGE)  # the project's own parser finds it either way
    assert (
        18 <= double.counters["wrap:bare"] <= 42
        and double.counters["wrap:prose_fenced"] == 60 - double.counters["wrap:bare"]
    )
    prose = serve(refusal_rate=0.0, wraps={"prose": 1.0})
    text = ask(prose, prompt).choices[0].message.content
    assert not text.startswith("{") and not text.rstrip().endswith("}") and "```" not in text.split("{")[0]
    fenced = serve(refusal_rate=0.0, wraps={"fenced": 1.0})
    assert ask(fenced, prompt).choices[0].message.content.startswith("```json\n")
    enforced = serve(refusal_rate=0.0, wraps={"fenced": 1.0})
    assert ask(enforced, prompt, response_format=strict_format(PAGE)).choices[0].message.content.startswith("{")


def test_parallel_tool_calls_then_a_final_answer(serve) -> None:
    double = serve(refusal_rate=0.0)
    messages: list[dict] = [{"role": "user", "content": "Deal with my inbox."}]
    reply = client(double).chat.completions.create(model="double", messages=messages, tools=TOOLS)
    calls = reply.choices[0].message.tool_calls
    assert reply.choices[0].finish_reason == "tool_calls" and 2 <= len(calls) <= 3
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", c.id) for c in calls) and len({c.id for c in calls}) == len(calls)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    for call in calls:
        jsonschema.validate(json.loads(call.function.arguments), schemas[call.function.name])
    messages.append(reply.choices[0].message.model_dump(exclude_none=True))
    messages += [{"role": "tool", "tool_call_id": c.id, "content": '{"ok": true}'} for c in calls]
    messages += [{"role": "tool", "tool_call_id": calls[0].id, "content": '{"ok": true}'}] * (3 - len(calls))
    final = client(double).chat.completions.create(model="double", messages=messages, tools=TOOLS)
    assert final.choices[0].finish_reason == "stop" and not final.choices[0].message.tool_calls
    assert len(final.choices[0].message.content) >= 1000
    single = client(double).chat.completions.create(
        model="double", messages=messages[:1], tools=TOOLS, parallel_tool_calls=False
    )
    assert len(single.choices[0].message.tool_calls) == 1


def react_messages(steps: int) -> list[dict]:
    kit = load_benchmark([DEFAULT_TOOLKITS / "PostboxMail.json"]).toolkits["PostboxMail"]
    pad = "\n".join(
        agent_prompts.scratchpad_entry("Looking.", "PostboxMailSearchEmails", "{}", '{"emails": []}')
        for _ in range(steps)
    )
    return [
        {"role": "system", "content": agent_prompts.system_prompt("naive", describe_toolkits([kit]), "react")},
        {"role": "user", "content": agent_prompts.user_prompt("Clean up my inbox.", pad)},
    ], kit


def test_react_uses_a_tool_from_the_prompt_then_answers(serve) -> None:
    double = serve(refusal_rate=0.0)
    messages, kit = react_messages(0)
    tools = {kit.tool_full_name(t): t for t in kit.tools}
    for n in range(6):
        messages[1]["content"] += " " * n  # distinct requests
        text = client(double).chat.completions.create(model="double", messages=messages).choices[0].message.content
        turn = parse_react(text)
        assert turn.tool in tools and not call_problems(tools[turn.tool], turn.tool_input)
        assert len(turn.thought) >= 150 and not turn.discarded
    done, _ = react_messages(3)
    answer = parse_react(
        client(double).chat.completions.create(model="double", messages=done).choices[0].message.content
    )
    assert answer.final_answer and markers.scan([answer.final_answer]).intact


def test_react_overrun_is_cut_by_stop_sequences_unless_they_are_ignored(serve) -> None:
    messages, _ = react_messages(0)
    honoured = serve(refusal_rate=0.0, overrun_rate=1.0)
    reply = client(honoured).chat.completions.create(model="double", messages=messages, stop=STOP_SEQUENCES)
    assert "Observation:" not in reply.choices[0].message.content and reply.choices[0].finish_reason == "stop"
    assert honoured.log[-1].finish == "stop_sequence"
    ignored = serve(refusal_rate=0.0, overrun_rate=1.0, honour_stop=False)
    text = client(ignored).chat.completions.create(model="double", messages=messages, stop=STOP_SEQUENCES)
    turn = parse_react(text.choices[0].message.content)
    assert turn.tool and turn.discarded.startswith("Observation:") and "Final Answer:" in turn.discarded


def test_refusals_happen_at_the_configured_rate(serve) -> None:
    double = serve(refusal_rate=0.3)
    replies = [ask(double, f"question {n}").choices[0].message for n in range(100)]
    refused = [m for m in replies if m.content and m.content.startswith(("I'm sorry", "I apologize", "Unfort"))]
    assert 15 <= len(refused) <= 45 and len(refused) == double.counters["kind:refusal"]
    assert not any("{" in m.content for m in refused)
    structured = serve(refusal_rate=1.0)
    message = ask(structured, "x", response_format=strict_format(PAGE)).choices[0].message
    assert message.content is None and message.refusal
    never = serve(refusal_rate=0.0)
    assert all(ask(never, f"q {n}").choices[0].message.content for n in range(30))
    assert never.counters["kind:refusal"] == 0


def test_429_carries_retry_after_and_5xx_can_be_switched_on(serve) -> None:
    double = serve(rate_limit_rate=1.0, retry_after_s=2.0)
    with pytest.raises(openai.RateLimitError) as info:
        ask(double, "hi")
    assert info.value.response.headers["retry-after"] == "2"
    assert info.value.response.headers["retry-after-ms"] == "2000"
    with pytest.raises(openai.RateLimitError):
        ask(double, "hi")
    assert double.counters["early_retry"] == 1 and [e.attempt for e in double.log] == [1, 2]
    down = serve(server_error_rate=1.0, server_error_codes=(503,))
    with pytest.raises(openai.InternalServerError) as err:
        ask(down, "hi")
    assert err.value.status_code == 503


def test_usage_reasoning_and_determinism(serve) -> None:
    first = serve(seed=4, reasoning=True)
    reply = ask(first, "Summarise the thread.")
    usage = reply.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert len(reply.choices[0].message.model_extra["reasoning_content"]) >= 150
    asked = serve(seed=4)
    assert ask(asked, "hi", reasoning_effort="low").choices[0].message.model_extra.get("reasoning_content")
    assert not ask(asked, "hi").choices[0].message.model_extra.get("reasoning_content")
    again = serve(seed=4, reasoning=True)
    other = serve(seed=5, reasoning=True)
    assert ask(again, "Summarise the thread.").choices[0].message == reply.choices[0].message
    assert ask(other, "Summarise the thread.").choices[0].message != reply.choices[0].message


def test_max_tokens_cuts_the_reply_like_a_real_api(serve) -> None:
    double = serve(refusal_rate=0.0)
    reply = ask(double, "Write it.", response_format=strict_format(PAGE), max_tokens=100)
    assert reply.choices[0].finish_reason == "length" and len(reply.choices[0].message.content) == 400
    assert double.log[-1].long_ids == []  # nothing long went out whole


def test_project_model_layer_repairs_are_seen_and_counted(serve, monkeypatch) -> None:
    """Through the project's ModelHub in prompt mode: the double reads the schema from the instruction, and
    recognises the project's repair request (if its wording changes, this test says so)."""
    monkeypatch.setattr(retry_mod, "BASE_WAIT_S", 0.01)
    capped = {
        "type": "object",
        "properties": {"body": {"type": "string", "maxLength": 300}},
        "required": ["body"],
        "additionalProperties": False,
    }
    double = serve(refusal_rate=0.0, heed_repairs=True, rate_limit_rate=0.3, retry_after_s=0.01)
    options = ModelOptions(
        model="openai:double", base_url=double.base_url, structured="prompt", max_tokens=4000, max_attempts=8
    )
    reply = ModelHub({"emulator": options}).model("emulator").complete([user("Write the email.")], schema=capped)
    assert reply.attempts == 2 and len(reply.value["body"]) <= 300
    answered = double.exchanges(status=200)
    assert [e.repair for e in answered] == ["", "structured"] and double.counters["repair:structured"] == 1
    assert "response_format" not in answered[0].request
    assert double.counters["status:429"] == len(double.log) - 2

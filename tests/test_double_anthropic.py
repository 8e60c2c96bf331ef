"""The Anthropic Messages double, through the anthropic SDK and through the project's model layer."""

from __future__ import annotations

import re
from functools import cache

import anthropic
import jsonschema
import pytest
from doubles import AnthropicDouble, markers
from doubles.fixtures import serve_doubles

from toolemu.llm import ModelHub, ModelOptions, user
from toolemu.llm.structured import validate_reply

serve = pytest.fixture(serve_doubles)

SEND = {
    "name": "MailSend",
    "description": "Send an email.",
    "input_schema": {
        "type": "object",
        "properties": {
            "to": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
            "subject": {"type": "string", "maxLength": 80},
            "body": {"type": "string", "maxLength": 600},
            "priority": {"enum": ["low", "high"]},
        },
        "required": ["to", "subject", "body", "priority"],
        "additionalProperties": False,
    },
}
READ = {
    "name": "MailRead",
    "description": "Read one email.",
    "input_schema": {"type": "object", "properties": {"email_id": {"type": "string"}}, "required": ["email_id"]},
}
REPORT = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "content": {"type": "string"}, "tags": {"type": "array"}},
    "required": ["title", "content", "tags"],
    "additionalProperties": False,
}


@cache
def client(double: AnthropicDouble) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=double.base_url, api_key="dummy", max_retries=0)


def create(double: AnthropicDouble, messages: list | str, **kwargs):
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    return client(double).messages.create(model="double", max_tokens=8000, messages=messages, **kwargs)


def test_forced_tool_answers_its_input_schema(serve) -> None:
    double = serve(cls=AnthropicDouble, refusal_rate=1.0)  # a forced tool is never refused
    for n in range(8):
        message = create(
            double, f"Send the report {n}.", tools=[SEND, READ], tool_choice={"type": "tool", "name": "MailSend"}
        )
        (block,) = message.content
        assert block.type == "tool_use" and block.name == "MailSend" and message.stop_reason == "tool_use"
        assert re.fullmatch(r"toolu_[A-Za-z0-9]{24}", block.id)
        jsonschema.validate(block.input, SEND["input_schema"])  # limits kept: the tool was forced


def test_tool_use_in_parallel_then_a_final_answer(serve) -> None:
    double = serve(cls=AnthropicDouble, refusal_rate=0.0)
    messages: list[dict] = [{"role": "user", "content": "Tidy up my inbox."}]
    message = create(double, messages, tools=[SEND, READ])
    uses = [b for b in message.content if b.type == "tool_use"]
    assert message.stop_reason == "tool_use" and 2 <= len(uses) <= 3 and message.content[0].type == "text"
    assert len({b.id for b in uses}) == len(uses)
    long_bodies = [b.input["body"] for b in uses if b.name == "MailSend"]
    assert all(len(body) > 600 for body in long_bodies)  # auto tool use: a strong model writes past maxLength
    results = [{"type": "tool_result", "tool_use_id": b.id, "content": "done"} for b in uses]
    results += [{"type": "tool_result", "tool_use_id": uses[0].id, "content": "done"}] * (3 - len(uses))
    messages += [{"role": "assistant", "content": [b.model_dump() for b in message.content]}]
    messages += [{"role": "user", "content": results}]
    final = create(double, messages, tools=[SEND, READ])
    assert final.stop_reason == "end_turn" and [b.type for b in final.content] == ["text"]
    assert markers.scan([final.content[0].text]).intact
    single = create(
        double, "Again.", tools=[SEND, READ], tool_choice={"type": "auto", "disable_parallel_tool_use": True}
    )
    assert sum(b.type == "tool_use" for b in single.content) == 1


def test_thinking_blocks_usage_and_stop_sequences(serve) -> None:
    double = serve(cls=AnthropicDouble, refusal_rate=0.0)
    message = create(double, "Plan the week.", thinking={"type": "enabled", "budget_tokens": 2000})
    assert [b.type for b in message.content] == ["thinking", "text"] and message.content[0].signature
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    plain = create(double, "Plan the week.")
    assert [b.type for b in plain.content] == ["text"]
    stopped = create(double, "Plan the week.", stop_sequences=[" the "])
    assert stopped.stop_reason == "stop_sequence" and stopped.stop_sequence == " the "
    assert " the " not in stopped.content[0].text


def test_rate_limit_is_a_429_with_retry_after(serve) -> None:
    double = serve(cls=AnthropicDouble, rate_limit_rate=1.0, retry_after_s=3)
    with pytest.raises(anthropic.RateLimitError) as info:
        create(double, "hi")
    assert info.value.response.headers["retry-after"] == "3"
    assert info.value.body["error"]["type"] == "rate_limit_error"
    overloaded = serve(cls=AnthropicDouble, server_error_rate=1.0, server_error_codes=(529,))
    with pytest.raises(anthropic.APIStatusError) as err:
        create(overloaded, "hi")
    assert err.value.status_code == 529


def test_refusals_are_prose_with_no_json(serve) -> None:
    double = serve(cls=AnthropicDouble, refusal_rate=0.25)
    texts = [create(double, f"request {n}").content[0].text for n in range(80)]
    refused = double.counters["kind:refusal"]
    assert 8 <= refused <= 32 and sum(t.startswith(("I'm sorry", "I apologize", "Unfort")) for t in texts) == refused


def test_project_anthropic_role_gets_its_schema_as_a_forced_tool(serve, monkeypatch) -> None:
    """anthropic:<model> asks for structure with a forced tool whose input schema is the reply schema, and reads
    the reply from the tool_use block: long strings and 20-item arrays arrive whole."""
    monkeypatch.setenv("DOUBLE_KEY", "dummy-anthropic-key")
    double = serve(cls=AnthropicDouble, refusal_rate=1.0, reasoning=True)  # a forced tool is never refused
    options = ModelOptions(model="anthropic:double", base_url=double.base_url, api_key_env="DOUBLE_KEY")
    model = ModelHub({"evaluator": options}).model("evaluator")
    reply = model.complete([user("Write the incident report.")], schema=REPORT)
    validate_reply(reply.value, REPORT)
    assert 18 <= len(reply.value["tags"]) <= 22 and reply.attempts == 1
    request = double.log[0].request
    assert request["tool_choice"] == {"type": "tool", "name": "reply"}
    assert [t["input_schema"] for t in request["tools"]] == [REPORT]
    assert "matching this JSON schema" not in request["messages"][-1]["content"]  # the tool carries it
    assert request["max_tokens"] == 4096  # the provider's default: room for long replies
    assert markers.scan([reply.value]).intact == set(double.log[0].long_ids)
    assert reply.reasoning and reply.reasoning not in reply.text  # thinking is recorded apart from the answer


def test_project_anthropic_role_in_prompt_mode_reads_wrapped_json(serve, monkeypatch) -> None:
    """--structured prompt: the schema goes in the prompt; the double answers it wrapped at the set rates."""
    monkeypatch.setenv("DOUBLE_KEY", "dummy-anthropic-key")
    double = serve(cls=AnthropicDouble, refusal_rate=0.0, wraps={"prose": 1.0})
    options = ModelOptions(
        model="anthropic:double",
        base_url=double.base_url,
        api_key_env="DOUBLE_KEY",
        max_tokens=8000,
        structured="prompt",
    )
    model = ModelHub({"evaluator": options}).model("evaluator")
    reply = model.complete([user("Write the incident report.")], schema=REPORT)
    validate_reply(reply.value, REPORT)
    assert reply.text.split("{")[0].strip() and 18 <= len(reply.value["tags"]) <= 22
    assert double.counters["wrap:prose"] == 1 and double.log[0].request["max_tokens"] == 8000

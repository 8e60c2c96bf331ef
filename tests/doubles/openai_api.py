"""The OpenAI-compatible double: POST /v1/chat/completions, as langchain_openai.ChatOpenAI(base_url=...) calls it.

It refuses what the real API refuses (schema_rules.py): a tool whose parameters break OpenAI's function-schema rules
(strict or not), a json_schema response_format that breaks the structured-outputs rules, tool messages that answer no
call. GeminiDouble is the same double as Gemini's OpenAI-compatible endpoint: Gemini's schema rules, Gemini's error
body.
"""

from __future__ import annotations

import json
from typing import Any

from doubles.behaviour import Reply, tokens
from doubles.conversation import BadRequest, Conversation, ToolSpec, schema_in_text, text_of
from doubles.schema_rules import openai_request_refusal
from doubles.server import DoubleServer

_ERROR_TYPES = {429: "rate_limit_exceeded", 400: "invalid_request_error", 404: "not_found_error"}


class OpenAIDouble(DoubleServer):
    api = "openai"
    chat_path = "/v1/chat/completions"
    call_id_prefix = "call_"
    dialect = "openai"  # whose schema rules: "openai", or "gemini" (GeminiDouble)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def read(self, request: dict[str, Any]) -> Conversation:
        refusal = openai_request_refusal(request, self.dialect)
        if refusal is not None:
            raise BadRequest(refusal.message, refusal.param, refusal.code)
        conv = Conversation(model=str(request.get("model", "")))
        conv.answered = _answered_tool_messages(request.get("messages") or [])
        system: list[str] = []
        for message in request.get("messages") or []:
            role, text = message.get("role", "user"), text_of(message.get("content"))
            if role in ("system", "developer"):
                system.append(text)
            elif role in ("user", "assistant", "tool"):
                conv.turns.append((role, text))
        conv.system = "\n\n".join(system)
        for tool in request.get("tools") or []:
            fn = tool.get("function") or {}
            # No parameters: "an empty parameter list" (the model calls it with {}).
            parameters = fn.get("parameters") or {"type": "object", "properties": {}, "additionalProperties": False}
            conv.tools.append(ToolSpec(fn.get("name", ""), parameters, fn.get("description", "")))
        choice = request.get("tool_choice", "auto")
        if isinstance(choice, dict):
            conv.tool_choice = "tool:" + str((choice.get("function") or {}).get("name", ""))
        elif choice in ("none", "required"):
            conv.tool_choice = choice
        conv.parallel = request.get("parallel_tool_calls", True) is not False
        _read_schema(request, conv)
        stop = request.get("stop")
        conv.stop = [stop] if isinstance(stop, str) else list(stop or [])
        conv.max_tokens = request.get("max_completion_tokens") or request.get("max_tokens")
        thinking = (request.get("chat_template_kwargs") or {}).get("enable_thinking")
        conv.wants_reasoning = bool(request.get("reasoning_effort") or thinking)
        return conv

    def render(self, request: dict[str, Any], conv: Conversation, reply: Reply, reply_id: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
        if reply.refusal and conv.schema_source == "response_format":
            message["content"], message["refusal"] = None, reply.text  # structured outputs refuse out of band
        if reply.tool_calls:
            message["content"] = None  # GPT-style: the calls alone
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.args, ensure_ascii=False)},
                }
                for call in reply.tool_calls
            ]
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning  # vLLM's field for reasoning models
        finish = {"stop_sequence": "stop", "tool_calls": "tool_calls", "length": "length"}.get(reply.finish, "stop")
        prompt = tokens(conv.prompt_chars, self.config)
        completion = tokens(reply.completion_chars(), self.config)
        return {
            "id": f"chatcmpl-{reply_id}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": conv.model or "double",
            "system_fingerprint": "fp_double",
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "completion_tokens_details": {
                    "reasoning_tokens": tokens(len(reply.reasoning), self.config) if reply.reasoning else 0
                },
            },
        }

    def error_body(self, status: int, message: str, param: str | None = None, code: str | None = None) -> Any:
        kind = _ERROR_TYPES.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": param, "code": code or kind}}


class GeminiDouble(OpenAIDouble):
    """Gemini's OpenAI-compatible endpoint (generativelanguage.googleapis.com/v1beta/openai): Gemini's rules for
    function declarations and response schemas, and its error body, a one-element list."""

    dialect = "gemini"

    def error_body(self, status: int, message: str, param: str | None = None, code: str | None = None) -> Any:
        statuses = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}
        return [{"error": {"code": status, "message": message, "status": statuses.get(status, "INTERNAL")}}]


def _answered_tool_messages(messages: list[dict[str, Any]]) -> int:
    """The tool messages, checked as OpenAI's API checks them (a 400 otherwise): each answers, by tool_call_id, a call
    of the assistant message before it (only tool messages in between), and every call of that message is answered
    before any other message. Returns how many tool messages answered a call."""
    answered = 0
    calls: list[str] | None = None  # the ids of the last assistant message's tool calls, while tool messages follow
    waiting: set[str] = set()
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            if calls is None or message.get("tool_call_id") not in calls:
                raise BadRequest(
                    f"messages[{index}]: a message with role 'tool' must answer a tool call of the assistant "
                    f"message before it (tool_call_id {message.get('tool_call_id')!r} answers none)"
                )
            waiting.discard(str(message["tool_call_id"]))
            answered += 1
            continue
        _all_answered(waiting, index)
        found = message.get("tool_calls") if message.get("role") == "assistant" else None
        calls = [str(c.get("id") or "") for c in found] if found else None
        if calls is not None and not all(calls):
            raise BadRequest(f"messages[{index}].tool_calls: every tool call needs an id")
        waiting = set(calls or ())
    _all_answered(waiting, len(messages))
    return answered


def _all_answered(waiting: set[str], index: int) -> None:
    if waiting:
        raise BadRequest(
            f"messages[{index}]: an assistant message with 'tool_calls' must be followed by a tool message for each "
            f"tool_call_id; not answered: {', '.join(sorted(waiting))}"
        )


def _read_schema(request: dict[str, Any], conv: Conversation) -> None:
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        conv.schema, conv.schema_source = spec.get("schema") or {}, "response_format"
        conv.enforced = bool(spec.get("strict"))
        return
    prompt_schema = schema_in_text(conv.last_user) or schema_in_text(conv.system)
    if fmt.get("type") == "json_object":  # JSON mode; llama.cpp's server also takes a schema here
        conv.schema = fmt.get("schema") or prompt_schema or {"type": "object"}
        conv.schema_source = "response_format"
        return
    if prompt_schema is not None:
        conv.schema, conv.schema_source = prompt_schema, "prompt"

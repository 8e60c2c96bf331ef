"""The Anthropic double: POST /v1/messages, as langchain_anthropic.ChatAnthropic(base_url=...) calls it.

It refuses what the real API refuses (schema_rules.py): a tool whose name or input_schema breaks the Messages API's
rules, a strict tool or output format that breaks the structured-outputs rules, tool_use blocks without their
results."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from doubles.behaviour import Reply, tokens
from doubles.conversation import BadRequest, Conversation, ToolSpec, schema_in_text, text_of
from doubles.schema_rules import anthropic_request_refusal
from doubles.server import DoubleServer

_ERROR_TYPES = {
    400: "invalid_request_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",
    529: "overloaded_error",
}


class AnthropicDouble(DoubleServer):
    api = "anthropic"
    chat_path = "/v1/messages"
    call_id_prefix = "toolu_"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"  # the SDK adds /v1/messages

    def read(self, request: dict[str, Any]) -> Conversation:
        refusal = anthropic_request_refusal(request)
        if refusal is not None:
            raise BadRequest(refusal)
        conv = Conversation(model=str(request.get("model", "")), system=text_of(request.get("system")))
        conv.answered = _answered_tool_results(request.get("messages") or [])
        for message in request.get("messages") or []:
            role, content = message.get("role", "user"), message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
            text = []
            for block in blocks:
                kind = block.get("type") if isinstance(block, dict) else "text"
                if kind == "tool_result":
                    conv.turns.append(("tool", text_of(block.get("content"))))
                elif kind == "text":
                    text.append(text_of([block]))
            if text:
                conv.turns.append((role, "".join(text)))
        for tool in request.get("tools") or []:
            if "input_schema" in tool:  # server tools (web search ...) have none: not ours to call
                conv.tools.append(ToolSpec(tool["name"], tool["input_schema"], tool.get("description", "")))
        choice = request.get("tool_choice") or {"type": "auto"}
        kind = choice.get("type", "auto")
        conv.tool_choice = {"any": "required", "none": "none"}.get(kind, "auto")
        if kind == "tool":
            conv.tool_choice = "tool:" + str(choice.get("name", ""))
        conv.parallel = not choice.get("disable_parallel_tool_use", False)
        output = request.get("output_format") or {}
        if output.get("type") == "json_schema":  # structured outputs: the schema is guaranteed
            conv.schema, conv.schema_source, conv.enforced = output.get("schema") or {}, "response_format", True
        else:
            found = schema_in_text(conv.last_user) or schema_in_text(conv.system)
            if found is not None:
                conv.schema, conv.schema_source = found, "prompt"
        conv.stop = list(request.get("stop_sequences") or [])
        conv.max_tokens = request.get("max_tokens")
        conv.wants_reasoning = (request.get("thinking") or {}).get("type") == "enabled"
        return conv

    def render(self, request: dict[str, Any], conv: Conversation, reply: Reply, reply_id: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.reasoning:
            signature = base64.b64encode(hashlib.sha256(reply.reasoning.encode()).digest()).decode()
            content.append({"type": "thinking", "thinking": reply.reasoning, "signature": signature})
        if reply.text and reply.kind != "forced_tool":
            content.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.args})
        stop_reason = {"tool_calls": "tool_use", "length": "max_tokens", "stop_sequence": "stop_sequence"}
        return {
            "id": f"msg_{reply_id}",
            "type": "message",
            "role": "assistant",
            "model": conv.model or "double",
            "content": content,
            "stop_reason": stop_reason.get(reply.finish, "end_turn"),
            "stop_sequence": reply.stop_sequence,
            "usage": {
                "input_tokens": tokens(conv.prompt_chars, self.config),
                "output_tokens": tokens(reply.completion_chars(), self.config),
            },
        }

    def error_body(self, status: int, message: str, param: str | None = None, code: str | None = None) -> Any:
        return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}


def _answered_tool_results(messages: list[dict[str, Any]]) -> int:
    """The tool_use / tool_result blocks, checked as the Messages API checks them (a 400 otherwise): every tool_use
    of an assistant message has its tool_result (by tool_use_id) in the very next message, a user message; every
    tool_result answers a tool_use of the message before it; no text block is empty. Returns how many tool_result
    blocks answered a call."""
    answered = 0
    uses: list[str] = []  # the tool_use ids of the message before
    for index, message in enumerate(messages):
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        results = [str(b.get("tool_use_id", "")) for b in blocks if b.get("type") == "tool_result"]
        missing = [i for i in uses if i not in results]
        if missing:
            raise BadRequest(
                f"messages.{index}: tool_use ids without a tool_result block right after them: {', '.join(missing)}"
            )
        stray = [i for i in results if i not in uses]
        if stray:
            raise BadRequest(
                f"messages.{index}: tool_result blocks whose tool_use_id answers no tool_use of the message before: "
                f"{', '.join(stray)}"
            )
        answered += len(results)
        if any(b.get("type") == "text" and not str(b.get("text", "")).strip() for b in blocks):
            raise BadRequest(f"messages.{index}: text content blocks must be non-empty")
        is_assistant = message.get("role") == "assistant"
        uses = [str(b.get("id", "")) for b in blocks if b.get("type") == "tool_use"] if is_assistant else []
    return answered

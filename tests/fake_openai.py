"""A tiny OpenAI-compatible chat server on loopback: answers from a script of (status, body[, headers]) entries,
or from a responder(request, headers) -> (status, body, headers) for servers that must look at what they got.

Like the real API, it first refuses a request whose tool or response schemas break OpenAI's rules
(doubles/schema_rules.py) with a 400 in OpenAI's error shape; the script and the responder never see it.
`dialect="gemini"` applies Gemini's rules (its OpenAI-compatible endpoint) instead, `dialect=None` none.

It speaks the Responses API too (POST /v1/responses, what the openai SDK's `client.responses.create` and
inspect-ai's `openai/` provider send): the request is read as the chat request it amounts to (the same schema rules,
then the same responder), and the chat answer is given back as a Response."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from doubles.schema_rules import openai_request_refusal

Responder = Callable[[dict[str, Any], dict[str, str]], tuple[int, dict[str, Any], dict[str, str]]]


def chat_body(content: str, prompt_tokens: int = 11, completion_tokens: int = 5) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class FakeOpenAIServer:
    """Each request pops the next (status, body[, headers]); the last one repeats. Requests are kept for inspection."""

    def __init__(
        self,
        script: list[tuple[Any, ...]] | None = None,
        responder: Responder | None = None,
        dialect: str | None = "openai",
    ):
        self.script = list(script or [])
        self.responder = responder
        self.dialect = dialect
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.refused: list[tuple[dict[str, Any], Any]] = []  # (request, the 400 body it got)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append(request)
                outer.headers.append(headers)
                path = self.path.rstrip("/")
                responses = path.endswith("/responses")
                chat = chat_request_of(request) if responses else request
                refused = outer.refusal(chat) if responses or path.endswith("/chat/completions") else None
                if refused is not None:
                    outer.refused.append((request, refused))
                    status, body, extra = 400, refused, {}
                elif outer.responder is not None:
                    status, body, extra = outer.responder(chat, headers)
                else:
                    entry = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                    status, body, extra = (*entry, {})[:3]
                if responses and status == 200:
                    body = response_of(body, request)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def refusal(self, request: dict[str, Any]) -> Any:
        """The 400 body the real API answers this request with for its schemas, or None."""
        if self.dialect is None:
            return None
        found = openai_request_refusal(request, self.dialect)
        if found is None:
            return None
        if self.dialect == "gemini":
            return [{"error": {"code": 400, "message": found.message, "status": "INVALID_ARGUMENT"}}]
        return {
            "error": {
                "message": found.message,
                "type": "invalid_request_error",
                "param": found.param,
                "code": found.code,
            }
        }

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------------------------------- the Responses API


def _text(content: Any) -> str:
    """A Responses item's content as text: a string, or its text parts (input_text, output_text, ...)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def chat_request_of(request: dict[str, Any]) -> dict[str, Any]:
    """The chat.completions request a Responses request amounts to: its instructions and input items as messages
    (function calls as an assistant's tool_calls, their outputs as tool messages), its function tools as functions,
    and its text format as the response_format."""
    messages: list[dict[str, Any]] = []
    if request.get("instructions"):
        messages.append({"role": "system", "content": str(request["instructions"])})
    items = request.get("input")
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
        kind = item.get("type", "message")
        if kind == "function_call":
            function = {"name": item.get("name"), "arguments": item.get("arguments", "")}
            call = {"id": item.get("call_id"), "type": "function", "function": function}
            if messages and messages[-1]["role"] == "assistant" and messages[-1].get("tool_calls"):
                messages[-1]["tool_calls"].append(call)  # parallel calls: one assistant message
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _text(item.get("output"))})
        elif kind == "message":
            messages.append({"role": item.get("role", "user"), "content": _text(item.get("content"))})
    tools = []
    for tool in request.get("tools") or []:
        if tool.get("type") == "function":
            function = {k: v for k, v in tool.items() if k != "type"}
            # A Responses function tool is strict unless it says otherwise (the API's default, unlike chat's).
            function["strict"] = tool.get("strict", True) is not False
            tools.append({"type": "function", "function": function})
    chat: dict[str, Any] = {"model": request.get("model", ""), "messages": messages}
    if tools:
        chat["tools"] = tools
    fmt = (request.get("text") or {}).get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = {k: v for k, v in fmt.items() if k != "type"}
        chat["response_format"] = {"type": "json_schema", "json_schema": spec}
    return chat


def response_of(chat: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """A chat completion given back as the Response the Responses API would have sent."""
    message = (chat.get("choices") or [{}])[0].get("message") or {}
    output: list[dict[str, Any]] = []
    if message.get("content"):
        text = {"type": "output_text", "text": message["content"], "annotations": []}
        output.append(
            {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed", "content": [text]}
        )
    for n, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": call.get("id") or f"call_{n}"}
        output.append({**item, "name": fn.get("name"), "arguments": fn.get("arguments", ""), "status": "completed"})
    usage = chat.get("usage") or {}
    prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": chat.get("model", request.get("model", "")),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }

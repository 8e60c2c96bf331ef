"""A tiny OpenAI-compatible chat server on loopback: answers from a script of (status, body[, headers]) entries,
or from a responder(request, headers) -> (status, body, headers) for servers that must look at what they got.

Like the real API, it first refuses a chat.completions request whose tool or response schemas break OpenAI's rules
(doubles/schema_rules.py) with a 400 in OpenAI's error shape; the script and the responder never see it.
`dialect="gemini"` applies Gemini's rules (its OpenAI-compatible endpoint) instead, `dialect=None` none."""

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
                refused = outer.refusal(request) if self.path.rstrip("/").endswith("/chat/completions") else None
                if refused is not None:
                    outer.refused.append((request, refused))
                    status, body, extra = 400, refused, {}
                elif outer.responder is not None:
                    status, body, extra = outer.responder(request, headers)
                else:
                    entry = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                    status, body, extra = (*entry, {})[:3]
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

"""A served model's chat completions, asked directly: an OpenAI-compatible server on plain http (vLLM, llama.cpp,
Ollama, a loopback double), without LangChain, the openai SDK and httpx between the role and the socket.

Why: at a thousand workers, that stack cost about 5 ms of CPU per call under one GIL (httpcore's pool walk, the
SDK's request transforms, LangChain's callbacks), which capped a run near 190 calls a second whatever the server
did. Here a call is one JSON body out and one in, over urllib3's keep-alive pool (what pip and requests use).

What a call sends and what it returns is what the SDK path sends and returns: the same request body, the reply as
the same dict, and failures as the openai SDK's own exceptions (RateLimitError, APITimeoutError, ...), with the
status, the response headers (Retry-After) and the body, so the retry policy and every message read them as before.
A server that does not speak the chat API raises `NotAChatReply`, which says what it sent.

Used for http:// base URLs with no credentials in them and no proxy in the environment (`direct_eligible`);
everything else (OpenAI's own API, https gateways, proxies) keeps the SDK.
"""

from __future__ import annotations

import json
import math
import urllib.request
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from toolemu.llm.messages import Message
from toolemu.llm.protocol import COMPLETION_FIELDS, MalformedReply, NotAChatReply, describe_page
from toolemu.secrets import clip
from toolemu.version import __version__

_AGENT = f"toolemu/{__version__}"
MAX_KEPT_CONNECTIONS = 4096  # open connections a pool keeps for reuse (one per worker thread that used it)
_STATUS_ERRORS = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}


def direct_eligible(base_url: str | None) -> bool:
    """Whether a role at this base URL is asked directly: plain http, no userinfo or query (the SDK's handling of
    those is kept), and no proxy in the environment (urllib3 would not route through it)."""
    if base_url is None:
        return False
    parts = urlsplit(base_url)
    if parts.scheme != "http" or parts.username or parts.password or parts.query:
        return False
    return not urllib.request.getproxies()


def wire_message(message: Message) -> dict[str, Any]:
    """One message as the chat API takes it (what langchain-openai sends for the same message)."""
    role = message["role"]
    if role == "tool":
        return {"role": "tool", "content": message["content"], "tool_call_id": message.get("tool_call_id", "")}
    calls = message.get("tool_calls")
    if role == "assistant" and calls:
        return {
            "role": "assistant",
            "content": message["content"] or None,  # the API wants null, not "", beside tool calls
            "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                for c in calls
            ],
        }
    return {"role": role, "content": message["content"]}


def _tool_choice(choice: str) -> Any:
    return choice if choice in ("auto", "none", "required") else {"type": "function", "function": {"name": choice}}


def _calls(raw: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The reply's tool calls, as the model layer keeps them: arguments that are not a JSON object are kept as
    sent, with why (as LangChain's invalid_tool_calls)."""
    out: list[dict[str, Any]] = []
    for call in raw or []:
        function = call.get("function") or {}
        name, text = function.get("name") or "", function.get("arguments") or ""
        try:
            args = json.loads(text, strict=False) if text.strip() else {}
        except ValueError as exc:
            out.append({"id": call.get("id") or "", "name": name, "args": text, "error": f"not JSON: {exc}"})
            continue
        if not isinstance(args, dict):
            out.append({"id": call.get("id") or "", "name": name, "args": text, "error": "not a JSON object"})
            continue
        out.append({"id": call.get("id") or "", "name": name, "args": args})
    return out


class DirectChat:
    """One role's served model, asked over a keep-alive pool shared by the role's threads."""

    def __init__(
        self,
        base_url: str,
        model: str,
        key: str | None,
        temperature: float | None,
        seed: int | None,
        timeout: float | None,
        max_tokens: int,
    ):
        parts = urlsplit(base_url)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.path = (parts.path.rstrip("/") or "") + "/chat/completions"
        self.model, self.temperature, self.seed, self.max_tokens = model, temperature, seed, max_tokens
        self.headers = {"content-type": "application/json", "accept": "application/json", "user-agent": _AGENT}
        if key:
            self.headers["authorization"] = f"Bearer {key}"
        self.pool = _pool(parts.hostname or "", parts.port or 80, timeout)

    def body(
        self,
        messages: list[Message],
        stop: list[str] | None,
        tools: list[dict[str, Any]] | None,
        tool_choice: str | None,
        kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        """The request body, as langchain-openai builds it for the same call."""
        body: dict[str, Any] = {"model": self.model, "stream": False, "messages": [wire_message(m) for m in messages]}
        body["max_completion_tokens"] = kwargs.get("max_tokens", self.max_tokens)
        if self.seed is not None:
            body["seed"] = self.seed
        if stop:
            body["stop"] = stop
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if tools:
            body["tools"] = tools
            if tool_choice:
                body["tool_choice"] = _tool_choice(tool_choice)
        for name, value in kwargs.items():  # a grown limit went in above; extra_body's fields go in last
            if name not in ("extra_body", "max_tokens"):
                body[name] = value
        body.update(kwargs.get("extra_body") or {})
        return body

    def send(
        self,
        messages: list[Message],
        stop: list[str] | None,
        tools: list[dict[str, Any]] | None,
        tool_choice: str | None,
        kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        """One call: {text, tool_calls, reasoning, refusal, finish, input_tokens, output_tokens}."""
        import urllib3

        payload = json.dumps(self.body(messages, stop, tools, tool_choice, kwargs)).encode()
        try:
            response = self.pool.urlopen(
                "POST", self.path, body=payload, headers=self.headers, preload_content=True, assert_same_host=False
            )
        except urllib3.exceptions.NewConnectionError as exc:  # refused, unreachable (urllib3 files it under timeouts)
            raise _sdk_error("APIConnectionError", self.url) from exc
        except urllib3.exceptions.TimeoutError as exc:
            raise _sdk_error("APITimeoutError", self.url) from exc
        except urllib3.exceptions.HTTPError as exc:  # dropped, cut short, not HTTP: the cause says which
            raise _sdk_error("APIConnectionError", self.url) from exc
        status, data = response.status, response.data
        content_type = response.headers.get("content-type", "")
        if status >= 400:
            raise _status_error(self.url, response, data)
        if "json" not in content_type.lower():
            raise NotAChatReply(describe_page(data.decode("utf-8", "replace"), content_type))
        reply = json.loads(data)  # a cut-off or broken body: JSONDecodeError, a transient fault (retry)
        return _reply_of(reply)


def _reply_of(reply: Any) -> dict[str, Any]:
    if not isinstance(reply, dict):
        raise MalformedReply(f"the reply is JSON but not an object ({type(reply).__name__})")
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        other = set(reply) - COMPLETION_FIELDS
        if other:
            raise NotAChatReply(f"JSON that is not a chat completion (keys: {', '.join(sorted(other))})")
        if "error" in reply:
            raise MalformedReply(f"the server answered 200 with an error: {reply['error']}")
        raise MalformedReply("the reply has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    if not isinstance(message, dict):
        raise MalformedReply("the reply's message is not an object")
    content = message.get("content")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    usage = reply.get("usage") or {}
    return {
        "text": content if isinstance(content, str) else "",
        "tool_calls": _calls(message.get("tool_calls")),
        "reasoning": reasoning if isinstance(reasoning, str) else "",
        "refusal": message.get("refusal") or "",
        "finish": str(choice.get("finish_reason") or ""),
        "input_tokens": _count(usage, "prompt_tokens"),
        "output_tokens": _count(usage, "completion_tokens"),
    }


def _count(usage: Any, name: str) -> int:
    """A token count of the reply's usage (0 when not given). One that is not a finite number is a broken reply,
    retried (through LangChain its sum fails the same way); a count too large to be real is held by call_usage."""
    value = usage.get(name) if isinstance(usage, dict) else None
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MalformedReply(f"the reply's usage.{name} is not a number ({clip(repr(value), 40)})")
    return int(value)


@cache
def _pool(host: str, port: int, timeout: float | None) -> Any:
    """One keep-alive pool per server for every role of the process, with no cap but the workers: each thread
    keeps its connection (a LIFO queue, so no walk over the pool on each request)."""
    import urllib3

    from toolemu.llm.providers import keepalive_options

    return urllib3.HTTPConnectionPool(
        host,
        port,
        maxsize=MAX_KEPT_CONNECTIONS,
        block=False,
        retries=False,
        timeout=urllib3.Timeout(connect=timeout, read=timeout),
        # urllib3's own default (TCP_NODELAY: a body is not held back waiting for the headers' ACK) plus keepalive
        socket_options=[*urllib3.connection.HTTPConnection.default_socket_options, *keepalive_options()],
    )


def _sdk_http() -> Any:
    """The HTTP library the openai SDK is built on (httpx2 from openai 3 on, httpx before): its errors carry that
    library's request and response objects."""
    import importlib

    import openai

    return importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.partition(".")[0])


def _sdk_error(name: str, url: str) -> Exception:
    """A connection fault as the openai SDK raises it (its class, its words, its request), so that it reads as
    before; the transport's own error is its cause."""
    import openai

    request = _sdk_http().Request("POST", url)
    if name == "APITimeoutError":
        return openai.APITimeoutError(request=request)
    return openai.APIConnectionError(request=request)


def _status_error(url: str, response: Any, data: bytes) -> Exception:
    """An error status as the openai SDK raises it: its class for the status, `Error code: N - <the error's
    message>`, the body's error as `body`, and a response with the headers (Retry-After) and the text."""
    import openai

    http = _sdk_http()
    text = data.decode("utf-8", "replace").strip()
    message = f"Error code: {response.status}"
    body: Any = text
    try:
        body = json.loads(text)
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        if isinstance(said, str) and said:
            message += f" - {said}"
    wrapped = http.Response(
        response.status, headers=list(response.headers.items()), content=data, request=http.Request("POST", url)
    )
    name = _STATUS_ERRORS.get(response.status) or ("InternalServerError" if response.status >= 500 else "")
    kind = getattr(openai, name) if name else openai.APIStatusError
    return kind(message, response=wrapped, body=body.get("error", body) if isinstance(body, dict) else body)

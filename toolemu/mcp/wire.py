"""What a client sends, checked before the `mcp` SDK sees it: each message is one JSON-RPC 2.0 message MCP can take,
or it is answered with JSON-RPC's own error, in one short line, and never reaches the SDK (which answered some of
these with HTTP 500 and a traceback, others with a page of pydantic errors, and some not at all).

- -32700 Parse error: not UTF-8, or not strict JSON (toolemu.strict_json: JSON's non-numbers, NaN and Infinity,
  or a lone surrogate escape);
- -32600 Invalid Request: no JSON-RPC 2.0 message (a batch, a number, `"jsonrpc": "1.0"`, an id that is no string
  or integer, no method), nesting deeper than `MAX_NESTING`, or bigger than `MAX_MESSAGE_BYTES`;
- -32601 Method not found: a request of a method this protocol version does not have (`server/discover`, which
  clients on the `mcp` 2.x SDK send first to learn the server's era: the answer that tells them to initialize);
- -32602 Invalid params: a request of a known method whose params do not fit it (a `tools/call` whose `arguments`
  is a string), or nest too deep.

An error answers with the request's id where the message has a usable one, else with null, as JSON-RPC says. A
notification is never answered: one that breaks the rules is dropped (one that names an unknown method, quietly).
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from typing import Any

from mcp import types
from pydantic import BaseModel, ValidationError

from toolemu import strict_json
from toolemu.secrets import clip

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # the SDK's own limit for an HTTP body
MAX_NESTING = 64  # arrays and objects inside one another, the message itself included
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
TITLES = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
}

RequestId = str | int


@dataclass(frozen=True)
class Refusal:
    """A message that does not reach the SDK, and its answer (none for a notification)."""

    code: int
    reason: str
    id: RequestId | None = None
    answer: bool = True  # False: a notification, or a response from the client: nothing to answer
    too_big: bool = False

    @property
    def message(self) -> str:
        return f"{TITLES[self.code]}: {self.reason}"

    def error(self) -> dict[str, Any]:
        """The JSON-RPC error response."""
        return {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}

    @property
    def quiet(self) -> bool:
        """Not worth a line in the log: a method of a newer protocol, which clients try as a matter of course."""
        return self.code == METHOD_NOT_FOUND or (not self.answer and self.reason.startswith("unknown method"))


def _members(union: type[Any]) -> dict[str, type[BaseModel]]:
    """The SDK's message types of a union (ClientRequest, ClientNotification), by method name."""
    found: dict[str, type[BaseModel]] = {}
    for member in typing.get_args(union.model_fields["root"].annotation):
        for method in typing.get_args(member.model_fields["method"].annotation):
            found[method] = member
    return found


REQUESTS = _members(types.ClientRequest)
NOTIFICATIONS = _members(types.ClientNotification)


def screen(raw: bytes) -> types.JSONRPCMessage | Refusal:
    """The message `raw` holds, as the SDK's type, or why it is refused."""
    if len(raw) > MAX_MESSAGE_BYTES:
        return too_big(len(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(PARSE_ERROR, f"the message is not UTF-8 (byte {exc.start})")
    parsed = strict_json.parse(text, keys_once=False, finite=False, max_depth=MAX_NESTING)
    problems = [p for p in parsed.problems if p.kind != "depth"]
    if problems:
        return Refusal(PARSE_ERROR, f"not strict JSON: {problems[0]}")
    if parsed.problems:  # nested too deep: its id and method, where it has them, from its top-level members
        return _too_deep(_top_level(text))
    return _message(parsed.value)


def too_big(size: int) -> Refusal:
    return Refusal(
        INVALID_REQUEST, f"the message is {size:,} bytes or more, over the limit of {MAX_MESSAGE_BYTES:,}", too_big=True
    )


_MEMBER = json.JSONDecoder()  # one member at a time of a message too deep to read whole (_top_level)


def _top_level(text: str) -> dict[str, Any] | None:
    """The top-level members of an object too deep to parse whole, up to the first that is too deep itself: enough
    to find its id and method (the message is refused all the same)."""
    found: dict[str, Any] = {}
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return None
    at = _skip(text, at + 1)
    try:
        while at < len(text) and text[at] != "}":
            key, at = _MEMBER.raw_decode(text, at)
            at = _skip(text, at)
            if not isinstance(key, str) or not text.startswith(":", at):
                return found
            value, at = _MEMBER.raw_decode(text, _skip(text, at + 1))
            found[key] = value
            at = _skip(text, at)
            at = _skip(text, at + 1) if text.startswith(",", at) else at
    except (RecursionError, ValueError):
        pass
    return found


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _too_deep(data: dict[str, Any] | None) -> Refusal:
    reason = f"arrays and objects nest more than {MAX_NESTING} deep"
    request_id = _usable_id(data)
    if data is not None and request_id is not None and isinstance(data.get("method"), str):
        return Refusal(INVALID_PARAMS, reason, request_id)
    return Refusal(INVALID_REQUEST, reason, request_id, answer=not (data and "method" in data and "id" not in data))


def _usable_id(data: Any) -> RequestId | None:
    """The message's id where MCP can take it (a string or an integer, never a bool), else None."""
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    kinds = {bool: "a boolean", int: "an integer", float: "a number with a fraction", str: "a string"}
    return kinds.get(type(value), "an array" if isinstance(value, list) else "an object")


def _message(data: Any) -> types.JSONRPCMessage | Refusal:
    if isinstance(data, list):
        if not data:
            return Refusal(INVALID_REQUEST, "an empty batch")
        return Refusal(INVALID_REQUEST, "batches (arrays of messages) are not taken: send each message on its own")
    if not isinstance(data, dict):
        return Refusal(INVALID_REQUEST, f"expected a JSON-RPC message (an object), got {_kind(data)}")
    request_id = _usable_id(data)
    method = data.get("method")
    notification = "method" in data and "id" not in data
    if data.get("jsonrpc") != "2.0":
        got = clip(json.dumps(data.get("jsonrpc")), 40) if "jsonrpc" in data else "nothing"
        return Refusal(INVALID_REQUEST, f'"jsonrpc" must be "2.0", got {got}', request_id, answer=not notification)
    if "id" in data and request_id is None:
        return Refusal(INVALID_REQUEST, f'"id" must be a string or an integer, got {_kind(data["id"])}')
    if "method" not in data:
        if "result" in data or "error" in data:  # the client's answer to a request of ours
            return _validated(types.JSONRPCMessage, data, request_id, answer=False)
        return Refusal(INVALID_REQUEST, 'no "method": neither a request nor a notification', request_id)
    if not isinstance(method, str):
        return Refusal(INVALID_REQUEST, f'"method" must be a string, got {_kind(method)}', request_id, not notification)
    shown = clip(method, 80)
    members = NOTIFICATIONS if notification else REQUESTS
    if method not in members:
        if notification:
            return Refusal(METHOD_NOT_FOUND, f"unknown method {shown!r}", answer=False)
        return Refusal(METHOD_NOT_FOUND, shown, request_id)
    params = data.get("params")
    if "params" in data and not isinstance(params, dict):
        return Refusal(
            INVALID_PARAMS,
            f'"params" of {shown} must be an object, got {_kind(params)}',
            request_id,
            answer=not notification,
        )
    checked = _validated(
        members[method],
        {k: v for k, v in data.items() if k in ("method", "params")},
        request_id,
        answer=not notification,
        code=INVALID_PARAMS,
        what=shown,
    )
    if isinstance(checked, Refusal):
        return checked
    return _validated(types.JSONRPCMessage, data, request_id, answer=not notification)


def _validated(
    model: type[BaseModel] | Any,
    data: dict[str, Any],
    request_id: RequestId | None,
    answer: bool,
    code: int = INVALID_REQUEST,
    what: str = "the message",
) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"] if not isinstance(p, str) or p[0].islower()) or "message"
        return Refusal(code, f"{what}: {clip(where, 80)}: {clip(first['msg'], 120)}", request_id, answer=answer)

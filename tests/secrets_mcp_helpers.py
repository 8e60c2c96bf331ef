"""Helpers for the MCP secrets tests (tests/test_secrets_mcp.py): keys of providers' shapes, a loopback model that
echoes the credentials it was sent in a chosen form, and the check that no form of a key is in a text."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote

from fake_openai import chat_body

SHAPES = {
    "openai": "sk-proj-",
    "anthropic": "sk-ant-api03-",
    "google": "AIzaSy",
    "github": "ghp_",
    "huggingface": "hf_",
}


def make_key(tag: str, shape: str = "openai") -> str:
    """A key of a provider's shape that no other test plants (nothing registered elsewhere can hide a miss)."""
    return SHAPES[shape] + hashlib.sha256(tag.encode()).hexdigest()[:32]


def json_forms(value: str, levels: int = 3) -> set[str]:
    found, current = set(), {value}
    for _ in range(levels):
        current = {json.dumps(v, ensure_ascii=a)[1:-1] for v in current for a in (False, True)}
        found |= current
    return found


def key_forms(key: str, url_userinfo: str = "") -> set[str]:
    """The forms a key may be seen in: as given, percent-encoded, JSON-escaped (nested too), HTML-escaped, and the
    Basic header of the URL userinfo it came in (padded and not)."""
    forms = {key, quote(key, safe=""), html.escape(key), *json_forms(key)}
    if url_userinfo:
        user, _, password = url_userinfo.partition(":")
        encoded = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        forms |= {encoded, encoded.rstrip("=")}
    return {f for f in forms if len(f) >= 6}


_BREAKS = re.compile(r"(?:[\r\n]|\\[nr])+[ \t]*")


def assert_no_key(where: str, text: str | bytes, key: str, url_userinfo: str = "") -> None:
    """No form of `key` in `text`, and none once its line breaks are taken out (a key split across lines)."""
    body = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    for candidate in (body, _BREAKS.sub("", body)):
        for form in key_forms(key, url_userinfo):
            assert form not in candidate, (where, form, body[:2000])


def split(text: str, *cuts: tuple[int, str]) -> str:
    """`text` with a break inserted at each (position, break) (positions in the original text)."""
    out, at = [], 0
    for position, brk in sorted(cuts):
        out += [text[at:position], brk]
        at = position
    return "".join(out) + text[at:]


def echo_fill(schema: dict[str, Any], text: str) -> Any:
    """An instance of a reply schema whose every free string says `text` (objects get every property they list,
    an object that lists none a `note`)."""
    if "const" in schema or "enum" in schema:
        return schema.get("const", (schema.get("enum") or [None])[0])
    if "anyOf" in schema:
        return echo_fill(schema["anyOf"][0], text)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: echo_fill(v, text) for k, v in props.items()} if props else {"note": text}
    if kind == "array":
        return [echo_fill(schema.get("items", {}), text)]
    if kind in ("integer", "number", "boolean"):
        return {"integer": 1, "number": 1.0, "boolean": False}[kind]
    return text


Echo = Callable[[str, str], str]  # (the Authorization header, what it carries decoded) -> the text echoed


class EchoingModel:
    """An OpenAI-compatible responder that plays every role and puts `echo(header, decoded)` into each reply: the
    emulator's observation, the agent's text, the judges' verdicts. `status` other than 200 answers with an error
    whose message is the echo. `seen` keeps each Authorization header it got."""

    def __init__(self, echo: Echo, status: int = 200):
        self.echo, self.status = echo, status
        self.seen: list[str] = []

    def __call__(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        auth = headers.get("authorization", "")
        self.seen.append(auth)
        decoded = ""
        if auth.startswith("Basic "):
            decoded = base64.b64decode(auth[6:]).decode("utf-8", "replace")
        elif auth.startswith("Bearer "):
            decoded = auth[7:]
        text = self.echo(auth, decoded)
        if self.status != 200:
            return self.status, {"error": {"message": f"refused: {text}", "type": "server_error"}}, {}
        fmt = request.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return 200, chat_body(json.dumps(echo_fill(fmt["json_schema"]["schema"], text))), {}
        return 200, chat_body(f"Thought: {text}\nFinal Answer: {text}"), {}

"""A server that does not speak the chat API at all: what it answered, in words, for one clear line.

A wrong `--base-url` (a web server's HTML page, another API's JSON, a 404 page, a port where something other than
HTTP listens) fails the same way on every attempt, so it is not retried, and the command says what the server sent
instead of a client library's exception. A fault on the way to a real server (a 200 whose body was cut short, one
without `choices`, a dropped connection) is not this: those stay transient (toolemu.llm.retry).
"""

from __future__ import annotations

import http.client
import json
import re
import socket
from typing import Any
from urllib.parse import urlsplit

from toolemu.secrets import clip, exception_chain

# A chat completion's own fields (and what the OpenAI SDK adds to one): JSON with any other key is another API's.
COMPLETION_FIELDS = frozenset(
    {"id", "choices", "created", "model", "object", "metadata", "moderation", "service_tier", "system_fingerprint"}
    | {"usage", "prompt_logprobs", "kv_transfer_params", "error", "prompt_token_ids"}
)
PROBE_TIMEOUT_S = 2.0  # how long the check of a port that closed on us waits for its first bytes
_GOT_TEXT = re.compile(r"Unexpected response type from OpenAI-compatible endpoint\..*?got str: (?P<body>.*)$", re.S)
_NULL_CHOICES = re.compile(r"null value for 'choices'.*Full response keys: \[(?P<keys>[^\]]*)\]", re.S)
_DISCONNECTED = "Server disconnected without sending a response"
_NOT_HTTP = ("illegal status line", "illegal request line", "invalid http", "malformed")


def _shown(text: str) -> str:
    """A server's words, on one line and short (its page may be long); escapes make control bytes visible."""
    return clip(" ".join(repr(text)[1:-1].split()), 80)


class NotAChatReply(ValueError):
    """What a server that does not speak the chat API sent, found where the reply is read
    (toolemu.llm.served): the message is that description."""


class MalformedReply(ValueError):
    """A 200 from a chat server whose body is not a usable completion (no choices, not an object): a fault on the
    way, retried like a cut-off body."""


def describe_page(body: str, content_type: str = "") -> str:
    """What a body that is not a chat completion is, in words: an HTML page's title, or the text itself."""
    if "html" in content_type.lower() or body.lstrip()[:1] == "<":
        title = re.search(r"<title[^>]*>(.*?)</title>|<h1[^>]*>(.*?)</h1>", body, re.I | re.S)
        words = next((g for g in (title.groups() if title else ()) if g), body)
        return f"an HTML page ({_shown(re.sub(r'<[^>]+>', ' ', words))})"
    return f"text that is not JSON ({_shown(body)})"


def _url_of(exc: BaseException) -> str | None:
    for e in exception_chain(exc):
        request = getattr(e, "request", None)
        url = getattr(request, "url", None)
        if url is not None:
            return str(url)
    return None


def probe(url: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """For an http:// URL whose server closed the connection without a response: what the port says to a plain
    HTTP request, when that is not HTTP (None when it answers HTTP, says nothing, or cannot be reached)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    try:
        with socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout) as conn:
            conn.settimeout(timeout)
            conn.sendall(f"GET / HTTP/1.0\r\nHost: {parts.hostname}\r\n\r\n".encode())
            first = conn.recv(256)
    except OSError:
        return None
    if not first or first.startswith(b"HTTP/"):
        return None
    return _shown(first.decode("utf-8", "replace"))


def foreign_reply(exc: BaseException) -> str | None:
    """What a server that does not speak the chat API sent, as "<what> (<its words>)"; None for any other failure
    (a transient fault, a refused key, a model error that a real chat server reports)."""
    for e in exception_chain(exc):
        if isinstance(e, NotAChatReply):
            return str(e)
        text = str(e)
        if isinstance(e, ValueError) and (m := _GOT_TEXT.search(text)):
            body = m.group("body").strip()
            return describe_page(body[1:-1] if body[:1] in "'\"" and body[-1:] == body[:1] else body)
        if isinstance(e, TypeError) and (m := _NULL_CHOICES.search(text)):
            keys = {k.strip(" '\"") for k in m.group("keys").split(",") if k.strip()}
            if keys - COMPLETION_FIELDS:  # another API's answer, not a completion that lost its choices
                return f"JSON that is not a chat completion (keys: {', '.join(sorted(keys - COMPLETION_FIELDS))})"
        status = getattr(e, "status_code", None) or getattr(getattr(e, "response", None), "status_code", None)
        if status == 404:
            return _not_found(getattr(e, "response", None))
        if any(marker in text.lower() for marker in _NOT_HTTP) and "RemoteProtocolError" in type(e).__name__:
            return "an answer that is not HTTP"
        if isinstance(e, http.client.BadStatusLine) and not isinstance(e, http.client.RemoteDisconnected):
            line = e.line if isinstance(e.line, str) else ""  # what the port sent where a status line belongs
            return f"an answer that is not HTTP ({_shown(line)})" if line.strip() else "an answer that is not HTTP"
        closed = _DISCONNECTED in text or isinstance(e, http.client.RemoteDisconnected)
        if closed and (url := _url_of(exc)) is not None and (said := probe(url)) is not None:
            return f"an answer that is not HTTP ({said})"
    return None


def _not_found(response: Any) -> str | None:
    """A 404 from a chat server says why in its JSON error (a model it does not serve): that is the server's own
    answer, not a foreign one. Any other 404 means nothing serves the chat API at that address."""
    body = getattr(response, "text", "") or ""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and "error" in data:
        return None
    content_type = getattr(response, "headers", {}).get("content-type", "") if response is not None else ""
    return "404 Not Found: " + (describe_page(body, content_type) if body.strip() else "an empty page")

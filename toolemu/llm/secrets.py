"""Secrets come from the environment or a .env file, and are scrubbed from everything the project writes.

Two mechanisms, one scrubber (`redact()` / `redactor()`), which every writer (JSONL, cache, logs, reports, exports)
and the CLI's console go through:

- Known keys, by value: the value of a variable whose name looks secret (…API_KEY, …_TOKEN, …_SECRET, …PASSWORD),
  or of a variable registered as holding a key (every provider's key variable, `--api-key-env NAME` included, is
  registered when a hub is built and again when the key is read), or a value registered directly (a key the
  project made itself, e.g. for a vLLM server it starts, or one given inside a URL: `register_url_secrets`). Each
  is also scrubbed as JSON, HTML and percent-encoding write it, and a URL's credentials as an HTTP Basic header
  carries them, so a server or a file that echoes the key in another form gives nothing away.
- Keys in URLs, by shape: the userinfo of an http(s) or ws(s) URL (`http://user:KEY@host`) and the value of a
  query parameter whose name says key (`?api_key=`, `&key=`, `access_token`, `X-Amz-Signature`, …), whoever wrote
  them. Other schemes are left alone: a `postgres://user:pw@host` in a benchmark case is data, not our key.

`strip_credentials(url)` is a URL without either: what records keep of a `--base-url`.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote, unquote, unquote_plus

_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD)$|^HF_TOKEN$", re.IGNORECASE)
_MIN_SECRET_LEN = 6  # shorter values would redact ordinary words
REDACTED = "***"

_lock = threading.Lock()
_key_variables: set[str] = set()  # names of variables known to hold a key, whatever they are called
_key_values: set[str] = set()  # keys that live in no variable


def register_secret_env(name: str | None) -> None:
    """Treat the variable `name` as a secret from now on (its current and future values are redacted)."""
    if name:
        with _lock:
            _key_variables.add(name)


def register_secret_value(value: str | None) -> None:
    """Redact this exact value from now on (a key held in no variable)."""
    if value and len(value) >= _MIN_SECRET_LEN:
        with _lock:
            _key_values.add(value)


# A URL's userinfo: from '://' to the last '@' before the authority ends (at '/', '?', '#', whitespace, a quote, a
# backslash of a JSON escape, or a bracket). Starting with a literal, it is searched fast; the scheme is checked
# on a match: only http(s) and ws(s), the schemes a model endpoint has.
_USERINFO = re.compile(r"://[^\s\"'<>\\`/?#]*@")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*\Z")
_ENDPOINT_SCHEMES = {"http", "https", "ws", "wss"}
# name=value after ?, & or ; (; also ends an HTML-escaped &amp;): a query parameter, in a URL or a bare path.
_PARAM = re.compile(r"([?&;])([A-Za-z0-9_.~%\[\]-]+)=([^&#\s\"'<>\\`]+)")
# An '=' after a name that ends like a key's (is_key_parameter decides): text without one is not searched for
# parameters. It starts with a literal and checks each '=' behind it, so a long text is looked through fast.
_KEY_EQUALS = re.compile(
    r"=(?<=[yYgGhHdDsStTcCnNeElL]=)"
    r"(?:(?<=(?i:key|sig|pwd|jwt)=)|(?<=(?i:auth|pass|hmac)=)|(?<=(?i:token)=)|(?<=(?i:secret|passwd)=)"
    r"|(?<=(?i:password)=)|(?<=(?i:signature)=)|(?<=(?i:credential)=)|(?<=(?i:credentials)=)"
    r"|(?<=(?i:authorization)=))"
)
# A parameter is key-like when its name (lower case, letters and digits only) is one of these, or ends in the next.
_KEY_PARAMS = {"key", "sig", "auth", "pwd", "pass", "jwt", "hmac"}
_KEY_SUFFIXES = (
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "authkey",
    "subscriptionkey",
    "token",
    "secret",
    "password",
    "passwd",
    "signature",
    "credential",
    "credentials",
    "authorization",
)


def is_key_parameter(name: str) -> bool:
    """Whether a query parameter's name says it carries a key (api_key, key, apiKey, access_token, X-Amz-Signature)."""
    lowered = unquote(name).lower()
    compact = re.sub(r"[^a-z0-9]", "", lowered)
    return compact in _KEY_PARAMS or compact.endswith(_KEY_SUFFIXES) or bool(re.search(r"[_.-](key|sig)$", lowered))


def _authority_end(rest: str) -> int:
    """Where a URL's authority (after '://') ends: at its first '/', '?' or '#'."""
    ends = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
    return min(ends) if ends else len(rest)


def _split_url(url: str) -> tuple[str, str, str, str, str]:
    """(scheme://, userinfo, host[:port], the path, ?query#fragment); userinfo is everything before the authority's
    last '@', as urllib reads it."""
    head, sep, rest = url.partition("://")
    if not sep:
        head, rest = "", url
    else:
        head += sep
    end = _authority_end(rest)
    userinfo, at, host = rest[:end].rpartition("@")
    tail = rest[end:]
    cut = min((i for i in (tail.find("?"), tail.find("#")) if i >= 0), default=len(tail))
    return head, userinfo if at else "", host, tail[:cut], tail[cut:]


def _query_items(suffix: str) -> tuple[list[str], str]:
    """A '?query#fragment' suffix as its query items and the '#fragment' part."""
    if not suffix.startswith("?"):
        return [], suffix
    query, hashmark, fragment = suffix[1:].partition("#")
    return query.split("&"), hashmark + fragment


def url_secrets(url: str) -> list[str]:
    """The secrets a URL carries, in each form they may be seen in: its userinfo (the password, or the user when it
    stands alone, as written and decoded), the Basic header HTTP clients make of it, and the values of key-like
    query parameters (as written and decoded)."""
    _, userinfo, _, _, suffix = _split_url(url)
    found: list[str] = []
    if userinfo:
        user, colon, password = userinfo.partition(":")
        found += [userinfo, unquote(userinfo)]
        found += [password, unquote(password)] if colon else [user, unquote(user)]
        for pair in {f"{unquote(user)}:{unquote(password)}", f"{user}:{password}"}:
            found.append(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    for item in _query_items(suffix)[0]:
        name, eq, value = item.partition("=")
        if eq and value and is_key_parameter(name):
            found += [value, unquote(value), unquote_plus(value)]
    return [f for f in dict.fromkeys(found) if f]


def register_url_secrets(url: str | None) -> None:
    """Redact, from now on, every secret a URL carries (`url_secrets`), wherever it turns up."""
    for value in url_secrets(url or ""):
        register_secret_value(value)


def strip_credentials(url: str) -> str:
    """The URL without its userinfo and without key-like query parameters; any other URL comes back unchanged,
    character for character (records and cache keys of runs without credentials stay as they were)."""
    head, userinfo, host, path, suffix = _split_url(url)
    items, fragment = _query_items(suffix)
    kept = [item for item in items if not is_key_parameter(item.partition("=")[0])]
    if not userinfo and len(kept) == len(items):
        return url
    query = f"?{'&'.join(kept)}" if kept else ""
    return f"{head}{host}{path}{query}{fragment}"


def _scrub_userinfo(match: re.Match[str]) -> str:
    scheme = _SCHEME.search(match.string, max(0, match.start() - 8), match.start())
    if scheme is None or scheme.group(0).lower() not in _ENDPOINT_SCHEMES:
        return match.group(0)
    return f"://{REDACTED}@"


def _scrub_param(match: re.Match[str]) -> str:
    sep, name, _ = match.groups()
    return f"{sep}{name}={REDACTED}" if is_key_parameter(name) else match.group(0)


def _escaped_forms(value: str) -> set[str]:
    """A value as JSON (both ways), HTML and percent-encoding write it."""
    return {
        value,
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
        quote(value, safe=""),
    }


def load_dotenv_file(path: str | Path = ".env") -> None:
    """Add a .env file's variables to the environment; the real environment wins."""
    p = Path(path)
    if not p.is_file():
        return
    from dotenv import dotenv_values  # here: the CLI's start (which redacts with this module) needs no dotenv

    for key, value in dotenv_values(p).items():
        if value is not None and key not in os.environ:
            os.environ[key] = value


def get_secret(name: str) -> str | None:
    """A key from the environment (or .env, once loaded); its variable is registered as secret."""
    register_secret_env(name)
    value = os.environ.get(name)
    return value or None


def secret_values() -> list[str]:
    """Every secret value known now, longest first (so a key that contains another is scrubbed whole)."""
    with _lock:
        names, extra = set(_key_variables), set(_key_values)
    values = {v for k, v in os.environ.items() if (k in names or _SECRET_NAME.search(k)) and v}
    values = {form for v in values | extra if len(v) >= _MIN_SECRET_LEN for form in _escaped_forms(v)}
    return sorted(values, key=len, reverse=True)


def redactor() -> Callable[[str], str]:
    """redact() with the environment read once: for scrubbing many strings in a row."""
    values = secret_values()

    def scrub(text: str) -> str:
        for value in values:
            text = text.replace(value, REDACTED)
        if "@" in text:
            text = _USERINFO.sub(_scrub_userinfo, text)
        if _KEY_EQUALS.search(text):
            text = _PARAM.sub(_scrub_param, text)
        return text

    return scrub


def redact(text: str) -> str:
    return redactor()(text)


def scrub_exception(exc: BaseException) -> None:
    """Scrub an exception's message in place (its arguments, its text attributes, its notes, and those of its
    causes), so that wherever it is cut to length later (a log line, a record's error) no piece of a key is left.
    Best effort: an exception that will not take new arguments keeps them (everything written is scrubbed again)."""
    scrub = redactor()
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        try:
            current.args = tuple(scrub(a) if isinstance(a, str) else a for a in current.args)
            for name, value in list(vars(current).items()):
                if isinstance(value, str):
                    setattr(current, name, scrub(value))
                elif name == "__notes__" and isinstance(value, list):
                    value[:] = [scrub(v) if isinstance(v, str) else v for v in value]
        except (AttributeError, TypeError):
            pass
        current = current.__cause__ or current.__context__


def clip(text: str, limit: int) -> str:
    """The text scrubbed, then cut to `limit` characters (cut first, a key could be left half there)."""
    return redact(text)[:limit]


class RedactingFilter(logging.Filter):
    """Scrub secrets from log records before any handler writes them: the message and an exception's traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        scrub = redactor()
        msg = record.getMessage()
        clean = scrub(msg)
        if clean != msg:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


class ScrubbedStream:
    """A text stream that scrubs each write before passing it on; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: Any) -> int:
        if not isinstance(text, str):
            return self._stream.write(text)  # the stream's own error for bytes (click probes with b"")
        self._stream.write(redact(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def scrubbed_console() -> Iterator[None]:
    """stdout and stderr scrubbed while the block runs (the CLI's commands: every line they print, a model's reply
    or a server's error included)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(sys.stdout), ScrubbedStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved

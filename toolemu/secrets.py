"""Secrets come from the environment or a .env file, and are scrubbed from everything the project writes.

Two mechanisms, one scrubber (`redact()` / `redactor()`), which every writer (JSONL, cache, logs, reports, exports)
and the CLI's console go through:

- Known keys, by value: the value of a variable whose name looks secret (…API_KEY, …_TOKEN, …_SECRET, …PASSWORD),
  or of a variable registered as holding a key (every provider's key variable, `--api-key-env NAME` included, is
  registered when a hub is built and again when the key is read), or a value registered directly (a key the
  project made itself, e.g. for a vLLM server it starts, or one given inside a URL: `register_url_secrets`). Each
  is also scrubbed as JSON, HTML and percent-encoding write it, and a URL's credentials as an HTTP Basic header
  carries them (with its padding or without), so a server or a file that echoes the key in another form gives
  nothing away. A known key of 12 characters or more split across lines (by a line break, raw or as JSON's \\n or
  \\r, and the blanks that indent the next line) is scrubbed whole too.
- Keys in an agent's command line (`--agent-cmd`): `register_command_secrets` registers the value of each
  assignment whose name says key (`MY_API_KEY=... python agent.py`, after `env` or `export` too), of each flag whose
  name says key (`--api-key VALUE`, `--token=VALUE`), of each JSON member whose name says key, of each
  `Bearer`/`Basic` credential, and every secret of each URL in it; `redact_command` is the command as records keep
  it: those words replaced by `***`, however they were quoted.
- Keys in URLs, by shape: the userinfo of an http(s) or ws(s) URL (`http://user:KEY@host`) and the value of a
  query parameter whose name says key (`?api_key=`, `&key=`, `access_token`, `X-Amz-Signature`, …), whoever wrote
  them. Other schemes are left alone: a `postgres://user:pw@host` in a benchmark case is data, not our key.

`strip_credentials(url)` is a URL without either: what records keep of a `--base-url`.

Names that say key: a variable's for the environment (`_SECRET_NAME`); a query parameter's, a flag's, an assignment's
in a command or a JSON member's in one (`is_key_parameter`).
"""

from __future__ import annotations

import base64
import bisect
import functools
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

_SECRET_NAME = re.compile(r"(API_KEY|ACCESS_KEY|_TOKEN|_SECRET|PASSWORD|PASSWD)$|^HF_TOKEN$", re.IGNORECASE)
_MIN_SECRET_LEN = 6  # shorter values would redact ordinary words
_MIN_SPLIT_LEN = 12  # a known value this long is scrubbed even split across lines (shorter: ordinary words again)
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
            encoded = pair.encode("utf-8")
            for basic in (base64.b64encode(encoded), base64.urlsafe_b64encode(encoded)):
                found += [basic.decode("ascii"), basic.decode("ascii").rstrip("=")]  # padded, and as some echo it
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


# A shell word: quoted parts, escaped characters (a line continuation too) and plain characters, up to a blank or an
# operator. Each alternative takes at least one character, and they cannot overlap: linear time.
_SHELL_WORD = r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[^\s'"\\;&|<>()`])+"""
_WORD_START = r"(?<![^\s;&|(`])"  # at the start of the text, or after a blank or an operator
# NAME=word: an assignment before a program, after `env` or `export`.
_ASSIGNMENT = re.compile(rf"{_WORD_START}([A-Za-z_][A-Za-z0-9_]*)=({_SHELL_WORD})", re.DOTALL)
# --flag word, --flag=word, -flag word (the blank may be a line continuation; a word after a blank that starts with
# '-' is the next flag, not this one's value).
_FLAG = re.compile(rf"{_WORD_START}(--?[A-Za-z][A-Za-z0-9_.-]*)(=|(?:\s|\\\n)+(?!-))({_SHELL_WORD})", re.DOTALL)
# "name": "value" of JSON, as given in an argument.
_JSON_MEMBER = re.compile(r'"([A-Za-z0-9_.-]{1,64})"\s*:\s*"((?:[^"\\]|\\.)*)"')
# An HTTP credential in a header given on the command line (-H "Authorization: Bearer ...").
_HEADER_CREDENTIAL = re.compile(
    r"(?:(?i:authorization)\s*[:=]\s*(?i:bearer|basic|token)|\bBearer)\s+([A-Za-z0-9._~+/-]{6,}=*)"
)
# A word that only expands a variable ($KEY, "${KEY}"): it names the key, it is not one.
_EXPANSION = re.compile(r"""["']?\$\{?[A-Za-z_][A-Za-z0-9_]*\}?["']?""")


def _unquoted(word: str) -> str:
    """A shell word's value, its quotes and escapes undone (as written where the shell would refuse it)."""
    import shlex

    try:
        parts = shlex.split(word.replace("\\\n", ""))
    except ValueError:
        return word
    return " ".join(parts)


def _key_words(text: str) -> Iterator[tuple[re.Match[str], int]]:
    """Each assignment or flag of a command line whose name says key, with the group of its value."""
    for match in _ASSIGNMENT.finditer(text):
        if is_key_parameter(match.group(1)):
            yield match, 2
    for match in _FLAG.finditer(text):
        if is_key_parameter(match.group(1).lstrip("-")) and not match.group(3).startswith("-"):
            yield match, 3


def command_secrets(command: str, depth: int = 0) -> list[str]:
    """The keys an agent's command line carries (see the module's docstring), each as written and as the shell
    reads it; a quoted word that is a command itself (`sh -c '...'`, `bash -lc "..."`) is read as one, twice deep."""
    found: list[str] = []
    texts = [command]
    for match, group in _key_words(command):
        word = match.group(group)
        if not _EXPANSION.fullmatch(word):
            value = _unquoted(word)
            found += [value, word, word.strip("'\"")]
            texts.append(value)
    for word in _SHELL_WORDS.findall(command):
        value = _unquoted(word)
        texts.append(value)
        if depth < 2 and word[:1] in "'\"" and re.search(r"\s", value):
            found += command_secrets(value, depth + 1)
    for text in texts:
        for name, value in _JSON_MEMBER.findall(text):
            if is_key_parameter(name) and value:
                found += [value, json.loads(f'"{value}"') if _valid_json_string(value) else value]
        found += _HEADER_CREDENTIAL.findall(text)
        if "://" in text:
            for url in re.findall(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+", text):
                found += url_secrets(url)
    return [f for f in dict.fromkeys(found) if len(f) >= _MIN_SECRET_LEN]


_SHELL_WORDS = re.compile(_SHELL_WORD, re.DOTALL)


def _valid_json_string(body: str) -> bool:
    try:
        json.loads(f'"{body}"')
    except ValueError:
        return False
    return True


def register_command_secrets(command: str | None) -> None:
    """Redact, from now on, every key an agent's command line carries (`command_secrets`), wherever it turns up: in
    what the agent prints, in what a model echoes, in records and logs."""
    for value in command_secrets(command or ""):
        register_secret_value(value)


def redact_command(command: str) -> str:
    """An agent's command line as records keep it: its keys registered (`register_command_secrets`), the value of
    each assignment and flag whose name says key replaced by `***` however it was quoted, then scrubbed as any text
    is. One that carries no key comes back unchanged."""
    register_command_secrets(command)
    spans = sorted(
        (m.start(group), m.end(group)) for m, group in _key_words(command) if not _EXPANSION.fullmatch(m.group(group))
    )
    out, at = [], 0
    for start, end in spans:
        if start >= at:
            out += [command[at:start], REDACTED]
            at = end
    return redact("".join(out) + command[at:])


def _scrub_userinfo(match: re.Match[str]) -> str:
    scheme = _SCHEME.search(match.string, max(0, match.start() - 8), match.start())
    if scheme is None or scheme.group(0).lower() not in _ENDPOINT_SCHEMES:
        return match.group(0)
    return f"://{REDACTED}@"


def _scrub_param(match: re.Match[str]) -> str:
    sep, name, _ = match.groups()
    return f"{sep}{name}={REDACTED}" if is_key_parameter(name) else match.group(0)


def _json_escaped(value: str, levels: int) -> set[str]:
    """A value inside a JSON string, inside a JSON string... `levels` deep (an observation that is JSON text, kept in
    a record line that is JSON too), each level written either way (with or without ASCII escapes)."""
    found, current = set(), {value}
    for _ in range(levels):
        current = {json.dumps(v, ensure_ascii=a)[1:-1] for v in current for a in (False, True)}
        found |= current
    return found


def _escaped_forms(value: str) -> set[str]:
    """A value as JSON (both ways, up to four strings deep: a tool's JSON text quoting JSON, in an observation that
    is JSON text, in a record line), HTML and percent-encoding write it."""
    return {
        value,
        *_json_escaped(value, 4),
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


_secret_names: dict[str, bool] = {}  # variable name -> whether _SECRET_NAME matches it (names are few and stay)


def _secret_name(name: str) -> bool:
    known = _secret_names.get(name)
    if known is None:
        known = _secret_names[name] = bool(_SECRET_NAME.search(name))
    return known


def _raw_secrets() -> frozenset[str]:
    """The secret values as they are now: the environment is read on every call (a key may be set at any time)."""
    with _lock:
        names, extra = set(_key_variables), set(_key_values)
    values = {v for k, v in os.environ.items() if v and (k in names or _secret_name(k))}
    return frozenset(v for v in values | extra if len(v) >= _MIN_SECRET_LEN)


@functools.lru_cache(maxsize=32)
def _forms_of(raw: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted({form for v in raw for form in _escaped_forms(v)}, key=len, reverse=True))


def secret_values() -> list[str]:
    """Every secret value known now, longest first (so a key that contains another is scrubbed whole)."""
    return list(_forms_of(_raw_secrets()))


# Where a key may be split across lines: a line break, raw or as JSON writes it (\n, \r; \\n in a JSON string inside
# another), and the blanks that indent the next line.
_BREAK = re.compile(r"(?:[\r\n]|\\+[nr])+(?:[ \t]|\\+t)*")
_ESCAPED_BREAK, _ESCAPED_TAB = re.compile(r"\\+[nr]"), re.compile(r"\\+t")


def _without_breaks(text: str) -> str:
    """`text` without its line breaks (`_BREAK`), made with str methods where it can: searched fast."""
    if "\\" in text:
        text = _ESCAPED_TAB.sub("\t", _ESCAPED_BREAK.sub("\n", text))
    lines = text.replace("\r", "\n").split("\n")
    return lines[0] + "".join(line.lstrip(" \t") for line in lines[1:])


def _scrub_split(text: str, values: list[str]) -> str:
    """`text` with each of `values` scrubbed where it is split across lines. The text is searched without its breaks,
    which is fast; the places are mapped back only when a value is found."""
    if "\n" not in text and "\r" not in text and "\\n" not in text and "\\r" not in text:
        return text  # no break, raw or escaped (however deep: its last backslash is followed by n or r)
    joined = _without_breaks(text)
    hits = [v for v in values if v in joined]
    if not hits:
        return text
    starts: list[int] = []  # of each run of kept characters: where it starts in `text`, and in `squeezed`
    squeezed_starts: list[int] = []
    pieces: list[str] = []
    at = kept = 0
    for gap in [*_BREAK.finditer(text), None]:
        end = len(text) if gap is None else gap.start()
        if end > at:
            starts.append(at)
            squeezed_starts.append(kept)
            pieces.append(text[at:end])
            kept += end - at
        if gap is not None:
            at = gap.end()
    squeezed = "".join(pieces)

    def place(i: int) -> int:
        run = bisect.bisect_right(squeezed_starts, i) - 1
        return starts[run] + i - squeezed_starts[run]

    spans: list[tuple[int, int]] = []
    for value in hits:
        found = squeezed.find(value)
        while found >= 0:
            spans.append((place(found), place(found + len(value) - 1) + 1))
            found = squeezed.find(value, found + len(value))
    out, at = [], 0
    for start, end in sorted(spans):
        if start >= at:
            out += [text[at:start], REDACTED]
        at = max(at, end)
    return "".join(out) + text[at:]


@functools.lru_cache(maxsize=32)
def _split_values_of(values: tuple[str, ...]) -> tuple[str, ...]:
    joined = {_without_breaks(v) for v in values}
    return tuple(sorted((v for v in joined if len(v) >= _MIN_SPLIT_LEN), key=len, reverse=True))


def redactor() -> Callable[[str], str]:
    """redact() with the environment read once: for scrubbing many strings in a row. What is made from the secret
    values (their escaped forms, the forms searched across line breaks) is made once per set of values."""
    values = _forms_of(_raw_secrets())
    split_values = _split_values_of(values)

    def scrub(text: str) -> str:
        for value in values:
            text = text.replace(value, REDACTED)
        if split_values:
            text = _scrub_split(text, split_values)
        if "@" in text:
            text = _USERINFO.sub(_scrub_userinfo, text)
        if _KEY_EQUALS.search(text):
            text = _PARAM.sub(_scrub_param, text)
        return text

    return scrub


def redact(text: str) -> str:
    return redactor()(text)


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, then its cause or context, and theirs, each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def scrub_exception(exc: BaseException) -> None:
    """Scrub an exception's message in place (its arguments, its text attributes, its notes, and those of its
    causes), so that wherever it is cut to length later (a log line, a record's error) no piece of a key is left.
    Best effort: an exception that will not take new arguments keeps them (everything written is scrubbed again)."""
    scrub = redactor()
    for current in exception_chain(exc):
        try:
            current.args = tuple(scrub(a) if isinstance(a, str) else a for a in current.args)
            for name, value in list(vars(current).items()):
                if isinstance(value, str):
                    setattr(current, name, scrub(value))
                elif name == "__notes__" and isinstance(value, list):
                    value[:] = [scrub(v) if isinstance(v, str) else v for v in value]
        except (AttributeError, TypeError):
            pass


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

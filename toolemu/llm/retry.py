"""Retry policy for model calls: transient failures back off and try again; the rest fail at once.

Transient: rate limits, 5xx, timeouts, dropped connections, and a 200 whose body cannot be read (cut off, not
JSON, or JSON without the API's fields: a proxy or gateway fault, not the model's answer). A server's
Retry-After (seconds, HTTP date, or OpenAI's retry-after-ms) is waited out, up to a cap. A refused key (401/403)
is neither: it stops the whole command (`ModelAccessDenied`, raised by the model layer). Nor is a server that does
not speak the chat API (toolemu.llm.protocol): its answer would be the same on every attempt.
"""

from __future__ import annotations

import json
import logging
import math
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import cache
from typing import Any, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from toolemu.llm.protocol import MalformedReply, foreign_reply
from toolemu.secrets import clip, scrub_exception

log = logging.getLogger("toolemu.llm")
T = TypeVar("T")

_TRANSIENT_NAMES = (
    "RateLimit",
    "Timeout",
    "Connection",
    "InternalServer",
    "ServiceUnavailable",
    "Overloaded",
)
_PERMANENT_NAMES = ("Authentication", "PermissionDenied", "BadRequest", "NotFound", "UnprocessableEntity")
_ACCESS_NAMES = ("Authentication", "PermissionDenied")
# Where a reply is parsed: an error raised in this code while reading a 200 means the body was bad (an empty
# `choices` fails in langchain_core's generic chat model, the rest in the SDKs and their langchain wrappers).
_REPLY_PARSERS = (
    "/openai/",
    "/anthropic/",
    "/langchain_openai/",
    "/langchain_anthropic/",
    "/httpx/",
    "/langchain_core/language_models/",
)
_PARSE_ERRORS = (TypeError, KeyError, IndexError, AttributeError, ValueError)
BASE_WAIT_S = 1.0  # first backoff; tests shorten it
MAX_WAIT_S = 60.0  # longest backoff between two attempts
RETRY_AFTER_CAP_S = 60.0  # a server's Retry-After is honoured up to this; tests shorten it


def _status_code(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    if code is None:
        code = getattr(getattr(exc, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def _names(exc: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(exc).__mro__]


def is_access_denied(exc: BaseException) -> bool:
    """The provider refused the key or what it may do (401, 403): retrying, or asking again, cannot help."""
    if _status_code(exc) in (401, 403):
        return True
    return any(p in n for n in _names(exc) for p in _ACCESS_NAMES)


def is_malformed_reply(exc: BaseException) -> bool:
    """A reply that arrived but could not be read: a truncated or non-JSON body, or JSON without the API's
    fields. The SDKs raise plain Python errors for these (JSONDecodeError; TypeError or IndexError from the
    provider's parser), so the error's type and the package it was raised in decide."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError | MalformedReply):
        return True
    if not isinstance(exc, _PARSE_ERRORS) or exc.__traceback__ is None:
        return False
    innermost = traceback.extract_tb(exc.__traceback__)[-1].filename.replace("\\", "/")
    return any(part in innermost for part in _REPLY_PARSERS)


def is_transient(exc: BaseException) -> bool:
    """Rate limits, 5xx, timeouts, dropped connections and unreadable replies are worth another try; auth and
    bad requests not."""
    names = _names(exc)
    if any(p in n for n in names for p in _PERMANENT_NAMES):
        return False
    if foreign_reply(exc) is not None:  # not the chat API at all (a web page, another API): the same every time
        return False
    if is_malformed_reply(exc):  # before the status: the SDK attaches the 200 it could not read
        return True
    status = _status_code(exc)
    if status is not None:
        return status in (408, 409, 429) or status >= 500
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    return any(t in n for n in names for t in _TRANSIENT_NAMES)


def _seconds(value: str, now: datetime | None = None) -> float | None:
    """A Retry-After value: delta-seconds, or an HTTP date (RFC 9110); None when it is neither."""
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def retry_after_s(exc: BaseException | None, now: datetime | None = None) -> float | None:
    """How long the server asked us to wait, from the error's response headers (retry-after-ms first)."""
    headers: Any = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        seconds = _seconds(ms)
        if seconds is not None:
            return seconds / 1000
    value = headers.get("retry-after")
    return _seconds(value, now) if isinstance(value, str) else None


def _wait(state: RetryCallState) -> float:
    """Exponential backoff with jitter, but never shorter than the server's Retry-After (up to its cap)."""
    backoff = wait_random_exponential(multiplier=BASE_WAIT_S, max=MAX_WAIT_S)(state)
    exc = state.outcome.exception() if state.outcome else None
    asked = retry_after_s(exc)
    return backoff if asked is None else max(backoff, min(asked, RETRY_AFTER_CAP_S))


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    kind = "unreadable reply, " if exc is not None and is_malformed_reply(exc) else ""
    log.warning(
        "model call failed (%s%s: %s); retry %d in %.1fs",
        kind,
        type(exc).__name__,
        clip(str(exc), 200),
        state.attempt_number,
        wait,
    )


@cache
def _retrying(max_attempts: int) -> Retrying:
    """The policy for `max_attempts`, built once: tenacity keeps a call's state per thread, so threads share it.
    Its parts are looked up when used (so a test may swap one)."""
    return Retrying(
        retry=retry_if_exception(lambda exc: is_transient(exc)),
        stop=stop_after_attempt(max_attempts),
        wait=lambda state: _wait(state),
        before_sleep=lambda state: _log_retry(state),
        reraise=True,
    )


def call_with_retries(fn: Callable[[], T], max_attempts: int) -> T:
    """Call `fn`; after a transient error wait (exponential, jittered, at least Retry-After) and retry,
    `max_attempts` in all."""

    def attempt() -> T:
        try:
            return fn()
        except Exception as exc:
            # A server's error body may echo the key: scrubbed here, before any record or log line cuts it short.
            scrub_exception(exc)
            raise

    return _retrying(max_attempts)(attempt)

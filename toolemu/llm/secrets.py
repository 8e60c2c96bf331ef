"""Secrets come from the environment or a .env file, and are scrubbed from everything the project writes.

One mechanism: a secret is the value of a variable whose name looks secret (…API_KEY, …_TOKEN, …_SECRET,
…PASSWORD), or of a variable registered as holding a key (every provider's key variable, `--api-key-env NAME`
included, is registered when a hub is built and again when the key is read), or a value registered directly
(a key the project made itself, e.g. for a vLLM server it starts). Every writer (JSONL, cache, logs, reports)
scrubs through `redact()` / `redactor()`.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

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
    values = {v for v in values | extra if len(v) >= _MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


def redactor() -> Callable[[str], str]:
    """redact() with the environment read once: for scrubbing many strings in a row."""
    values = secret_values()

    def scrub(text: str) -> str:
        for value in values:
            text = text.replace(value, REDACTED)
        return text

    return scrub


def redact(text: str) -> str:
    return redactor()(text)


class RedactingFilter(logging.Filter):
    """Scrub secrets from log records before any handler writes them."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        clean = redact(msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True

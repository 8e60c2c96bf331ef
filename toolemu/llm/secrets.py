"""Secrets come from the environment or a .env file, and are scrubbed from everything the project writes."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from dotenv import dotenv_values

_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD)$|^HF_TOKEN$", re.IGNORECASE)
_MIN_SECRET_LEN = 6  # shorter values would redact ordinary words
REDACTED = "***"


def load_dotenv_file(path: str | Path = ".env") -> None:
    """Add a .env file's variables to the environment; the real environment wins."""
    p = Path(path)
    if not p.is_file():
        return
    for key, value in dotenv_values(p).items():
        if value is not None and key not in os.environ:
            os.environ[key] = value


def get_secret(name: str) -> str | None:
    value = os.environ.get(name)
    return value or None


def secret_values() -> list[str]:
    """The values of every secret-looking variable in the environment, longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and v and len(v) >= _MIN_SECRET_LEN}
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

"""Long strings that can be recognised after a round trip: `[dbl:ID]<body>[/dbl:ID:LEN:CRC32]`.

LEN is the body's length in characters and CRC32 is over its UTF-8 bytes, so a string that was cut, re-encoded
or escaped on the way is told apart from one that arrived intact.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

_WHOLE = re.compile(r"\[dbl:([0-9a-f]{10})\](.*?)\[/dbl:\1:(\d+):([0-9a-f]{8})\]", re.DOTALL)
_START = re.compile(r"\[dbl:([0-9a-f]{10})\]")
OVERHEAD = len("[dbl:0123456789]") + len("[/dbl:0123456789:0000:01234567]")


def checksum(body: str) -> str:
    return f"{zlib.crc32(body.encode('utf-8')):08x}"


def mark(marker_id: str, body: str) -> str:
    return f"[dbl:{marker_id}]{body}[/dbl:{marker_id}:{len(body)}:{checksum(body)}]"


def intact_in(text: str) -> set[str]:
    """Ids of the marked strings in `text` whose length and checksum still match."""
    return {m[1] for m in _WHOLE.finditer(text) if int(m[3]) == len(m[2]) and m[4] == checksum(m[2])}


def started_in(text: str) -> set[str]:
    return set(_START.findall(text))


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value; a string that is itself JSON (an observation, a tool input) is opened too."""
    if isinstance(value, str):
        yield value
        stripped = value.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                inner = json.loads(value)
            except json.JSONDecodeError:
                return
            yield from strings_in(inner)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


@dataclass
class MarkerScan:
    intact: set[str] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)

    @property
    def damaged(self) -> set[str]:
        """Seen somewhere, but never once whole (cut off, or altered on the way)."""
        return self.seen - self.intact


def scan(values: Iterable[Any]) -> MarkerScan:
    """Markers in JSON values (e.g. trajectory records). A string escaped inside other text (an agent log holding
    its Action Input) does not count as damaged if the same string also appears whole."""
    found = MarkerScan()
    for value in values:
        for text in strings_in(value):
            if "[dbl:" in text:
                found.seen |= started_in(text)
                found.intact |= intact_in(text)
    return found

"""JSON read as a checker must read it: UTF-8 with no byte order mark, each key once, numbers that are finite,
and nesting with a bound. Python's json module takes a key given twice (the last wins), NaN, Infinity and 1e999
(as infinity); here each is a problem named by where it is (`metrics.safety.std`), so one line can say it."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 64  # records of the shipped benchmark nest about 10 deep


class _Duplicated(dict):  # type: ignore[type-arg]
    """An object that named a key more than once."""

    def __init__(self, pairs: list[tuple[str, Any]], keys: list[str]):
        super().__init__(pairs)
        self.duplicated = keys


@dataclass(frozen=True)
class _NotFinite:
    text: str  # as the file wrote it: NaN, Infinity, -Infinity, 1e999


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    twice = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
    return _Duplicated(pairs, list(dict.fromkeys(twice)))


def _float(text: str) -> float | _NotFinite:
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


def where(path: tuple[str | int, ...]) -> str:
    """A place in a JSON value as people write it: metrics.safety.std, pass_k.safety[0]."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass
class Parsed:
    value: Any = None
    problems: list[str] = field(default_factory=list)  # each "<where>: expected ..." or "expected ..."

    @property
    def ok(self) -> bool:
        return not self.problems


def _walk(value: Any, out: Parsed) -> None:
    """Find what the parse marked (keys given twice, numbers that are not finite) and nesting past MAX_DEPTH,
    without recursion (the value may be deep)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    too_deep = False
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            too_deep = True
            continue
        if isinstance(item, _NotFinite):
            out.problems.append(f"{where(path) or '(value)'}: expected a finite number, got {item.text}")
        elif isinstance(item, dict):
            for key in getattr(item, "duplicated", []):
                out.problems.append(f"{where((*path, key))}: expected each key once, it is given twice")
            stack += [(v, (*path, k)) for k, v in reversed(item.items())]
        elif isinstance(item, list):
            stack += [(v, (*path, i)) for i, v in reversed(list(enumerate(item)))]
    if too_deep:
        out.problems.append(f"expected JSON nested at most {MAX_DEPTH} deep")


def parse(raw: bytes) -> Parsed:
    """One JSON value from bytes; `problems` say what is wrong (the value is then not to be used)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return Parsed(problems=["expected UTF-8 text with no byte order mark"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(problems=[f"expected UTF-8 text, found byte {raw[exc.start]:#04x} at offset {exc.start}"])
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_float=_float, parse_constant=_NotFinite)
    except RecursionError:
        return Parsed(problems=[f"expected JSON nested at most {MAX_DEPTH} deep"])
    except json.JSONDecodeError as exc:
        return Parsed(problems=[f"expected JSON, {exc.msg} at line {exc.lineno} column {exc.colno}"])
    except ValueError as exc:  # an integer of more digits than Python converts
        return Parsed(problems=[f"expected JSON numbers Python can read ({exc})"])
    out = Parsed(value)
    _walk(value, out)
    if out.problems:
        out.value = None
    return out

"""The one reader of strict JSON: UTF-8 with no byte order mark, each key once, no NaN or Infinity (which Python's
json reads, but which are not JSON), numbers that are finite, strings that are Unicode (no lone UTF-16 surrogate
escape), and nesting with a bound. Each problem is named by where it is (`metrics.safety.std`) and what was
expected, so the caller's one line says file, line and what was wrong. Spec files, a run's JSONL records, a
submission's files, the gym's actions and MCP messages are all read here."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolemu.errors import InputError

MAX_DEPTH = 64  # records of the shipped benchmark nest about 10 deep, spec files 6

Kind = Literal["encoding", "syntax", "constant", "number", "key", "surrogate", "depth"]
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class JsonProblem:
    """What makes a text not strict JSON: `expected` says what was expected, `where` is the place in the value
    ("" for the text as a whole), `detail` the parser's own words for a syntax error (with its line and column)."""

    kind: Kind
    expected: str
    where: str = ""
    detail: str = ""
    column: int = 0  # of a syntax error (its line is in `expected`)

    def __str__(self) -> str:
        return f"{self.where}: {self.expected}" if self.where else self.expected


class NotStrictJson(ValueError):
    """Raised by `loads`: the first problem of the text (all of them in `problems`)."""

    def __init__(self, problems: list[JsonProblem]):
        super().__init__(str(problems[0]))
        self.problems = problems
        self.problem = problems[0]


class _Duplicated(dict):  # type: ignore[type-arg]
    """An object that named a key more than once."""

    def __init__(self, pairs: list[tuple[str, Any]], keys: list[str]):
        super().__init__(pairs)
        self.duplicated = keys


class NotFinite(str):
    """A number that is not finite, as the text wrote it (NaN, Infinity, -Infinity, 1e999): what `parse` keeps in
    its place where a caller asks for the value all the same (`marked`)."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    twice = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
    return _Duplicated(pairs, list(dict.fromkeys(twice)))


def _float(text: str) -> float | NotFinite:
    value = float(text)
    return value if math.isfinite(value) else NotFinite(text)


def where(path: tuple[str | int, ...]) -> str:
    """A place in a JSON value as people write it: metrics.safety.std, pass_k.safety[0] (a key cut at 60
    characters: a hostile one makes no message long)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part[:60]}" if out else part[:60])
    return out


@dataclass
class Parsed:
    value: Any = None
    problems: list[JsonProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _walk(value: Any, out: Parsed, max_depth: int | None) -> None:
    """Find what the parse marked (keys given twice, numbers that are not finite), lone surrogates and arrays and
    objects inside one another past max_depth (the value itself counted), without recursion (it may be deep)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    too_deep = False
    while stack:
        item, path = stack.pop()
        if max_depth is not None and isinstance(item, dict | list) and len(path) >= max_depth:  # the max_depth+1st
            too_deep = True
            continue
        if isinstance(item, NotFinite):
            out.problems.append(JsonProblem("constant", f"expected a finite number, got {item}", where(path)))
        elif isinstance(item, str):
            if found := _SURROGATE.search(item):
                escape = f"\\u{ord(found.group()):04x}"
                problem = f"expected Unicode text, found the escape {escape}: half of a UTF-16 surrogate pair"
                out.problems.append(JsonProblem("surrogate", problem + ", not a character", where(path)))
        elif isinstance(item, dict):
            for key in getattr(item, "duplicated", []):
                out.problems.append(
                    JsonProblem("key", "expected each key once, it is given twice", where((*path, key)))
                )
            stack += [(key, path) for key in reversed(item.keys()) if _SURROGATE.search(key)]
            stack += [(v, (*path, k)) for k, v in reversed(item.items())]
        elif isinstance(item, list):
            stack += [(v, (*path, i)) for i, v in reversed(list(enumerate(item)))]
    if too_deep:
        out.problems.append(JsonProblem("depth", f"expected JSON nested at most {max_depth} deep"))


def decode(raw: bytes) -> str | JsonProblem:
    """The text of JSON bytes: UTF-8 with no byte order mark."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return JsonProblem("encoding", "expected UTF-8 text with no byte order mark")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonProblem("encoding", f"expected UTF-8 text, found byte {raw[exc.start]:#04x} at offset {exc.start}")


def parse(
    raw: bytes | str,
    *,
    max_depth: int | None = MAX_DEPTH,
    keys_once: bool = True,
    finite: bool = True,
    marked: bool = False,
    parse_int: Callable[[str], Any] | None = None,
) -> Parsed:
    """One JSON value; `problems` say what is wrong (the value is then None). NaN and the infinities as words are
    never read. `keys_once=False` keeps the last of a key given twice (as ToolEmu's readers do); `finite=False`
    reads a number past a float's range (1e999) as infinity; `max_depth=None` bounds nesting only by what Python
    can parse. `marked` keeps the value of a text that parsed, whatever its problems, with each number that is not
    finite as a `NotFinite` (the gym records a call as its agent wrote it); `parse_int` reads integers."""
    text = decode(raw) if isinstance(raw, bytes) else raw
    if isinstance(text, JsonProblem):
        return Parsed(problems=[text])
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object if keys_once else None,
            parse_float=_float if finite else None,
            parse_constant=NotFinite,
            parse_int=parse_int,
        )
    except RecursionError:
        bound = f"at most {max_depth} deep" if max_depth is not None else "less deeply than Python parses"
        return Parsed(problems=[JsonProblem("depth", f"expected JSON nested {bound}")])
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        return Parsed(problems=[JsonProblem("syntax", f"expected valid JSON, {detail}", "", exc.msg, exc.colno)])
    except ValueError as exc:  # an integer of more digits than Python converts
        return Parsed(problems=[JsonProblem("number", f"expected JSON numbers Python can read ({exc})")])
    out = Parsed(value)
    _walk(value, out, max_depth)
    if out.problems and not marked:
        out.value = None
    return out


def loads(raw: bytes | str, **options: Any) -> Any:
    """One JSON value, or NotStrictJson naming what is wrong (the options are parse's)."""
    parsed = parse(raw, **options)
    if parsed.problems:
        raise NotStrictJson(parsed.problems)
    return parsed.value


def read_file(path: Path, **options: Any) -> Any:
    """The JSON value of one file, or one InputError naming the file and what was expected (the options are
    parse's)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError.single(path, f"cannot be read: {exc.strerror or exc}") from None
    parsed = parse(raw, **options)
    if parsed.problems:
        raise InputError.single(path, str(parsed.problems[0]))
    return parsed.value

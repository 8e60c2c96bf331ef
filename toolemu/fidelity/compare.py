"""Deterministic comparison of a read-back with the expected state: find the object in the tool's output, find
each field in it, and say whether the value is the expected one.

Verdicts: `match`; `contradiction` (a value other than the expected one); `lost` (the field or the object is not
there); `invented` (something is there that the state does not hold: an object it says is gone, a field a repeated
read added); `undecided` (the rule cannot tell: the value is there in part, or under another name), which a judge
may settle. Values match as a person would read them: text
without regard to case, spacing or punctuation, numbers by value (a currency sign or thousands separator aside),
dates and times by the instant they name, lists whatever their order.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any, Literal

Verdict = Literal["match", "contradiction", "lost", "invented", "undecided"]
NOT_FOUND = re.compile(r"not.?found|no.?such|does ?n[o']t exist|unknown|missing|deleted|no longer|gone", re.I)
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+")
_TRUE, _FALSE = {"true", "yes", "on", "enabled", "1"}, {"false", "no", "off", "disabled", "0"}
MIN_PART = 4  # the shortest text that counts as "there in part"


def parse_json(observation: str) -> Any:
    try:
        return json.loads(observation)
    except (json.JSONDecodeError, TypeError, RecursionError):
        return observation


def raised_error(value: Any) -> str | None:
    """The error text of an output in ToolEmu's shape for a raised exception ({"error": "Name: message"})."""
    if isinstance(value, dict) and set(value) == {"error"}:
        return str(value["error"])
    return None


def not_found(error: str) -> bool:
    """An error that says the thing asked for is not there."""
    return bool(NOT_FOUND.search(error))


def key_name(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.casefold())


def text(value: Any) -> str:
    return " ".join(str(value).casefold().split())


def alnum(value: Any) -> str:
    return re.sub(r"[^0-9a-z]", "", str(value).casefold())


def empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        found = _NUMBER.findall(value)
        if len(found) == 1:
            try:
                return float(found[0].replace(",", ""))
            except ValueError:
                return None
    return None


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str) or not re.match(r"^\d{4}-\d{2}-\d{2}", value.strip()):
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)


def _scalar_leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _scalar_leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _scalar_leaves(v)]
    return [value]


def compare_values(expected: Any, actual: Any) -> Verdict:
    """Whether `actual` (read back) is `expected` (the state's value)."""
    if empty(actual) and not empty(expected):
        return "lost"
    if isinstance(expected, bool):
        if isinstance(actual, bool):
            return "match" if actual == expected else "contradiction"
        word = text(actual)
        if word in _TRUE | _FALSE:
            return "match" if (word in _TRUE) == expected else "contradiction"
        return "undecided" if isinstance(actual, dict | list) else "contradiction"
    if isinstance(expected, int | float):
        number = _number(actual)
        if number is None:
            return "undecided" if isinstance(actual, dict | list | str) else "contradiction"
        return "match" if math.isclose(number, expected, rel_tol=1e-9, abs_tol=0.005) else "contradiction"
    if isinstance(expected, list):
        return _compare_lists(expected, actual)
    if isinstance(expected, dict):
        return _compare_dicts(expected, actual)
    if expected is None:
        return "match" if empty(actual) else "contradiction"
    return _compare_text(str(expected), actual)


def _compare_text(expected: str, actual: Any) -> Verdict:
    if isinstance(actual, list):
        if len(actual) == 1:
            return compare_values(expected, actual[0])
        return "undecided" if any(compare_values(expected, a) == "match" for a in actual) else "contradiction"
    if isinstance(actual, dict):
        leaves = _scalar_leaves(actual)
        return "undecided" if any(compare_values(expected, a) == "match" for a in leaves) else "contradiction"
    if text(expected) == text(actual) or (alnum(expected) and alnum(expected) == alnum(actual)):
        return "match"
    when, then = _instant(expected), _instant(actual)
    if when is not None and then is not None:
        same = when == then or (len(expected.strip()) == 10 and when.date() == then.date())
        return "match" if same else "contradiction"
    number = _number(expected)
    if number is not None and re.fullmatch(r"[\s$€£+\-\d.,%]*", expected) and isinstance(actual, int | float):
        return compare_values(number, actual)
    a, b = alnum(expected), alnum(actual)
    if min(len(a), len(b)) >= MIN_PART and (a in b or b in a):
        return "undecided"
    return "contradiction"


def _compare_lists(expected: list[Any], actual: Any) -> Verdict:
    if not isinstance(actual, list):
        if isinstance(actual, str) and all(alnum(e) in alnum(actual) for e in expected):
            return "undecided"
        return "contradiction"
    left = list(actual)
    undecided = False
    for item in expected:
        verdicts = [_item(item, a) for a in left]
        if "match" in verdicts:
            left.pop(verdicts.index("match"))
        elif "undecided" in verdicts:
            left.pop(verdicts.index("undecided"))
            undecided = True
        else:
            return "contradiction"
    if left:
        return "contradiction"
    return "undecided" if undecided else "match"


def _item(expected: Any, actual: Any) -> Verdict:
    """One expected item of a list against one item read back; a name in a list of objects (a role among a user's
    roles, each {'role_name': ..., 'expires_at': ...}) is the object whose own value it is."""
    if isinstance(actual, dict) and not isinstance(expected, dict | list):
        leaves = [v for v in actual.values() if not isinstance(v, dict | list)]
        return "match" if any(compare_values(expected, v) == "match" for v in leaves) else "contradiction"
    return compare_values(expected, actual)


def _compare_dicts(expected: dict[str, Any], actual: Any) -> Verdict:
    if not isinstance(actual, dict):
        return "contradiction"
    verdicts = []
    for key, value in expected.items():
        found, got = find_field(actual, key)
        verdicts.append(compare_values(value, got) if found else "lost")
    for verdict in ("contradiction", "lost", "undecided"):
        if verdict in verdicts:
            return verdict  # type: ignore[return-value]
    return "match"


def find_field(obj: Any, name: str) -> tuple[bool, Any]:
    """The value of the field `name` in an object (spelling aside: `postal_address` is `postalAddress`), the
    shallowest first; nested objects are searched, lists are values."""
    wanted = key_name(name)
    layer = [obj] if isinstance(obj, dict) else []
    while layer:
        nested = []
        for item in layer:
            for key, value in item.items():
                if key_name(str(key)) == wanted:
                    return True, value
                if isinstance(value, dict):
                    nested.append(value)
        layer = nested
    return False, None


def _id_score(key: str, kind: str) -> int:
    k = key_name(key)
    if k in ("id", key_name(kind) + "id", key_name(kind)):
        return 3
    if k.endswith("id") or k in ("path", "name", "handle", "email", "symbol", "code", "number", "key"):
        return 2
    return 1


def locate(result: Any, kind: str, ident: str, asked_by_id: bool) -> dict[str, Any] | None:
    """The part of the output that is `<kind>:<ident>`. In a list (a listing, a search), the item holding the id as
    one of its own values (the best id-like key first, then the shallowest). Where the call named the id and no
    list item holds it, the whole output: it is about that object (its fields may sit in several parts, a secret's
    `data` beside its `metadata`). Else None: it is not in the output."""
    wanted = alnum(ident)
    best: tuple[int, int, dict[str, Any]] | None = None
    stack: list[tuple[Any, int, bool]] = [(result, 0, False)]
    while stack:
        node, depth, listed = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if listed and not isinstance(value, dict | list) and wanted and alnum(value) == wanted:
                    score = _id_score(str(key), kind)
                    if best is None or (score, -depth) > (best[0], -best[1]):
                        best = (score, depth, node)
            stack += [(v, depth + 1, listed) for v in node.values() if isinstance(v, dict | list)]
        elif isinstance(node, list):
            stack += [(v, depth + 1, True) for v in node]
    if best is not None:
        return best[2]
    if asked_by_id and isinstance(result, dict):
        return result
    if not asked_by_id and isinstance(result, dict) and _holds_id(result, wanted):
        return result  # a read of the one object there is (the user's own profile, the account's balance)
    return None


def _holds_id(node: dict[str, Any], wanted: str) -> bool:
    return any(not isinstance(v, dict | list) and wanted and alnum(v) == wanted for v in node.values()) or any(
        isinstance(v, dict) and _holds_id(v, wanted) for v in node.values()
    )


def present(obj: dict[str, Any] | None) -> bool:
    """Whether a located object holds anything (an empty object, or one of empty values, is no object)."""
    return obj is not None and any(not empty(leaf) for leaf in _scalar_leaves(obj))


def mentions(obj: Any, value: Any) -> bool:
    """Whether the expected value is somewhere in the object (under some other name, perhaps)."""
    wanted = alnum(value if not isinstance(value, list | dict) else " ".join(map(str, _scalar_leaves(value))))
    return len(wanted) >= MIN_PART and wanted in alnum(json.dumps(obj, ensure_ascii=False))


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every scalar of a JSON value by its path (`contact.emails[0]`)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, v in value.items():
            out |= leaves(v, f"{path}.{key}" if path else str(key))
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out |= leaves(v, f"{path}[{i}]")
        return out
    return {path: value}


def same_observation(first: Any, second: Any, ignore: list[str]) -> tuple[Verdict, list[str]]:
    """Whether a repeated read gave the same output, field by field (`ignore`: field names that may change between
    two reads, a clock's); the paths that differ, are gone or are new."""
    skip = {key_name(name) for name in ignore}

    def kept(paths: dict[str, Any]) -> dict[str, Any]:
        return {p: v for p, v in paths.items() if not any(key_name(part) in skip for part in re.split(r"[.\[\]]", p))}

    a, b = kept(leaves(first)), kept(leaves(second))
    differ = [p for p in a if p in b and compare_values(a[p], b[p]) != "match" and a[p] != b[p]]
    gone = [p for p in a if p not in b]
    new = [p for p in b if p not in a]
    if differ:
        return "contradiction", differ
    if gone:
        return "lost", gone
    if new:
        return "invented", new
    return "match", []

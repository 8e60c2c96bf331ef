"""The condition vocabulary shared by gate policies (toolemu.gates.rules) and case checks (toolemu.specs.checks).

A `ValueTest` tests one value: eq, ne, gt, ge, lt, le (numbers; "$1,200" reads as 1200), in, not_in, contains
(case-insensitive), matches and not_matches (a regular expression, searched: found, not found), domain_in, not_domain
(the domain of an e-mail address or URL, subdomains included), exists. A `Condition` is a ValueTest of one argument
of a tool call, named by `arg` (a dotted path into nested objects). Every test given must hold.

Conditions say what a deny rule or a check forbids, so they hold when any reading of the value would be forbidden:

- A list is tested item by item (nested lists flattened) and holds when any item does; a dotted path goes through
  lists the same way (`payments.amount` holds when any payment's amount does). A null value is not given.
- Numbers are compared exactly, with every reading of the value (toolemu.specs.numbers).
- eq and in match loosely (a number and its text, case, NFKC forms); ne and not_in are kept apart strictly (JSON
  types: true is not 1), so that neither can be slipped past by a change of type or case.
- contains and matches also see the text NFKC-folded, without zero-width characters.
- Recipients are read by toolemu.specs.addresses: every address a string, list or object can be read to name.

A test that cannot be decided on a value (a number test on NaN, words or an object; a domain test on a text that
names no domain; a text past the pattern engine's bound; nesting deeper than MAX_DEPTH) gives None: `decide`
answers True, False or None (Kleene's three-valued logic: a list holds if any item holds, else is undecided if any
item is, and a condition of several tests fails if any test fails). A gate denies an undecided call; `holds` and
`test`, for checks, count it as not holding.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator, model_validator

from toolemu.specs.addresses import folded, hosts_in_text, in_domains, strict
from toolemu.specs.numbers import readings
from toolemu.specs.patterns import compile_pattern, search

TESTS = (
    "eq",
    "ne",
    "gt",
    "ge",
    "lt",
    "le",
    "in",
    "not_in",
    "contains",
    "matches",
    "not_matches",
    "domain_in",
    "not_domain",
    "exists",
)
NUMERIC = ("gt", "ge", "lt", "le")
MAX_DEPTH = 64  # nesting of lists and objects a test looks into; deeper is undecidable

Verdict = bool | None  # holds, does not hold, cannot be decided


class _TooDeep:
    """An item nested past MAX_DEPTH: no test can be decided on it."""


TOO_DEEP = _TooDeep()


def any_of(verdicts: Iterable[Verdict]) -> Verdict:
    """True if any is True, else None if any is None, else False (an empty list: False)."""
    undecided = False
    for verdict in verdicts:
        if verdict is True:
            return True
        undecided |= verdict is None
    return None if undecided else False


def all_of(verdicts: Iterable[Verdict]) -> Verdict:
    """False if any is False, else None if any is None, else True (an empty list: True): any_of's dual."""
    return _negate(any_of(_negate(verdict) for verdict in verdicts))


def _negate(verdict: Verdict) -> Verdict:
    return None if verdict is None else not verdict


def valid_regex(pattern: str | None) -> str | None:
    if pattern is not None:
        compile_pattern(pattern)  # ValueError names what RE2 cannot run
    return pattern


def _fold(text: str) -> str:
    """Text as a person reads it: NFKC forms, zero-width and other invisible format characters removed."""
    return "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")


def _json_equal(a: Any, b: Any, depth: int = 0) -> Verdict:
    """JSON equality: true is not 1, 1 is 1.0; None past MAX_DEPTH."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all_of(_json_equal(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all_of(_json_equal(a[k], b[k], depth + 1) for k in a)
    return type(a) is type(b) and a == b


def _loose_equal(item: Any, operand: Any) -> bool:
    """Equal in any reading: as JSON, as numbers ("12345" and 12345), as text up to case, NFKC and padding."""
    if _json_equal(item, operand) or (isinstance(item, bool) and item == operand):
        return True
    if isinstance(item, dict | list) or isinstance(operand, dict | list):
        return False
    mine, theirs = readings(item), readings(operand)
    if mine and theirs and set(mine) & set(theirs):
        return True
    if isinstance(item, str) and isinstance(operand, str):
        return _fold(item).casefold().strip() == _fold(operand).casefold().strip()
    return False


def _texts(item: Any) -> list[str] | None:
    """The texts contains and matches see: the value's text (JSON for other values) and its folded form."""
    if isinstance(item, _TooDeep):
        return None
    try:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
    except (ValueError, RecursionError):  # an integer past Python's digit limit, nesting past the stack
        return None
    folded_text = _fold(text)
    return [text] if folded_text == text else [text, folded_text]


def _strings(value: Any, depth: int = 0) -> Iterator[str | _TooDeep]:
    """The strings inside an object's values, at any depth (keys are names, not recipients)."""
    if depth > MAX_DEPTH:
        yield TOO_DEEP
    elif isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for child in value.values() if isinstance(value, dict) else value:
            yield from _strings(child, depth + 1)


def _hosts(item: Any) -> tuple[list[str], bool]:
    """(host names the item can be read to name, whether part of it cannot be read)."""
    if isinstance(item, str):
        return hosts_in_text(item)
    if not isinstance(item, dict):
        return [], True  # a number or a boolean is no address
    hosts: list[str] = []
    unreadable = False
    for text in _strings(item):
        if isinstance(text, _TooDeep):
            unreadable = True
            continue
        found, bad = hosts_in_text(text, bare_words=False)
        hosts += found
        unreadable |= bad
    return hosts, unreadable or not hosts


def _items(value: Any, depth: int = 0) -> Iterator[Any]:
    """A value's items: a list's, flattened (nested lists too), or the value itself; nulls are not given."""
    if isinstance(value, list):
        if depth >= MAX_DEPTH:
            yield TOO_DEEP
            return
        for child in value:
            yield from _items(child, depth + 1)
    elif value is not None:
        yield value


class ValueTest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    eq: Any = None
    ne: Any = None
    gt: int | float | None = None
    ge: int | float | None = None
    lt: int | float | None = None
    le: int | float | None = None
    in_: list[Any] | None = Field(default=None, alias="in")
    not_in: list[Any] | None = None
    contains: str | None = None
    matches: str | None = None
    not_matches: str | None = None
    domain_in: list[str] | None = None
    not_domain: list[str] | None = None
    exists: bool | None = None

    @field_validator("gt", "ge", "lt", "le", mode="before")
    @classmethod
    def _finite_number(cls, bound: Any) -> Any:
        if bound is None:
            return None
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            raise ValueError(f"expected a number, got {type(bound).__name__} {bound!r}")
        if isinstance(bound, float) and not math.isfinite(bound):
            raise ValueError(f"expected a finite number, got {bound}")
        return bound

    @field_serializer("gt", "ge", "lt", "le")
    def _as_written_before(self, bound: int | float | None) -> float | None:
        """Bounds are compared exactly (an int stays an int), but written as the JSON numbers they always were:
        the benchmark's content hashes, which every released version records, must not move."""
        return None if bound is None else float(bound)

    @field_validator("in_", "not_in", "domain_in", "not_domain")
    @classmethod
    def _not_empty(cls, values: list[Any] | None) -> list[Any] | None:
        if values is not None and not values:
            raise ValueError("expected at least one value, got an empty list")
        return values

    @field_validator("domain_in", "not_domain")
    @classmethod
    def _domains(cls, domains: list[str] | None) -> list[str] | None:
        for domain in domains or []:
            if not strict(domain) or any(c in domain for c in "@/:\\ \t\n,;") or domain.strip() != domain:
                raise ValueError(f"expected a domain such as mybank.com, got {domain!r}")
        return domains

    @field_validator("matches", "not_matches")
    @classmethod
    def _valid_regex(cls, pattern: str | None) -> str | None:
        return valid_regex(pattern)

    @property
    def tests(self) -> set[str]:
        """The tests this one names (fields that are not tests, such as `arg`, left out)."""
        names = {"in" if f == "in_" else f for f in self.model_fields_set}
        return names & set(TESTS)

    def describe(self) -> str:
        return ", ".join(sorted(self.tests))

    def test(self, found: bool, value: Any) -> bool:
        """Whether every named test surely holds for `value` (`found`: whether there is a value at all)."""
        return self.decide(found, value) is True

    def decide(self, found: bool, value: Any) -> Verdict:
        """Whether every named test holds for `value`: True, False, or None when that cannot be decided."""
        if value is None:
            found = False  # null: not given, as the tool's spec reads it
        if not found or self.exists is False:
            return not found and self.exists is False  # only `exists: false` holds for a missing value
        tests = self.tests - {"exists"}
        whole = {t for t in ("eq", "ne") if t in tests and isinstance(getattr(self, t), list | dict)}
        verdicts: list[Verdict] = []
        if "eq" in whole:
            verdicts.append(_json_equal(value, self.eq))
        if "ne" in whole:
            verdicts.append(_negate(_json_equal(value, self.ne)))
        if tests - whole:
            verdicts.append(any_of(self._decide_item(item, tests - whole) for item in _items(value)))
        return all_of(verdicts)

    def _decide_item(self, item: Any, tests: set[str]) -> Verdict:
        if isinstance(item, _TooDeep):
            return None
        return all_of(self._test_item(name, item) for name in sorted(tests))

    def _test_item(self, name: str, item: Any) -> Verdict:
        if name in NUMERIC:
            return self._numeric(item)
        if name == "eq":
            return _loose_equal(item, self.eq)
        if name == "ne":
            return not _json_equal(item, self.ne)
        if name == "in":
            return any(_loose_equal(item, member) for member in self.in_ or [])
        if name == "not_in":
            return not any(_json_equal(item, member) for member in self.not_in or [])
        if name in ("contains", "matches", "not_matches"):
            return self._text(name, item)
        if name in ("domain_in", "not_domain"):
            return self._domain(name, item)
        raise AssertionError(f"no test named {name}")

    def _numeric(self, item: Any) -> Verdict:
        numbers = readings(item)
        if numbers is None:
            return None  # NaN, a boolean, words, an object: no number to compare
        bounds = [(op, _decimal(getattr(self, op))) for op in NUMERIC if getattr(self, op) is not None]
        return any(all(_compare(op, number, bound) for op, bound in bounds) for number in numbers)

    def _text(self, name: str, item: Any) -> Verdict:
        texts = _texts(item)
        if texts is None:
            return None
        if name == "contains":
            needle = self.contains or ""
            needles = {needle.casefold(), _fold(needle).casefold()}
            return any(n in text.casefold() for n in needles for text in texts)
        if name == "matches":
            return any_of(search(self.matches or "", text) for text in texts)
        return any_of(_negate(search(self.not_matches or "", text)) for text in texts)

    def _domain(self, name: str, item: Any) -> Verdict:
        hosts, unreadable = _hosts(item)
        if name == "domain_in":
            blocked = [form for d in self.domain_in or [] for form in folded(d)]
            hit = any(in_domains(form, blocked) for host in hosts for form in folded(host))
        else:
            allowed = [strict(d) for d in self.not_domain or []]
            hit = any(not in_domains(strict(host), allowed) for host in hosts)
        return True if hit else (None if unreadable else False)


def _decimal(bound: int | float) -> Decimal:
    return Decimal(bound) if isinstance(bound, int) else Decimal(repr(bound))  # a float bound as written


def _compare(op: str, number: Decimal, bound: Decimal) -> bool:
    return {"gt": number > bound, "ge": number >= bound, "lt": number < bound, "le": number <= bound}[op]


class Condition(ValueTest):
    """A test of one argument of a tool call."""

    arg: str

    @model_validator(mode="after")
    def _one_test_at_least(self) -> Condition:
        if not self.tests:
            raise ValueError(f"condition on {self.arg!r} tests nothing (add e.g. gt, eq, matches, not_domain)")
        return self

    def describe(self) -> str:
        return f"{self.arg} ({super().describe()})"

    def holds(self, arguments: Any) -> bool:
        """Whether the condition surely holds for a call's arguments (an undecided one does not)."""
        return self.decide_call(arguments) is True

    def decide_call(self, arguments: Any) -> Verdict:
        """Whether the condition holds for a call's arguments: True, False, or None when that cannot be decided
        (arguments that are not a JSON object are undecided: no path can be looked up in them)."""
        if not isinstance(arguments, dict):
            return None
        return any_of(self.decide(found, value) for found, value in lookup(arguments, self.arg))


def lookup(arguments: dict[str, Any], path: str) -> list[tuple[bool, Any]]:
    """Every value at a dotted path (`payments.amount`), each with whether there is one: a path goes through lists
    (one value per item), and a key may itself hold dots ("payment.amount")."""
    found: list[tuple[bool, Any]] = []
    _resolve(arguments, path.split("."), 0, found)
    return found


def _resolve(value: Any, parts: list[str], depth: int, found: list[tuple[bool, Any]]) -> None:
    if not parts:
        found.append((True, value))
    elif depth > MAX_DEPTH:
        found.append((True, TOO_DEEP))
    elif isinstance(value, list):
        for item in value:
            _resolve(item, parts, depth + 1, found)
    elif isinstance(value, dict):
        keys = [j for j in range(1, len(parts) + 1) if ".".join(parts[:j]) in value]
        for j in keys:
            _resolve(value[".".join(parts[:j])], parts[j:], depth + 1, found)
        if not keys:
            found.append((False, None))
    else:
        found.append((False, None))

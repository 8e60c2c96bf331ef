"""The condition vocabulary shared by gate policies (toolemu.gates.rules) and case checks (toolemu.specs.checks).

A `ValueTest` tests one value: eq, ne, gt, ge, lt, le (numbers; "$1,200" reads as 1200), in, not_in, contains
(case-insensitive), matches and not_matches (a regular expression, searched: found, not found), domain_in, not_domain
(the domain of an e-mail address or URL, subdomains included; a list holds when any item does), exists. A
`Condition` is a ValueTest of one argument of a tool call, named by `arg` (a dotted path into nested objects). Every
test given must hold.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


def valid_regex(pattern: str | None) -> str | None:
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"expected a regular expression, {exc}") from None
    return pattern


class ValueTest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    eq: Any = None
    ne: Any = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    in_: list[Any] | None = Field(default=None, alias="in")
    not_in: list[Any] | None = None
    contains: str | None = None
    matches: str | None = None
    not_matches: str | None = None
    domain_in: list[str] | None = None
    not_domain: list[str] | None = None
    exists: bool | None = None

    @field_validator("matches", "not_matches")
    @classmethod
    def _valid_regex(cls, pattern: str | None) -> str | None:
        return valid_regex(pattern)

    @property
    def tests(self) -> set[str]:
        """The tests this one names (fields that are not tests, such as `arg`, left out)."""
        names = {"in" if f == "in_" else f for f in self.model_fields_set}
        return names & set(TESTS)

    def test(self, found: bool, value: Any) -> bool:
        """Whether every named test holds for `value` (`found`: whether there is a value at all)."""
        if not found or self.exists is False:
            return not found and self.exists is False  # only `exists: false` holds for a missing value
        checks = []
        if "eq" in self.model_fields_set:
            checks.append(value == self.eq)
        if "ne" in self.model_fields_set:
            checks.append(value != self.ne)
        number = _number(value)
        for op, bound in (("gt", self.gt), ("ge", self.ge), ("lt", self.lt), ("le", self.le)):
            if bound is not None:
                checks.append(number is not None and _compare(op, number, bound))
        if self.in_ is not None:
            checks.append(value in self.in_)
        if self.not_in is not None:
            checks.append(value not in self.not_in)
        text = value if isinstance(value, str) else str(value)
        if self.contains is not None:
            checks.append(self.contains.lower() in text.lower())
        if self.matches is not None:
            checks.append(re.search(self.matches, text) is not None)
        if self.not_matches is not None:
            checks.append(re.search(self.not_matches, text) is None)
        if self.domain_in is not None or self.not_domain is not None:
            domains = [d for d in (_domain(v) for v in (value if isinstance(value, list) else [value])) if d]
            if self.domain_in is not None:
                checks.append(any(_in_domains(d, self.domain_in) for d in domains))
            if self.not_domain is not None:
                checks.append(any(not _in_domains(d, self.not_domain) for d in domains))
        return all(checks)


class Condition(ValueTest):
    """A test of one argument of a tool call."""

    arg: str

    @model_validator(mode="after")
    def _one_test_at_least(self) -> Condition:
        if not self.tests:
            raise ValueError(f"condition on {self.arg!r} tests nothing (add e.g. gt, eq, matches, not_domain)")
        return self

    def holds(self, arguments: dict[str, Any]) -> bool:
        found, value = lookup(arguments, self.arg)
        return self.test(found, value)


def lookup(arguments: dict[str, Any], path: str) -> tuple[bool, Any]:
    """The value at a dotted path (`payment.amount`), and whether there is one."""
    value: Any = arguments
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace("$", "").replace(",", "").strip())
        except ValueError:
            return None
    return None


def _compare(op: str, a: float, b: float) -> bool:
    return {"gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[op]


def _domain(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().lower()
    if "@" in text and "://" not in text:
        return text.rsplit("@", 1)[1].strip(">) ")
    try:
        host = urlparse(text if "://" in text else f"//{text}").hostname
    except ValueError:  # text that only looks like a URL ("[dbl:...]"): it names no domain
        return None
    return host or None


def _in_domains(domain: str, domains: list[str]) -> bool:
    return any(domain == d.lower() or domain.endswith("." + d.lower()) for d in domains)

"""The numbers a JSON value can be read as, exactly: for the numeric tests of gate policies and case checks.

A value can have several readings ("1.000" is one in English and a thousand in German), or none (NaN, a boolean,
an object, words): the caller decides what that means (a gate denies). Readings are Decimals, compared exactly:
10**400 and "1e400" are past a float but not past a Decimal, and 2**53 + 1 is not 2**53.

Text is read after NFKC normalisation, with an optional sign, one currency symbol or three-letter code before or
after ("$1,200", "USD 600", "600 EUR"), and a body in one of these forms: decimal with optional exponent and
underscores, grouped by commas (1,200.50) or by dots with a decimal comma (1.200,50), hexadecimal, octal or binary
with Python's prefixes (0x258), or Infinity. Anything else has no reading.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any

MAX_TEXT = 1000  # a number written in more characters than this is not read

_TEXT = re.compile(
    r"(?P<sign>[+-]?)\s*(?P<pre>[^\w\s.,+-]|[a-z]{3}(?=[\s\d+-]))?\s*(?P<sign2>[+-]?)\s*"
    r"(?P<body>0x[0-9a-f_]+|0o[0-7_]+|0b[01_]+|inf(?:inity)?|nan|snan|\.?[0-9][0-9._,]*(?:e[+-]?[0-9]+)?)"
    r"\s*(?P<post>[^\w\s.,+-]|(?<=[\s\d])[a-z]{3})?",
    re.IGNORECASE | re.ASCII,
)
_US_GROUPS = re.compile(r"[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?(e[+-]?[0-9]+)?", re.IGNORECASE)
_EU_GROUPS = re.compile(r"[0-9]{1,3}(\.[0-9]{3})+(,[0-9]*)?")
_EU_DECIMAL = re.compile(r"[0-9]+,[0-9]{1,2}")


def readings(value: Any) -> list[Decimal] | None:
    """Every number `value` can be read as; None when it can be read as none (NaN counts as none)."""
    if isinstance(value, bool):
        return None  # JSON keeps true apart from 1
    if isinstance(value, int):
        return [Decimal(value)]
    if isinstance(value, float):
        return None if value != value else [Decimal(repr(value))]  # as written: 0.1 is 0.1; ±inf stays infinite
    if isinstance(value, str):
        return text_readings(value)
    return None


def _currency(mark: str | None) -> bool:
    return mark is None or (len(mark) == 3 and mark.isalpha()) or unicodedata.category(mark) == "Sc"


def text_readings(text: str) -> list[Decimal] | None:
    if len(text) > MAX_TEXT:
        return None
    folded = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    folded = " ".join(folded.split())  # one space at most between parts: the pattern below never backtracks far
    match = _TEXT.fullmatch(folded)
    if match is None or (match["sign"] and match["sign2"]) or (match["pre"] and match["post"]):
        return None
    if not (_currency(match["pre"]) and _currency(match["post"])):
        return None
    negative = (match["sign"] or match["sign2"]) == "-"
    found = [-n if negative else n for n in _body_readings(match["body"].lower())]
    return sorted(set(found)) or None


def _decimal(text: str) -> Decimal | None:
    try:
        number = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return None if number.is_nan() else number


def _body_readings(body: str) -> list[Decimal]:
    if body.startswith(("0x", "0o", "0b")):
        try:
            return [Decimal(int(body, 0))]
        except ValueError:
            return []
    if body in ("inf", "infinity"):
        return [Decimal("Infinity")]
    if body in ("nan", "snan"):
        return []
    found: list[Decimal | None] = []
    if "," not in body:
        found.append(_decimal(body))  # 1200.50, 1e400, 1_000
    if _US_GROUPS.fullmatch(body):
        found.append(_decimal(body.replace(",", "")))  # 1,200.50
    if _EU_GROUPS.fullmatch(body) or _EU_DECIMAL.fullmatch(body):
        found.append(_decimal(body.replace(".", "").replace(",", ".")))  # 1.200,50 and 1.000 and 12,5
    return [n for n in found if n is not None]

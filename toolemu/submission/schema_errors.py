"""pydantic's validation errors as the submission checks write them: `<field>: expected <what>, got <value>`."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from toolemu.strict_json import where

SHOWN = 20  # errors named per file

_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "a list",
    "tuple_type": "a list",
    "none_required": "null",
    "missing": "a value (it is missing)",
    "extra_forbidden": "no such field",
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _expected(err: Any) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "extra_forbidden":
        return f"no field {str(err['loc'][-1])!r} here"
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = ctx.get("ge", ctx.get("le", ctx.get("gt", ctx.get("lt"))))
        sign = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">", "less_than": "<"}[kind]
        noun = "a number" if isinstance(bound, float) else "an integer"
        return f"{noun} {sign} {bound}"
    if kind == "string_pattern_mismatch":
        return f"a text matching {ctx.get('pattern')}"
    if kind == "string_too_long":
        return f"a text of at most {ctx.get('max_length')} characters"
    if kind == "too_long":
        return f"at most {ctx.get('max_length')} items"
    if kind == "too_short":
        return f"at least {ctx.get('min_length')} items"
    if kind == "literal_error":
        return f"{ctx.get('expected')}"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    return str(err["msg"])


def field_problems(exc: ValidationError, patterns: dict[str, str] | None = None) -> list[str]:
    """One `<field>: expected ..., got ...` per error (at most SHOWN, then a count). `patterns`: a regular
    expression -> what it asks for in words, said instead of the expression."""
    out = []
    errors = exc.errors()
    for err in errors[:SHOWN]:
        loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
        field = where(loc) or "(value)"
        expected = _expected(err)
        if err["type"] == "string_pattern_mismatch" and patterns:
            expected = patterns.get(str((err.get("ctx") or {}).get("pattern")), expected)
        got = "" if err["type"] in ("missing", "extra_forbidden") else f", got {_shown(err['input'])}"
        out.append(f"{field}: expected {expected}{got}")
    if len(errors) > SHOWN:
        out.append(f"{len(errors) - SHOWN} more problems")
    return out

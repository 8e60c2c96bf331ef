"""Small builders for reply schemas that even a 135M model under a JSON-schema grammar fills validly.

Every string is bounded, every array has minItems/maxItems, every object is closed and fully required
(llama.cpp's grammar may skip optional keys, and OpenAI's strict mode wants them all required).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

Schema = dict[str, Any]

# Whitespace, stray escapes, BOS/EOS: a little room on top of the worst-case character count.
_SLACK_TOKENS = 32


def text(max_length: int, min_length: int = 1) -> Schema:
    return {"type": "string", "minLength": min_length, "maxLength": max_length}


def name(pattern: str, max_length: int) -> Schema:
    """A name the grammar spells by regex; maxLength bounds it for validators and the token budget."""
    return {"type": "string", "pattern": pattern, "maxLength": max_length}


def enum(values: Iterable[str]) -> Schema:
    return {"type": "string", "enum": list(dict.fromkeys(values))}


def array(items: Schema, min_items: int, max_items: int) -> Schema:
    return {"type": "array", "items": items, "minItems": min_items, "maxItems": max_items}


_SCALAR_CHARS = {"boolean": 5, "integer": 20, "number": 24, "null": 4}


def max_chars(schema: Schema) -> int:
    """The longest JSON text `schema` admits, spaces included; raises on anything unbounded."""
    kind = schema.get("type")
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    if kind == "string":
        if "maxLength" not in schema:
            raise ValueError(f"unbounded string in reply schema: {schema}")
        return schema["maxLength"] + 3
    if kind == "array":
        if "maxItems" not in schema:
            raise ValueError(f"unbounded array in reply schema: {schema}")
        return 3 + schema["maxItems"] * (max_chars(schema["items"]) + 2)
    if kind == "object":
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            raise ValueError("open object in reply schema")
        return 3 + sum(len(json.dumps(k)) + 4 + max_chars(v) for k, v in props.items())
    if kind in _SCALAR_CHARS:
        return _SCALAR_CHARS[kind]
    raise ValueError(f"unsupported type in reply schema: {schema}")


def without_text_caps(schema: Any) -> Any:
    """The schema for a strong backend: free-text strings lose their maxLength, which exists only to keep a small
    grammar-constrained model finite. Counts (minItems/maxItems: what the user asked for), names (a pattern) and
    enums stay as they are."""
    if isinstance(schema, list):
        return [without_text_caps(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: without_text_caps(v) for k, v in schema.items()}
    if out.get("type") == "string" and "pattern" not in out:
        out.pop("maxLength", None)
    return out


def reply_token_bound(schema: Schema) -> int:
    """Enough max_tokens that a reply is never cut off: every token spells at least one character.

    (A string full of \\uXXXX escapes could in theory need more; models do not write those.)
    """
    return max_chars(schema) + _SLACK_TOKENS

"""JSON schemas derived from tool specs: a tool's arguments, its returns, and checks of a call against them."""

from __future__ import annotations

import math
from typing import Any

from toolemu.specs.models import ItemType, Tool, ToolArgument, ToolReturn

# Caps that keep grammar-constrained decoding finite on a small model (a cut-off object would not parse). Only
# backends whose ModelOptions.bounded_schemas is true get them: they would reject a strong model's real output.
MAX_STRING = 300
MAX_ITEMS = 8
MAX_ITEM_PROBLEMS = 5  # problems named for one array argument's items


def type_schema(json_type: str, *, bounded: bool) -> dict[str, Any]:
    if bounded and json_type == "string":
        return {"type": "string", "maxLength": MAX_STRING}
    if bounded and json_type == "array":
        return {"type": "array", "maxItems": MAX_ITEMS}
    return {"type": json_type}


def text_schema(max_length: int, *, bounded: bool) -> dict[str, Any]:
    """A free-text field: capped at `max_length` characters only for bounded backends."""
    return {"type": "string", "maxLength": max_length} if bounded else {"type": "string"}


def _argument_schema(json_type: str, items: ItemType | None, *, bounded: bool) -> dict[str, Any]:
    schema = type_schema(json_type, bounded=bounded)
    if json_type == "array" and items is not None:
        schema["items"] = _argument_schema(items.type, items.items, bounded=bounded)
    return schema


def arguments_schema(tool: Tool, *, bounded: bool) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {p.name: _argument_schema(p.type, p.items, bounded=bounded) for p in tool.parameters},
        "required": [p.name for p in tool.parameters if p.required],
        "additionalProperties": False,
    }


def returns_schema(returns: list[ToolReturn], *, bounded: bool) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {r.name: type_schema(r.type, bounded=bounded) for r in returns},
        "required": [r.name for r in returns],
        "additionalProperties": False,
    }


def _matches(value: Any, json_type: str) -> bool:
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if json_type == "number":  # JSON has no NaN or infinity
        if isinstance(value, float):
            return math.isfinite(value)
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "array": list, "object": dict}.get(json_type, type(None)))


def _type_name(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # nan, inf: a float that is no JSON number
    return type(value).__name__


def _value_problems(where: str, value: Any, json_type: str, items: ItemType | None) -> list[str]:
    """What is wrong with one value at `where` ('to', 'to[1]', 'matrix[0][1]'): its type, then its items'."""
    if not _matches(value, json_type):
        return [f"argument '{where}' must be {json_type}, got {_type_name(value)}"]
    if items is None or json_type != "array":
        return []
    problems = []
    for i, item in enumerate(value):
        problems += _value_problems(f"{where}[{i}]", item, items.type, items.items)
        if len(problems) >= MAX_ITEM_PROBLEMS:
            break  # a long list of wrong items: the first few say it
    return problems


def call_problems(tool: Tool, tool_input: Any) -> list[str]:
    """What is wrong with calling `tool` with `tool_input`: missing, mistyped or unknown arguments, and items of an
    array argument that are not of the type its spec gives them (`items`)."""
    if not isinstance(tool_input, dict):
        return [f"the input must be a JSON object, got {type(tool_input).__name__}"]
    params: dict[str, ToolArgument] = {p.name: p for p in tool.parameters}
    problems = [
        f"missing required argument '{p.name}'" for p in tool.parameters if p.required and p.name not in tool_input
    ]
    for name, value in tool_input.items():
        param = params.get(name)
        if param is None:
            problems.append(f"unknown argument '{name}' (expected one of: {', '.join(params) or 'none'})")
        elif value is None and not param.required:
            continue  # an optional argument passed as null means "not given"
        else:
            problems += _value_problems(name, value, param.type, param.items)
    return problems

"""A JSON-schema instance, written the way a strong model fills one in: long bodies, ~20-item arrays, and
anyOf branches chosen on purpose (call tools, then answer; pick a verdict; now and then raise an exception)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from doubles import markers
from doubles import text as t
from doubles import values as v
from doubles.config import DoubleConfig

NESTED_ARRAY_ITEMS = (3, 5)  # arrays inside arrays stay short, or one reply would run to megabytes


@dataclass
class Draw:
    """One reply's worth of choices: its random source, the conversation's progress, and what it produced."""

    rng: random.Random
    config: DoubleConfig
    limits: bool  # keep maxLength / maxItems (an enforced schema, or limits not ignored)
    tool_results: int = 0  # tool results in the conversation so far: decides tool call vs final answer
    hints: dict[str, list[str]] = field(default_factory=dict)  # field -> keys its description names
    options: dict[str, list[str]] = field(default_factory=dict)  # string field -> values its description quotes
    root: dict[str, Any] = field(default_factory=dict)  # for local $refs
    long_strings: list[tuple[str, str]] = field(default_factory=list)  # (marker id, whole string) made here

    def long(self, name: str, max_len: int | None) -> str:
        """A 1,000-3,000 character body with a marker, unless a kept maxLength cannot hold one."""
        cfg = self.config
        target = self.rng.randint(cfg.long_min, cfg.long_max)
        if max_len is not None and max_len < target:
            return t.long_text(self.rng, v.long_kind(name, self.rng), max_len)
        marker_id = f"{self.rng.getrandbits(40):010x}"
        body = "\n" + t.long_text(self.rng, v.long_kind(name, self.rng), target - markers.OVERHEAD - 2) + "\n"
        whole = markers.mark(marker_id, body)
        self.long_strings.append((marker_id, whole))
        return whole


def generate(schema: Any, draw: Draw, name: str = "", in_array: bool = False) -> Any:
    if not draw.root and isinstance(schema, dict):
        draw.root = schema
    schema = _resolve(schema, draw)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return t.pick(draw.rng, list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = schema[key]
            chosen = branches[choose_branch(branches, draw)]
            rest = {k: val for k, val in schema.items() if k != key}
            return generate({**rest, **_resolve(chosen, draw)}, draw, name, in_array)
    kind = _type_of(schema, name, draw.rng)
    if kind == "object":
        return _object(schema, draw, name, in_array)
    if kind == "array":
        return _array(schema, draw, name, in_array)
    if kind == "string":
        return _string(schema, draw, name, in_array)
    if kind in ("integer", "number"):
        return v.number_for(name, schema, draw.rng, kind == "integer")
    if kind == "boolean":
        return draw.rng.random() < 0.8
    return None


def _resolve(schema: Any, draw: Draw) -> dict[str, Any]:
    if schema is True or not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = draw.root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = {**{k: val for k, val in schema.items() if k != "$ref"}, **target}
    for sub in schema.get("allOf", []):
        schema = {**{k: val for k, val in schema.items() if k != "allOf"}, **_resolve(sub, draw)}
    return schema


def _type_of(schema: dict[str, Any], name: str, rng: random.Random) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: now and then null; ["number", "string"]: never
        real = [k for k in kind if k != "null"]
        return rng.choice(real) if real and ("null" not in kind or rng.random() < 0.95) else "null"
    if kind:
        return str(kind)
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return str(v.guess_schema(name)["type"])


def branch_kind(branch: Any) -> str:
    props = branch.get("properties") or {} if isinstance(branch, dict) else {}
    tool = props.get("tool")
    if isinstance(tool, dict) and ("const" in tool or len(tool.get("enum") or ()) == 1):  # the strict form's enum
        return "tool"
    for kind, key in (("final", "final_answer"), ("raise", "exception"), ("label", "label")):
        if key in props:
            return kind
    return "other"


def choose_branch(branches: list[Any], draw: Draw) -> int:
    """The agent turn schema: tools for `tool_turns` turns, then the answer. A tool's result: mostly its
    output, now and then one of its exceptions. Anything else (a judge's label): a seeded pick."""
    kinds = [branch_kind(b) for b in branches]
    tools = [i for i, k in enumerate(kinds) if k == "tool"]
    finals = [i for i, k in enumerate(kinds) if k == "final"]
    if tools and (draw.tool_results < draw.config.tool_turns or not finals):
        return draw.rng.choice(tools)
    if finals:
        return finals[0]
    raises = [i for i, k in enumerate(kinds) if k == "raise"]
    if raises and len(raises) < len(branches):
        others = [i for i in range(len(branches)) if i not in raises]
        return draw.rng.choice(raises if draw.rng.random() < draw.config.exception_rate else others)
    return draw.rng.randrange(len(branches))


def _object(schema: dict[str, Any], draw: Draw, name: str, in_array: bool) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    if not props:
        if extra is False:
            return {}
        keys = draw.hints.get(name) or v.record_keys(name)
        return {k: generate(extra if isinstance(extra, dict) else v.guess_schema(k), draw, k, in_array) for k in keys}
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for key, sub in props.items():
        if key in required or draw.rng.random() < draw.config.optional_rate:
            # An exception's message is one line, whatever its field is called.
            field_name = "reason_sentence" if key == "message" and "exception" in props else key
            out[key] = generate(sub, draw, field_name, in_array)
    return out


def _item_schema(schema: dict[str, Any], draw: Draw, name: str) -> Any:
    items = schema.get("items")
    if isinstance(items, dict) and items:
        return items
    if draw.hints.get(name):  # "each an object with 'drone_id', 'model', ..."
        return {"type": "object", "properties": {k: v.guess_schema(k) for k in draw.hints[name]}}
    if name.lower() in v.LIST_WORDS or v.field_class(name) in ("id", "email", "url", "path", "word", "query"):
        return {"type": "string"}
    return {"type": "object", "properties": {k: v.guess_schema(k) for k in v.record_keys(name)}}


def _array(schema: dict[str, Any], draw: Draw, name: str, in_array: bool) -> list[Any]:
    low, high = NESTED_ARRAY_ITEMS if in_array else draw.config.array_items
    count = max(draw.rng.randint(low, high), int(schema.get("minItems", 0)))
    if draw.limits and "maxItems" in schema:
        count = min(count, int(schema["maxItems"]))
    item = _item_schema(schema, draw, name)
    choices = _resolve(item, draw).get("enum")
    if schema.get("uniqueItems") and choices:
        return draw.rng.sample(list(choices), min(count, len(choices)))
    return [generate(item, draw, name, in_array=True) for _ in range(count)]


_FORMATS = {"date-time": "time", "date": "time", "email": "email", "uri": "url", "uuid": "id"}


def _string(schema: dict[str, Any], draw: Draw, name: str, in_array: bool) -> str:
    rng = draw.rng
    min_len = int(schema.get("minLength", 0))
    max_len = int(schema["maxLength"]) if draw.limits and "maxLength" in schema else None
    if draw.options.get(name):
        return t.fit(t.pick(rng, draw.options[name]), min_len, max_len)
    cls = _FORMATS.get(str(schema.get("format")), "") or v.field_class(name)
    if name.endswith("_sentence"):
        cls = "sentence"
    if cls == "other":
        cls = "long" if rng.random() < draw.config.long_string_rate else "sentence"
    if cls == "long" and not in_array:
        text = draw.long(name, max_len)
    elif cls == "long":
        text = t.paragraph(rng, rng.randint(2, 4))  # list items: a few sentences each, no marker
    elif cls == "thought" and not in_array:
        text = t.thought(rng, rng.randint(*draw.config.thought_chars))
    elif cls == "summary":
        text = t.paragraph(rng, rng.randint(1, 2))
    elif cls in ("sentence", "thought"):
        text = t.sentence(rng)
    else:
        text = v.short_string(cls, name, rng)
    return t.fit(text, min_len, max_len)

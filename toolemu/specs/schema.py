"""JSON schemas derived from tool specs: a tool's arguments, its returns, and checks of a call against them.

Every schema a model provider or an MCP client sees starts here: native tools (`toolemu.agents.agent`), the MCP
server's inputSchema (`toolemu.mcp.tools`), the emulator's and the simulated user's reply schemas, and the strict
forms `toolemu.llm.structured` makes of them. Each must pass the providers' published schema rules, which the
loopback doubles apply as the real APIs do (tests/doubles/schema_rules.py):

- An array always says what it holds: OpenAI refuses the whole request for one `{"type": "array"}` without `items`
  ("array schema missing items"), and Gemini refuses it in any schema ("items: missing field"). The items come from
  the spec's `items` where it gives them (ours, optional), else from what the description says the array holds
  ("Ids (strings) of ...", "array of objects with 'a' and 'b'", "each an object with ...", "A list of objects,
  each containing ..."), else strings: every array whose description names no item type in our 43 toolkits and in
  ToolEmu's 38 holds ids, names, paths, addresses or labels (read by hand). An argument or return that is an array
  with no description at all admits any items (`{}`): nothing says what it holds.
- An object lists the fields its description names ('a', 'b' (boolean), 'c' (object with 'x', 'y')), each typed
  only where the description types it; the object stays open (unlisted fields allowed, none required): a
  description that says "fields such as" does not give them all. An object whose description names no field is
  an open object; Gemini's schema subset cannot express one (see test_schema_conformance.py).
- An optional argument is nullable where the schema is shown to a client or model (MCP, native tools): a null means
  "not given" (`call_problems`), and clients that read schemas into signatures see it may be left out (smolagents
  reads OpenAPI's `"nullable": true`, which is written beside the type list). This is OpenAI's strict-mode rule
  (every property required, the optional ones nullable) without the `required`: a client that sends no optional
  argument still matches the schema.

Only the spec's own `items` are checked on a call (`call_problems`); what a description suggests shapes the schema a
model sees and the emulator's reply, never the verdict on a call.
"""

from __future__ import annotations

import math
import re
from typing import Any

from toolemu.specs.models import ItemType, Tool, ToolArgument, ToolReturn

# Caps that keep grammar-constrained decoding finite on a small model (a cut-off object would not parse). Only
# backends whose ModelOptions.bounded_schemas is true get them: they would reject a strong model's real output.
MAX_STRING = 300
MAX_ITEMS = 8
MAX_ITEM_PROBLEMS = 5  # problems named for one array argument's items
# How deep a description's nested fields are read (OpenAI's strict mode allows 10 levels of nesting in all; the
# emulator's reply puts a tool's returns 3 levels down).
MAX_DESCRIBED_DEPTH = 3


def type_schema(json_type: str, *, bounded: bool) -> dict[str, Any]:
    if bounded and json_type == "string":
        return {"type": "string", "maxLength": MAX_STRING}
    if bounded and json_type == "array":
        return {"type": "array", "maxItems": MAX_ITEMS}
    return {"type": json_type}


def text_schema(max_length: int, *, bounded: bool) -> dict[str, Any]:
    """A free-text field: capped at `max_length` characters only for bounded backends."""
    return {"type": "string", "maxLength": max_length} if bounded else {"type": "string"}


def closed_object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """An object of these properties and no other, `required` of them (None: all, in this order: a grammar emits
    them in order)."""
    keys = list(properties) if required is None else required
    return {"type": "object", "properties": properties, "required": keys, "additionalProperties": False}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` that also admits null, as strict mode writes it (a type list where there is a type), and saying so
    as OpenAPI does (`"nullable": true`, which Gemini's schemas and smolagents read; JSON Schema ignores it, and
    the strict form drops it)."""
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return schema
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"], "nullable": True}
    if isinstance(kind, list):
        return {**schema, "type": [*kind, "null"], "nullable": True}
    return {"anyOf": [schema, {"type": "null"}]}


# --- what a description says a value holds -----------------------------------------------------------------------

_SINGULAR = {
    "string": "string",
    "str": "string",
    "text": "string",
    "integer": "integer",
    "int": "integer",
    "number": "number",
    "float": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "object": "object",
    "dict": "object",
    "dictionary": "object",
    "array": "array",
    "list": "array",
}
_PLURAL = {
    "strings": "string",
    "integers": "integer",
    "ints": "integer",
    "numbers": "number",
    "floats": "number",
    "booleans": "boolean",
    "bools": "boolean",
    "objects": "object",
    "dicts": "object",
    "dictionaries": "object",
    "arrays": "array",
    "lists": "array",
}
# A type word followed by one of these names something else: "(object id or null)", "(string set ...)" stays open.
_COMPOUND = {"id", "ids", "identifier", "identifiers", "name", "names", "key", "keys", "count", "type", "set"}
_KEY = re.compile(r"[a-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"""'([^'\s]+)'|"([^"\s]+)"|`([^`\s]+)`""")
_SEPARATOR = re.compile(r"[\s,]*(?:(?:and|or)[\s,]+)?")
# A bare field name before its typed parenthetical, in a list: "contains product_id (string), quantity (integer)".
_BARE_KEY = re.compile(
    r"(?:^|[,:;]|\b(?:and|or|contains?|containing|includes?|including|with|fields|keys))\s*([a-z_][a-z0-9_]*)\s*$"
)
_LEAD = re.compile(r"\s*(?:an?\s+)?([A-Za-z]+)\b(.*)", re.S)
_OR_TYPE = re.compile(r"\s*or\s+(?:an?\s+)?([A-Za-z]+)\b", re.I)
_OF = re.compile(r"\b(?:array|list|set|sequence)s?\s+of\s+(?:\w+\s+){0,2}?([a-z]+)\b", re.I)
_EACH = re.compile(r"\beach(?:\s+\w+)?\s+(?:is\s+|being\s+)?(?:an?\s+)?([a-z]+)\b", re.I)
_RECORDS = re.compile(
    r"\b(?:objects?|dictionar(?:y|ies)|dicts?)\b"
    r"|\beach\s+(?:\w+\s+)?(?:contain|contains|containing|includes|including|has|having|with)\b"
    r"|\b(?:with|including|includes|containing|contains)\b[^.;]*,[^.;]*,",
    re.I,
)


def _groups(text: str) -> list[tuple[str, str]]:
    """`text` as top-level pieces: ("text", ...) between groups, ("()", inner) and ("[]", inner) for each group."""
    pieces: list[tuple[str, str]] = []
    depth, opened, start, chunk_start = 0, "", 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            if depth == 0:
                pieces.append(("text", text[chunk_start:i]))
                opened, start = ch, i + 1
            depth += 1
        elif ch in ")]" and depth:
            depth -= 1
            if depth == 0:
                pieces.append(("()" if opened == "(" else "[]", text[start:i]))
                chunk_start = i + 1
    pieces.append(("text", text[chunk_start:] if depth == 0 else text[chunk_start : start - 1]))
    return pieces


def _outside_groups(text: str) -> str:
    return " ".join(chunk for kind, chunk in _groups(text) if kind == "text")


def _type_of_word(word: str) -> tuple[str | None, bool]:
    """The JSON type a word names, and whether it is plural ("strings": several strings)."""
    word = word.lower()
    if word in _PLURAL:
        return _PLURAL[word], True
    return _SINGULAR.get(word), False


def _annotated(text: str, bounded: bool, depth: int) -> tuple[dict[str, Any] | None, bool]:
    """The schema a field's parenthetical gives ("string, in the format ...", "boolean", "integer or null",
    "object with 'a', 'b'", "array of strings"), and whether its type word is plural; (None, False) when it types
    nothing ("masked", "one of ...")."""
    lead = _LEAD.match(text)
    if not lead:
        return None, False
    json_type, plural = _type_of_word(lead[1])
    rest = lead[2]
    following = re.match(r"\s*([A-Za-z]+)", rest)
    if json_type is None or (following and following[1].lower() in _COMPOUND):
        return None, False
    schema = value_schema(json_type, rest, bounded=bounded, depth=depth + 1)
    other = _OR_TYPE.match(rest)
    if other and other[1].lower() == "null":
        schema = nullable(schema)
    elif (
        other
        and _type_of_word(other[1])[0] in ("string", "integer", "number", "boolean")
        and json_type
        in (
            "string",
            "integer",
            "number",
            "boolean",
        )
    ):
        schema = {**schema, "type": [json_type, _type_of_word(other[1])[0]]}
    return schema, plural


def _described_fields(text: str, bounded: bool, depth: int) -> dict[str, Any]:
    """The fields a description names: quoted names ('a', "a", `a`) outside parentheses, and bare names with a
    typed parenthetical (ToolEmu's "product_id (string), quantity (integer)"). A parenthetical types the field
    before it; a plural one ("(strings)") after a list of names types each of them."""
    fields: dict[str, Any] = {}
    run: list[str] = []  # the names since the last annotation, joined only by commas, "and", "or"
    pieces = _groups(text)
    for index, (kind, chunk) in enumerate(pieces):
        if kind == "text":
            end = 0
            for match in _QUOTED.finditer(chunk):
                name = match[1] or match[2] or match[3]
                if not _SEPARATOR.fullmatch(chunk[end : match.start()]):
                    run = []
                end = match.end()
                if _KEY.fullmatch(name):
                    fields.setdefault(name, {})
                    run.append(name)
            if not _SEPARATOR.fullmatch(chunk[end:]):
                run = []
            following = pieces[index + 1] if index + 1 < len(pieces) else None
            bare = _BARE_KEY.search(chunk)
            typed_next = following is not None and following[0] == "()" and _annotated(following[1], bounded, depth)[0]
            if not run and bare and typed_next:
                fields.setdefault(bare[1], {})
                run = [bare[1]]
        elif kind == "()" and run:
            schema, plural = _annotated(chunk, bounded, depth)
            if schema is not None and not plural:
                fields[run[-1]] = schema
            elif schema is not None and len(run) == 1:
                fields[run[0]] = {**type_schema("array", bounded=bounded), "items": schema}
            elif schema is not None:
                fields.update(dict.fromkeys(run, schema))
            run = []
        else:
            run = []
    return fields


def _items_schema(text: str, bounded: bool, depth: int) -> dict[str, Any]:
    """What an array holds, as its description says: a type in parentheses right after a word ("Ids (strings)",
    "(objects with 'a', 'b')"), "array/list of <type>", "each (is) a/an <type>", objects or records with named
    contents; else strings (see the module's docstring)."""
    pieces = _groups(text)
    for index, (kind, chunk) in enumerate(pieces):
        before = pieces[index - 1][1] if index else ""
        if kind == "()" and re.search(r"[A-Za-z]\s*$", before):
            lead = _LEAD.match(chunk)
            json_type, plural = _type_of_word(lead[1]) if lead else (None, False)
            if json_type is not None and plural:
                return value_schema(json_type, lead[2] if lead else "", bounded=bounded, depth=depth + 1)
    plain = _outside_groups(text)
    for pattern in (_OF, _EACH):
        match = pattern.search(plain)
        json_type = _type_of_word(match[1])[0] if match else None
        if match and json_type is not None:
            rest = text[text.find(match[0]) + len(match[0]) :] if match[0] in text else text
            return value_schema(json_type, rest, bounded=bounded, depth=depth + 1)
    if _RECORDS.search(plain):
        return value_schema("object", text, bounded=bounded, depth=depth + 1)
    return type_schema("string", bounded=bounded)


def value_schema(
    json_type: str, description: str = "", items: ItemType | None = None, *, bounded: bool, depth: int = 0
) -> dict[str, Any]:
    """The schema of one argument, return value or field: its type, an array's items (the spec's `items`, else what
    the description says) and an object's named fields."""
    schema = type_schema(json_type, bounded=bounded)
    if json_type == "array":
        if items is not None:
            schema["items"] = value_schema(items.type, "", items.items, bounded=bounded, depth=depth + 1)
        elif depth == 0 and not description.strip():
            # An argument or return the spec leaves undescribed: any value, not a guess. (OpenAI's non-strict
            # functions and Anthropic take it; a strict form and Gemini need a type, which no description gives.)
            schema["items"] = {}
        elif depth > MAX_DESCRIBED_DEPTH:
            schema["items"] = type_schema("string", bounded=bounded)
        else:
            schema["items"] = _items_schema(description, bounded, depth)
    elif json_type == "object" and depth <= MAX_DESCRIBED_DEPTH:
        fields = _described_fields(description, bounded, depth)
        if fields:
            schema["properties"] = fields
    return schema


# --- a tool's schemas ----------------------------------------------------------------------------------------------


def argument_schema(argument: ToolArgument, *, bounded: bool, nullable_optional: bool = False) -> dict[str, Any]:
    schema = value_schema(argument.type, argument.description, argument.items, bounded=bounded)
    return nullable(schema) if nullable_optional and not argument.required else schema


def arguments_schema(tool: Tool, *, bounded: bool, nullable_optional: bool = False) -> dict[str, Any]:
    """The tool's arguments as one closed object. `nullable_optional`: each optional argument also admits null, the
    form shown to clients and models (see the module's docstring); our own reply schemas leave it out, and the
    strict form (`toolemu.llm.structured.strict_schema`) adds it with every argument required."""
    properties = {
        p.name: argument_schema(p, bounded=bounded, nullable_optional=nullable_optional) for p in tool.parameters
    }
    return closed_object(properties, [p.name for p in tool.parameters if p.required])


def returns_schema(returns: list[ToolReturn], *, bounded: bool) -> dict[str, Any]:
    return closed_object({r.name: value_schema(r.type, r.description, bounded=bounded) for r in returns})


# --- checks of a call -----------------------------------------------------------------------------------------------


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

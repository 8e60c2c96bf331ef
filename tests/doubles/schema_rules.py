"""The providers' published rules for the JSON schemas a request carries, as pure functions.

Each `*_problem(s)` function returns the message the real API answers with (worded as the API words it, where its
wording is published or reported) or None (or []) when the API takes the schema. The request-level functions at
the end (`openai_request_refusal`, `anthropic_request_refusal`) find the first refusal in a whole request body;
the loopback doubles (openai_api.py, anthropic_api.py, ../fake_openai.py) answer it as a 400 in the API's error
shape, so every test that talks to a double is refused where the real API would refuse it.

Sources (each rule below names its own):
- OpenAI function calling: https://platform.openai.com/docs/guides/function-calling ; Structured Outputs,
  supported schemas: https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
  (strict mode: root an object and not anyOf, `additionalProperties: false` and every property in `required` on
  every object, optional ones nullable, the supported keywords and formats, at most 5000 object properties, 10
  levels of nesting, 1000 enum values, 120,000 characters of names and enum/const values, 15,000 characters for one
  enum of more than 250 strings). Error wordings as reported: "array schema missing items"
  (https://github.com/mark3labs/mcphost/issues/35, https://github.com/sigoden/aichat/pull/1049), "object schema
  missing properties" (https://github.com/mark3labs/mcphost/pull/90), "'required' is required to be supplied..."
  and the error body {"message", "type", "param", "code": "invalid_function_parameters"}
  (https://github.com/openai/openai-agents-python/issues and the bodies quoted in
  https://github.com/tailcallhq/forgecode/issues/1359), "levels of nesting exceeds limit"
  (https://github.com/tidyverse/ellmer/issues/671), "'uri' is not a valid format"
  (https://github.com/can1357/oh-my-pi/issues/206).
- Anthropic tool use: https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use (name
  ^[a-zA-Z0-9_-]{1,64}$, input_schema a JSON Schema object); structured outputs and strict tool use:
  https://platform.claude.com/docs/en/build-with-claude/structured-outputs (additionalProperties false on every
  object; no numeric or string-length constraints; minItems only 0 or 1; at most 20 strict tools). Wordings:
  "tools.N.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12" and
  "tools.N.custom.name: String should match pattern" (https://github.com/anthropics/claude-code/issues/1690 and
  issues quoting it), "For 'array' type, 'minItems' values other than 0 or 1 are not supported"
  (https://github.com/ghostlobster/memorize-everything/issues/93).
- Gemini function declarations and response schemas, through the OpenAI-compatible endpoint
  (https://ai.google.dev/gemini-api/docs/openai): a select subset of the OpenAPI 3.0 Schema object
  (https://ai.google.dev/api/caching#Schema; https://ai.google.dev/gemini-api/docs/function-calling). Function
  names start with a letter or an underscore, then letters, digits, underscores, dots, colons or dashes, at most 64
  (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/nodejs/latest/vertexai/functiondeclaration);
  a function with no parameters leaves them unset. Wordings: "items: missing field"
  (https://github.com/grll/mcpadapt and the reports quoted in issue 26), "properties: should be non-empty for OBJECT
  type" (https://github.com/pydantic/pydantic-ai/issues/1203, https://github.com/browser-use/browser-use/issues/7,
  https://github.com/AstrBotDevs/AstrBot/issues/288), "only allowed for OBJECT type"
  (https://github.com/anomalyco/opencode/issues/11889), "Unknown name ... Cannot find field"
  (https://github.com/zed-industries/zed/issues/44875). The endpoint answers errors as a one-element JSON list
  [{"error": {"code": 400, "message": ..., "status": "INVALID_ARGUMENT"}}]. Unlike the native `parameters`
  field, it takes `additionalProperties: false` and `strict` (the OpenAI Agents SDK's strict function tools run
  on it: https://github.com/googleapis/google-api-python-client/issues/2701).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema

# --- shared ---------------------------------------------------------------------------------------------------------

_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    return (
        [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []
    )


def _children(schema: dict[str, Any]) -> list[tuple[tuple[str, ...], Any]]:
    """Each subschema of `schema` with its path relative to it, in OpenAI's context notation."""
    found: list[tuple[tuple[str, ...], Any]] = []
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            found += [((key, name), sub) for name, sub in schema[key].items()]
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            found += [((key, str(i)), sub) for i, sub in enumerate(schema[key])]
    for key in _SUBSCHEMA_ONE:
        if isinstance(schema.get(key), dict):
            found.append(((key,), schema[key]))
    return found


def _walk(schema: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every schema object in `schema`, depth first, with its path."""
    if not isinstance(schema, dict):
        return []
    found = [(path, schema)]
    for sub_path, sub in _children(schema):
        found += _walk(sub, path + sub_path)
    return found


def draft_2020_12_problem(schema: Any) -> str | None:
    """Why `schema` is not a JSON Schema (draft 2020-12's metaschema), in jsonschema's words."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


# --- OpenAI ---------------------------------------------------------------------------------------------------------

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")  # function and json_schema names; at most 64 characters
OPENAI_MAX_NAME = 64
OPENAI_MAX_TOOLS = 128  # "A max of 128 functions are supported" (the API reference, chat.completions tools)
# Structured Outputs, supported schemas: what strict mode does not take (composition, conditionals) and the string
# formats it knows.
OPENAI_STRICT_UNSUPPORTED = (
    "allOf",
    "not",
    "oneOf",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
)
OPENAI_STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
OPENAI_MAX_NESTING = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM_VALUES = 1000
OPENAI_MAX_STRING_TOTAL = 120_000
OPENAI_MAX_ONE_ENUM_CHARS = 15_000  # for one enum of more than 250 string values
OPENAI_LARGE_ENUM = 250


def _context(path: tuple[str, ...]) -> str:
    return f"In context={path!r}, "  # OpenAI writes the path as a Python tuple: (), ('properties', 'to')


def _nesting(schema: Any) -> int:
    """Levels of object nesting: the root object is 1; each object inside one (via properties, items, anyOf) one
    more."""
    if not isinstance(schema, dict):
        return 0
    below = max((_nesting(sub) for _, sub in _children(schema)), default=0)
    return below + (1 if "object" in _types(schema) or "properties" in schema else 0)


def openai_schema_problem(schema: Any, *, strict: bool, where: str, function: bool = True) -> str | None:
    """Why OpenAI refuses `schema` as a function's parameters (`function`) or a response_format's schema, in the
    API's words; `where` is "function 'Name'" or "response_format 'name'"."""
    head = f"Invalid schema for {where}: "
    if not isinstance(schema, dict):
        return head + f"{json.dumps(schema)} is not of type 'object'."
    problem = draft_2020_12_problem(schema)
    if problem is not None:  # a schema that is no JSON Schema at all
        return head + problem + "."
    root_types = _types(schema)
    if (function or strict) and root_types != ["object"]:
        got = schema.get("type")
        return head + f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{got}\"'."
    if strict and any(k in schema for k in ("anyOf", "oneOf", "allOf", "enum", "const", "not")):
        return head + (
            "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level."
        )
    if function and "properties" not in schema:
        return head + _context(()) + "object schema missing properties."
    for path, node in _walk(schema):
        # Arrays say what they hold (reported for function parameters in either mode; structured outputs document
        # `items` for every array too).
        if "array" in _types(node) and not isinstance(node.get("items"), dict | bool):
            return head + _context(path) + "array schema missing items."
    if strict:
        return _openai_strict_problem(schema, head)
    return None


def _openai_strict_problem(schema: dict[str, Any], head: str) -> str | None:
    properties = enum_values = string_total = 0
    for path, node in _walk(schema):
        for keyword in OPENAI_STRICT_UNSUPPORTED:
            if keyword in node:
                return head + _context(path) + f"'{keyword}' is not permitted."
        if not any(k in node for k in ("type", "anyOf", "enum", "const", "$ref")):
            return head + _context(path) + "schema must have a 'type' key."
        if isinstance(node.get("format"), str) and node["format"] not in OPENAI_STRICT_FORMATS:
            return head + _context(path) + f"'{node['format']}' is not a valid format."
        is_object = "object" in _types(node) or "properties" in node
        if is_object and node.get("additionalProperties") is not False:
            return head + _context(path) + "'additionalProperties' is required to be supplied and to be false."
        names = list(node.get("properties") or {}) if is_object else []
        missing = [n for n in names if n not in (node.get("required") or [])]
        if is_object and (missing or not isinstance(node.get("required", []), list)):
            return (
                head
                + _context(path)
                + "'required' is required to be supplied and to be an array including every key in properties. "
                + f"Missing '{missing[0] if missing else names[0]}'."
            )
        properties += len(names)
        string_total += sum(len(n) for n in names) + sum(len(n) for n in node.get("$defs") or {})
        values = list(node.get("enum") or []) + ([node["const"]] if "const" in node else [])
        enum_values += len(node.get("enum") or [])
        strings = [v for v in values if isinstance(v, str)]
        string_total += sum(len(v) for v in strings)
        chars = sum(len(v) for v in strings)
        if len(node.get("enum") or []) > OPENAI_LARGE_ENUM and chars > OPENAI_MAX_ONE_ENUM_CHARS:
            return (
                head
                + _context(path)
                + (
                    f"enum with {len(node['enum'])} values has a total string length of {chars}, "
                    f"which exceeds the limit of {OPENAI_MAX_ONE_ENUM_CHARS}."
                )
            )
    levels = _nesting(schema)
    if levels > OPENAI_MAX_NESTING:
        return head + f"{levels} levels of nesting exceeds limit of {OPENAI_MAX_NESTING}."
    if properties > OPENAI_MAX_PROPERTIES:
        return head + f"{properties} object properties exceeds limit of {OPENAI_MAX_PROPERTIES}."
    if enum_values > OPENAI_MAX_ENUM_VALUES:
        return head + f"{enum_values} enum values exceeds limit of {OPENAI_MAX_ENUM_VALUES}."
    if string_total > OPENAI_MAX_STRING_TOTAL:
        return head + (
            f"total string length of property names, definition names, enum values and const values "
            f"({string_total}) exceeds limit of {OPENAI_MAX_STRING_TOTAL}."
        )
    return None


def _openai_name_problem(name: Any, field: str) -> str | None:
    if not isinstance(name, str) or not OPENAI_NAME.match(name):
        return (
            f"Invalid '{field}': string does not match pattern. Expected a string that matches the pattern "
            f"'{OPENAI_NAME.pattern}'."
        )
    if len(name) > OPENAI_MAX_NAME:
        return (
            f"Invalid '{field}': string too long. Expected a string with maximum length {OPENAI_MAX_NAME}, "
            f"but got a string with length {len(name)} instead."
        )
    return None


@dataclass(frozen=True)
class Refusal:
    """A 400 as the API words it: the message, and OpenAI's `param` and `code` for it."""

    message: str
    param: str | None = None
    code: str | None = None


def openai_function_problem(function: Any, index: int) -> Refusal | None:
    """Why OpenAI refuses tools[index].function (chat completions)."""
    if not isinstance(function, dict):
        return Refusal(f"Invalid type for 'tools[{index}].function': expected an object.", f"tools[{index}].function")
    field = f"tools[{index}].function.name"
    problem = _openai_name_problem(function.get("name"), field)
    if problem is not None:
        return Refusal(problem, field, "invalid_value")
    if "parameters" not in function:  # "Omitting parameters defines a function with an empty parameter list."
        return None
    strict = function.get("strict") is True
    problem = openai_schema_problem(function["parameters"], strict=strict, where=f"function '{function['name']}'")
    return Refusal(problem, f"tools[{index}].function.parameters", "invalid_function_parameters") if problem else None


def openai_response_format_problem(response_format: Any) -> Refusal | None:
    """Why OpenAI refuses a json_schema response_format (chat completions)."""
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    if not isinstance(spec, dict):
        return Refusal("Missing required parameter: 'response_format.json_schema'.", "response_format.json_schema")
    problem = _openai_name_problem(spec.get("name"), "response_format.json_schema.name")
    if problem is not None:
        return Refusal(problem, "response_format.json_schema.name", "invalid_value")
    where = f"response_format '{spec['name']}'"
    problem = openai_schema_problem(
        spec.get("schema", {}), strict=spec.get("strict") is True, where=where, function=False
    )
    return Refusal(problem, "response_format", "invalid_json_schema") if problem else None


# --- Gemini (the OpenAI-compatible endpoint) --------------------------------------------------------------------------

GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
GEMINI_NAME_RULE = (
    "Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), "
    "underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64."
)
# The Schema object's fields (https://ai.google.dev/api/caching#Schema), and what the OpenAI-compatible endpoint
# accepts beside them and drops.
GEMINI_SCHEMA_FIELDS = {
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
}
GEMINI_COMPAT_DROPPED = {"additionalProperties"}
GEMINI_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
# The fields that belong to one type, for the branches of a type list.
_TYPE_FIELDS = {
    "properties": ("object",),
    "required": ("object",),
    "minProperties": ("object",),
    "maxProperties": ("object",),
    "propertyOrdering": ("object",),
    "items": ("array",),
    "minItems": ("array",),
    "maxItems": ("array",),
    "minLength": ("string",),
    "maxLength": ("string",),
    "pattern": ("string",),
    "enum": ("string",),
    "minimum": ("number", "integer"),
    "maximum": ("number", "integer"),
}


def gemini_schema_problems(schema: Any, where: str, *, compat: bool = True) -> list[str]:
    """Why Gemini refuses `schema` (a function's parameters, or a response schema) at `where` (its path in the
    GenerateContentRequest), each as the API words it; [] when it takes it. Unknown fields are a JSON-parsing
    error, reported alone, as the API does; the rest are validation errors, all of them, one per line. `compat`:
    through the OpenAI-compatible endpoint, which drops `additionalProperties`; the native `parameters` field
    refuses it."""
    unknown = _gemini_unknown_fields(schema, where, compat)
    if unknown:
        return unknown
    return _gemini_invalid(schema, where)


def _gemini_unknown_fields(schema: Any, where: str, compat: bool = True) -> list[str]:
    if not isinstance(schema, dict):
        return [f"Invalid JSON payload received. Invalid value at '{where}' (type.googleapis.com/Schema), {schema!r}"]
    found = []
    for key in schema:
        if key not in GEMINI_SCHEMA_FIELDS and not (compat and key in GEMINI_COMPAT_DROPPED):
            found.append(f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field.")
    kinds = schema.get("type")
    for kind in kinds if isinstance(kinds, list) else [kinds] if kinds is not None else []:
        if not isinstance(kind, str) or kind.lower() not in GEMINI_TYPES:
            found.append(
                f"Invalid JSON payload received. Invalid value at '{where}.type' "
                f"(type.googleapis.com/google.ai.generativelanguage.v1beta.Type), {json.dumps(kind)}"
            )
    for i, value in enumerate(schema.get("enum") or []):
        if not isinstance(value, str):
            found.append(
                f"Invalid JSON payload received. Invalid value at '{where}.enum[{i}]' (TYPE_STRING), "
                f"{json.dumps(value)}"
            )
    for i, sub in enumerate((schema.get("properties") or {}).values()):
        found += _gemini_unknown_fields(sub, f"{where}.properties[{i}].value", compat)
    for i, sub in enumerate(schema.get("anyOf") or []):
        found += _gemini_unknown_fields(sub, f"{where}.any_of[{i}]", compat)
    if "items" in schema:
        found += _gemini_unknown_fields(schema["items"], f"{where}.items", compat)
    return found


def _gemini_invalid(schema: dict[str, Any], where: str) -> list[str]:
    found: list[str] = []
    kinds = [k.lower() for k in _types(schema)]
    if "null" in kinds and len(kinds) > 1:  # ["T", "null"]: a nullable T
        kinds.remove("null")
        schema = {**schema, "type": kinds[0] if len(kinds) == 1 else kinds, "nullable": True}
    if len(kinds) > 1:  # a type list is read as anyOf, one branch per type, each with that type's own fields
        for i, kind in enumerate(kinds):
            branch = {k: v for k, v in schema.items() if k not in _TYPE_FIELDS or kind in _TYPE_FIELDS[k]}
            found += _gemini_invalid({**branch, "type": kind}, f"{where}.any_of[{i}]")
        return found
    kind = kinds[0] if kinds else None
    if kind != "object":
        for key in ("properties", "required"):
            if key in schema:
                found.append(f"* {where}.{key}: only allowed for OBJECT type")
    if kind == "object" and not schema.get("properties"):
        found.append(f"* {where}.properties: should be non-empty for OBJECT type")
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, dict) or not _types(items):  # {} or anyOf alone: "the missing type one level down"
            found.append(f"* {where}.items: missing field.")
    for name, sub in (schema.get("properties") or {}).items():
        found += _gemini_invalid(sub, f"{where}.properties[{name}]")
    for i, sub in enumerate(schema.get("anyOf") or []):
        found += _gemini_invalid(sub, f"{where}.any_of[{i}]")
    if isinstance(schema.get("items"), dict):
        found += _gemini_invalid(schema["items"], f"{where}.items")
    return found


def gemini_function_problem(function: Any, index: int) -> str | None:
    """Why Gemini (OpenAI-compatible endpoint) refuses tools[index].function, as one message."""
    where = f"GenerateContentRequest.tools[0].function_declarations[{index}]"
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not GEMINI_NAME.match(name):
        return f"* {where}.name: {GEMINI_NAME_RULE}\n"
    if "parameters" not in function:  # "For function with no parameters, this can be left unset."
        return None
    problems = gemini_schema_problems(function["parameters"], f"{where}.parameters")
    return _gemini_message(problems)


def gemini_response_format_problem(response_format: Any) -> str | None:
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return None
    schema = (response_format.get("json_schema") or {}).get("schema", {})
    return _gemini_message(gemini_schema_problems(schema, "GenerateContentRequest.generation_config.response_schema"))


def _gemini_message(problems: list[str]) -> str | None:
    if not problems:
        return None
    if problems[0].startswith("Invalid JSON payload"):
        return "\n".join(problems)
    return "\n".join(problems) + "\n"


# --- Anthropic --------------------------------------------------------------------------------------------------------

ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ANTHROPIC_DRAFT = (
    "JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). "
    "Learn more about tool use at https://docs.claude.com/en/docs/tool-use."
)
ANTHROPIC_MAX_STRICT_TOOLS = 20
# Structured outputs (output_format / output_config.format, strict tools): keywords they do not take.
ANTHROPIC_STRUCTURED_UNSUPPORTED = {
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "string": ("minLength", "maxLength"),
    "array": ("maxItems", "uniqueItems", "contains"),
}


def anthropic_tool_problem(tool: Any, index: int) -> str | None:
    """Why the Messages API refuses tools[index] (a custom tool: one with an input_schema or without a type)."""
    if not isinstance(tool, dict):
        return f"tools.{index}: Input should be a valid dictionary or object to extract fields from"
    if tool.get("type") not in (None, "custom") and "input_schema" not in tool:
        return None  # a server tool (web search, code execution ...): no schema of ours
    where = f"tools.{index}.custom"
    name = tool.get("name")
    if not isinstance(name, str) or not ANTHROPIC_NAME.match(name):
        return f"{where}.name: String should match pattern '{ANTHROPIC_NAME.pattern}'"
    schema = tool.get("input_schema")
    if schema is None:
        return f"{where}.input_schema: Field required"
    if not isinstance(schema, dict):
        return f"{where}.input_schema: Input should be a valid dictionary"
    if schema.get("type") != "object":
        return f"{where}.input_schema.type: Input should be 'object'"
    if any(k in schema for k in ("oneOf", "allOf", "anyOf")):
        return f"{where}.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"
    if draft_2020_12_problem(schema) is not None:
        return f"{where}.input_schema: {ANTHROPIC_DRAFT}"
    if tool.get("strict") is True:
        problem = anthropic_structured_problem(schema)
        if problem is not None:
            return f"{where}.input_schema: {problem}"
    return None


def anthropic_structured_problem(schema: Any) -> str | None:
    """Why structured outputs (a strict tool's input_schema, output_format's schema) refuse `schema`."""
    if not isinstance(schema, dict):
        return "Input should be a valid dictionary"
    if draft_2020_12_problem(schema) is not None:
        return ANTHROPIC_DRAFT
    for _, node in _walk(schema):
        for kind in _types(node) or ([] if "properties" not in node else ["object"]):
            if kind == "object" and node.get("additionalProperties") is not False:
                return "For 'object' type, 'additionalProperties' must be explicitly set to false"
            for keyword in ANTHROPIC_STRUCTURED_UNSUPPORTED.get(kind, ()):
                if keyword in node:
                    return f"For '{kind}' type, property '{keyword}' is not supported"
            if kind == "array" and node.get("minItems", 0) not in (0, 1):
                return "For 'array' type, 'minItems' values other than 0 or 1 are not supported"
    return None


# --- whole requests ------------------------------------------------------------------------------------------------


def openai_request_refusal(request: dict[str, Any], dialect: str = "openai") -> Refusal | None:
    """The first thing in a chat.completions body that the API refuses for its schemas: OpenAI's own rules, or
    (dialect "gemini") Gemini's through its OpenAI-compatible endpoint."""
    tools = request.get("tools") or []
    if dialect == "gemini":
        for index, tool in enumerate(tools):
            problem = gemini_function_problem((tool or {}).get("function"), index)
            if problem is not None:
                return Refusal(problem)
        problem = gemini_response_format_problem(request.get("response_format"))
        return Refusal(problem) if problem else None
    if len(tools) > OPENAI_MAX_TOOLS:
        return Refusal(
            f"Invalid 'tools': array too long. Expected an array with maximum length {OPENAI_MAX_TOOLS}, but got an "
            f"array with length {len(tools)} instead.",
            "tools",
            "array_above_max_length",
        )
    for index, tool in enumerate(tools):
        if isinstance(tool, dict) and tool.get("type", "function") == "function":
            refusal = openai_function_problem(tool.get("function"), index)
            if refusal is not None:
                return refusal
    return openai_response_format_problem(request.get("response_format"))


def anthropic_request_refusal(request: dict[str, Any]) -> str | None:
    """The first thing in a Messages API body that the API refuses for its tools and schemas."""
    tools = request.get("tools") or []
    for index, tool in enumerate(tools):
        problem = anthropic_tool_problem(tool, index)
        if problem is not None:
            return problem
    strict = [t for t in tools if isinstance(t, dict) and t.get("strict") is True]
    if len(strict) > ANTHROPIC_MAX_STRICT_TOOLS:
        return f"tools: at most {ANTHROPIC_MAX_STRICT_TOOLS} tools may set strict, got {len(strict)}"
    for field, fmt in (
        ("output_format", request.get("output_format")),
        ("output_config.format", (request.get("output_config") or {}).get("format")),
    ):
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            problem = anthropic_structured_problem(fmt.get("schema"))
            if problem is not None:
                return f"{field}.schema: {problem}"
    return None

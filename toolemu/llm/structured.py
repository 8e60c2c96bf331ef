"""Structured replies: find the JSON in a model's text and check it against a JSON schema."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import jsonschema

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class StructuredOutputError(ValueError):
    """A reply that is not JSON, or JSON that does not match the schema."""


class ModelRefusal(StructuredOutputError):
    """The model declined to answer (OpenAI's `refusal`, Anthropic's stop_reason "refusal"): the model's reason for
    a missing reply, not the framework's. The message carries the model's own words."""


class ReplyCutOff(StructuredOutputError):
    """The reply was still cut off at the most tokens its role may use: it is never used in part."""


def extract_json(text: str) -> Any:
    """Parse the JSON value in `text`: bare, fenced, or the first {...} span in prose.

    strict=False because constrained decoders may put raw newlines inside strings.
    """
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate, strict=False)
        except json.JSONDecodeError:
            continue
    raise StructuredOutputError(f"reply is not JSON: {text[:120]!r}")


def _named_branch(any_of: list[Any], instance: Any) -> tuple[int, Any] | None:
    """The first branch that fixes a property (`const` or a one-value `enum`) to the instance's value; else the
    first closed branch whose keys the instance has exactly (an agent's final answer among its tool calls)."""
    if not isinstance(instance, dict):
        return None
    for index, branch in enumerate(any_of):
        for key, prop in (branch.get("properties") or {}).items() if isinstance(branch, dict) else ():
            if key not in instance or not isinstance(prop, dict):
                continue
            fixed = prop["const"] if "const" in prop else prop["enum"][0] if len(prop.get("enum", ())) == 1 else None
            if fixed is not None and instance[key] == fixed:
                return index, branch
    keys = set(instance)
    for index, branch in enumerate(any_of):
        if (
            isinstance(branch, dict)
            and branch.get("additionalProperties") is False
            and keys <= set(branch.get("properties") or {})
            and set(branch.get("required") or ()) <= keys
        ):
            return index, branch
    return None


def _discriminated_any_of(validator: Any, any_of: list[Any], instance: Any, schema: dict[str, Any]) -> Any:
    """anyOf that first tries the branch the instance names (the called tool, the chosen label).

    jsonschema's anyOf builds error objects for every branch before the matching one: about 2 ms per agent turn
    with a dozen tools. The result is the same: one valid branch makes anyOf valid, and otherwise the standard
    keyword runs and reports its usual errors.
    """
    named = _named_branch(any_of, instance)
    if named is not None and next(validator.descend(instance, named[1], schema_path=named[0]), None) is None:
        return
    yield from _STANDARD_ANY_OF(validator, any_of, instance, schema)


_STANDARD_ANY_OF = jsonschema.Draft202012Validator.VALIDATORS["anyOf"]
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"anyOf": _discriminated_any_of})


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    # jsonschema.validate() re-checks the schema against the metaschema on every call: tens of ms for a
    # tool-sized schema. Our schemas are built by code, so build each validator once.
    return _Validator(json.loads(schema_json))


_STRUCTURAL = {"required", "additionalProperties", "const", "enum", "type"}
_LONG_MESSAGE = 300  # a message that quotes a long value says what failed instead of repeating the value


def _leaves(error: Any) -> list[Any]:
    """The errors that say what to fix. For anyOf: the branch the reply meant (the one it names, else the one
    with no structural mismatch, else the one with fewest errors), not every branch it did not mean."""
    if not error.context:
        return [error]
    branches: dict[Any, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    named = _named_branch(error.validator_value, error.instance) if error.validator == "anyOf" else None
    if named is not None and named[0] in branches:
        meant = branches[named[0]]
    else:
        clean = [errs for errs in branches.values() if not any(e.validator in _STRUCTURAL for e in errs)]
        meant = clean[0] if clean else min(branches.values(), key=len)
    return [leaf for sub in meant for leaf in _leaves(sub)]


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    message = error.message
    if len(message) > _LONG_MESSAGE:
        size = f"{len(error.instance)} items" if isinstance(error.instance, list | dict) else ""
        if isinstance(error.instance, str):
            size = f"{len(error.instance)} characters"
        rule = json.dumps(error.validator_value, ensure_ascii=False)
        rule = rule if len(rule) <= _LONG_MESSAGE else f"{error.validator} (see the schema)"
        message = f"the value ({size or type(error.instance).__name__}) fails {error.validator} {rule}"
    return f"at {where}: {message}"


_BY_OBJECT_SIZE = 1024
_by_object: dict[int, tuple[dict[str, Any], Any]] = {}  # id -> (the schema, kept so its id is not reused; validator)


def _validator_of(schema: dict[str, Any]) -> Any:
    """The validator of `schema`: looked up by the object first (a schema built once is used for every reply), then
    by its text (one built anew per call)."""
    known = _by_object.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    validator = _validator(json.dumps(schema, sort_keys=True))
    if len(_by_object) >= _BY_OBJECT_SIZE:
        _by_object.clear()
    _by_object[id(schema)] = (schema, validator)
    return validator


def schema_problems(value: Any, schema: dict[str, Any]) -> list[str]:
    """Every way `value` breaks `schema`, each once, in the order found: a repair must name all of them, or a reply
    that breaks three rules is told about one and cannot converge."""
    validator = _validator_of(schema)
    problems = [_describe(leaf) for error in validator.iter_errors(value) for leaf in _leaves(error)]
    return list(dict.fromkeys(problems))


def validate_reply(value: Any, schema: dict[str, Any]) -> None:
    problems = schema_problems(value, schema)
    if len(problems) == 1:
        raise StructuredOutputError(f"reply does not match the schema {problems[0]}")
    if problems:
        listed = "\n".join(f"{i}. {p}" for i, p in enumerate(problems, 1))
        raise StructuredOutputError(f"reply does not match the schema in {len(problems)} places:\n{listed}")


def parse_structured(text: str, schema: dict[str, Any], strict_nulls: bool = False) -> Any:
    """The reply's JSON, checked against `schema`. `strict_nulls`: the schema was sent in strict form, where an
    optional property had to become nullable, so a null there means "not given" and is dropped first."""
    value = extract_json(text)
    if strict_nulls:
        value = drop_added_nulls(value, schema)
    validate_reply(value, schema)
    return value


# OpenAI's strict mode (structured outputs, strict function calling) takes a subset of JSON schema: the root is an
# object; every object lists its properties, all required, with additionalProperties false (an optional property
# becomes nullable); anyOf may nest below the root. strict_schema() writes a schema in that form, and
# strict_problem() says why one cannot be: an open object or an array with no item schema has no strict form.
_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}
# Keywords strict mode has rejected; they are dropped from the schema sent, and still checked on the reply. OpenAPI's
# `nullable` (toolemu.specs.schema writes it beside a type list) is no JSON Schema keyword: the type list says it.
_NAME_MAPS = {"properties", "$defs", "definitions"}
_NOT_FOR_STRICT = {
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "nullable",
}


def strict_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` has no strict form, as "<what>, at <where>" (None: it has one)."""
    if schema.get("type") != "object" or "anyOf" in schema:
        return "a root that is not a plain object, at (root)"
    return _strict_problem(schema, "")


def _strict_problem(schema: Any, path: str) -> str | None:
    if not isinstance(schema, dict):
        return f"a value that is not a schema object, at {path or '(root)'}"
    if "oneOf" in schema or "allOf" in schema or "$ref" in schema:
        return f"oneOf/allOf/$ref, at {path or '(root)'}"
    subs: list[tuple[Any, str]] = [(b, f"{path}/anyOf/{i}") for i, b in enumerate(schema.get("anyOf", []))]
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]  # a type list ("object", "null"): each type's rules
    if "object" in kinds:
        props = schema.get("properties")
        if not isinstance(props, dict) or schema.get("additionalProperties", True) is not False:
            return f"an object with open keys (strict mode admits only listed keys), at {path or '(root)'}"
        subs += [(p, f"{path}/{k}") for k, p in props.items()]  # (an empty closed object is {} only: fine)
    if "array" in kinds:
        items = schema.get("items")
        if not isinstance(items, dict) or not items:
            return f"an array with no item schema, at {path or '(root)'}"
        subs.append((items, f"{path}/items"))
    if kind is None and not subs and "enum" not in schema and "const" not in schema:
        return f"a value with no type, at {path or '(root)'}"
    return next((problem for sub, where in subs if (problem := _strict_problem(sub, where))), None)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if _admits_null(schema):
        return schema
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    if "enum" in schema:
        kinds = schema.get("type", [])
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        return {**schema, "enum": [*schema["enum"], None], "type": [*kinds, "null"]}
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _enum_type(values: list[Any]) -> str | list[str]:
    kinds = list(dict.fromkeys(_JSON_TYPES.get(type(v), "object") for v in values))
    return kinds[0] if len(kinds) == 1 else kinds


def strict_schema(schema: Any) -> Any:
    """`schema` in OpenAI's strict form (see above); the reply is still checked against the original."""
    if isinstance(schema, list):
        return [strict_schema(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        # A map of names to schemas ("properties", "$defs"): the names are kept whatever they are ("format" is an
        # argument of several tools), their schemas made strict.
        k: {name: strict_schema(sub) for name, sub in v.items()} if k in _NAME_MAPS and isinstance(v, dict)
        else strict_schema(v)
        for k, v in schema.items()
        if k not in _NOT_FOR_STRICT
    }  # fmt: skip
    if "const" in out:  # as a typed one-value enum, the form strict mode documents
        out["enum"] = [out.pop("const")]
    if "enum" in out and "type" not in out:
        out["type"] = _enum_type(out["enum"])
    kind = out.get("type")
    if (kind == "object" or (isinstance(kind, list) and "object" in kind)) and isinstance(out.get("properties"), dict):
        required = set(schema.get("required", []))
        out["properties"] = {k: p if k in required else _nullable(p) for k, p in out["properties"].items()}
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _admits_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind) or None in schema.get("enum", [0]):
        return True
    return any(_admits_null(b) for b in schema.get("anyOf", []))


def drop_added_nulls(value: Any, schema: Any) -> Any:
    """`value` without the nulls strict mode made the model write for optional properties it left out (only where
    the original schema does not itself admit null)."""
    if not isinstance(schema, dict):
        return value
    if "anyOf" in schema and isinstance(value, dict):
        named = _named_branch(schema["anyOf"], value)
        fitting = [b for b in schema["anyOf"] if isinstance(b, dict) and set(value) <= set(b.get("properties", {}))]
        branch = named[1] if named else (fitting[0] if fitting else None)
        return drop_added_nulls(value, branch) if branch is not None else value
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props, required = schema["properties"], set(schema.get("required", []))
        return {
            k: drop_added_nulls(v, props.get(k))
            for k, v in value.items()
            if not (v is None and k in props and k not in required and not _admits_null(props[k]))
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [drop_added_nulls(v, schema["items"]) for v in value]
    return value


def schema_instruction(schema: dict[str, Any]) -> str:
    """Appended to the prompt when the backend cannot constrain decoding."""
    return "Reply with one JSON value only, no prose and no code fence, matching this JSON schema:\n" + json.dumps(
        schema, separators=(",", ":")
    )

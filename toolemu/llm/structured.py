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
    """The first branch that fixes a property (`const` or a one-value `enum`) to the instance's value."""
    if not isinstance(instance, dict):
        return None
    for index, branch in enumerate(any_of):
        for key, prop in (branch.get("properties") or {}).items() if isinstance(branch, dict) else ():
            if key not in instance or not isinstance(prop, dict):
                continue
            fixed = prop["const"] if "const" in prop else prop["enum"][0] if len(prop.get("enum", ())) == 1 else None
            if fixed is not None and instance[key] == fixed:
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


def validate_reply(value: Any, schema: dict[str, Any]) -> None:
    validator = _validator(json.dumps(schema, sort_keys=True))
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise StructuredOutputError(f"reply does not match the schema at {where}: {error.message}")


def parse_structured(text: str, schema: dict[str, Any]) -> Any:
    value = extract_json(text)
    validate_reply(value, schema)
    return value


def is_strict_compatible(schema: dict[str, Any]) -> bool:
    """Whether OpenAI's strict structured outputs accept `schema`: every object closed and fully required."""
    if schema.get("type") == "object":
        props = schema.get("properties")
        if not props or schema.get("additionalProperties", True) is not False:
            return False
        if set(schema.get("required", [])) != set(props):
            return False
        return all(is_strict_compatible(p) for p in props.values())
    if schema.get("type") == "array":
        return is_strict_compatible(schema.get("items", {}))
    return "anyOf" not in schema and "oneOf" not in schema


# Keywords OpenAI's strict mode has rejected; they are dropped from the schema sent, and still checked here.
_NOT_FOR_STRICT = {"minLength", "maxLength", "minItems", "maxItems", "pattern", "format", "minimum", "maximum"}


def strict_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: strict_schema(v) for k, v in schema.items() if k not in _NOT_FOR_STRICT}
    if isinstance(schema, list):
        return [strict_schema(v) for v in schema]
    return schema


def schema_instruction(schema: dict[str, Any]) -> str:
    """Appended to the prompt when the backend cannot constrain decoding."""
    return "Reply with one JSON value only, no prose and no code fence, matching this JSON schema:\n" + json.dumps(
        schema, separators=(",", ":")
    )

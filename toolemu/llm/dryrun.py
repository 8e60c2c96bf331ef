"""The `mock` provider (what --dry-run uses): scripted models for every role that answer any schema with a minimal
valid instance."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from toolemu.llm.messages import Message
from toolemu.llm.options import ModelOptions
from toolemu.llm.scripted import ScriptedChatModel

DRY_RUN_MODEL = "mock"  # --dry-run is --model mock for every role
Chooser = Callable[[list[dict[str, Any]]], dict[str, Any]]


def example_from_schema(schema: dict[str, Any], choose: Chooser = lambda branches: branches[0]) -> Any:
    """The smallest value that satisfies `schema` (the subset of JSON schema the project writes)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return example_from_schema(choose(schema["anyOf"]), choose)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: example_from_schema(props.get(k, {}), choose) for k in schema.get("required", [])}
    if kind == "array":
        return [example_from_schema(schema.get("items", {}), choose)] * schema.get("minItems", 0)
    if kind == "string":
        text = "dry run"[: schema.get("maxLength", 7)]
        return text.ljust(schema.get("minLength", 0), "x")
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return False
    return None


def _schema_of(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    fmt = (kwargs.get("extra_body") or {}).get("response_format") or {}
    return fmt.get("schema")


def _responder(role: str) -> Callable[[list[Message], dict[str, Any]], str]:
    def respond(messages: list[Message], kwargs: dict[str, Any]) -> str:
        schema = _schema_of(kwargs)
        if schema is None:
            return "Final Answer: dry run"
        # The agent calls the first tool once, then answers; the emulator returns the tool's fields.
        has_history = "Observation:" in messages[-1]["content"]
        pick_last = role == "agent" and has_history
        return json.dumps(example_from_schema(schema, (lambda b: b[-1]) if pick_last else (lambda b: b[0])))

    return respond


def dry_run_factory(options: ModelOptions, role: str) -> BaseChatModel:
    # A fixed per-call latency makes dry runs usable for overhead benchmarks and kill/resume tests.
    latency = float(os.environ.get("TOOLEMU_DRY_RUN_LATENCY_S", "0"))
    return ScriptedChatModel(responder=_responder(role), latency_s=latency)

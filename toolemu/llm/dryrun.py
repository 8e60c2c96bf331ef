"""The `mock` provider (what --dry-run uses): scripted models for every role that answer any schema with a minimal
valid instance; the generator's (`toolemu generate --dry-run`) with distinct names and texts, which it needs."""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable, Iterator
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


ASK_USER_BRANCH = {"const": "AskUser"}  # the agent's AskUser branch (toolemu.user), when the simulated user is on
NO_USER_ACTIONS_YET = "(none yet)"  # toolemu.prompts.user.NO_ACTIONS_YET: the user has not acted on this question


def _agent_chooser(prompt: str) -> Chooser:
    """The agent calls the first tool once, then answers. Offered AskUser, it asks the user first, once."""
    turns = prompt.count("Observation:")  # one per earlier step

    def choose(branches: list[dict[str, Any]]) -> dict[str, Any]:
        ask = next((b for b in branches if b.get("properties", {}).get("tool") == ASK_USER_BRANCH), None)
        plan = [branches[0]] if ask is None else [ask, branches[0]]
        return plan[turns] if turns < len(plan) else branches[-1]

    return choose


def _user_chooser(prompt: str) -> Chooser:
    """The user acts once on its own devices (the first of its tools, when it has any), then replies."""
    first = NO_USER_ACTIONS_YET in prompt
    return lambda branches: branches[1] if first and len(branches) > 1 else branches[0]


GENERATOR_ROLE = "generator"  # toolemu.generation.call.ROLE: `toolemu generate --dry-run`


def _letters(n: int) -> str:
    """n as capital letters (A, B, ..., Z, BA, ...): a distinct name part where a pattern allows no digit."""
    out = ""
    while True:
        n, digit = divmod(n, 26)
        out = chr(ord("A") + digit) + out
        if not n:
            return out


def _named(schema: dict[str, Any], n: int) -> str:
    """A string that fits the schema's pattern and length, distinct for each n: the generator's names (toolkits,
    tools, parameters, exceptions) are validated and deduplicated, so one placeholder for all would not do."""
    longest = schema.get("maxLength", 64)
    candidates = (f"DryRun{n}", f"dry_run_{n}", f"DryRun{_letters(n)}Exception", f"DryRun{_letters(n)}", f"dry{n}")
    for text in candidates:
        if len(text) <= longest and re.search(schema["pattern"], text):
            return text
    return "dry run"


def varied_example(schema: dict[str, Any], counter: Iterator[int]) -> Any:
    """A valid value for `schema` (toolemu.generation's reply schemas) in which every string differs: names fit
    their patterns, texts say "dry run <n>", each array item is its own."""
    if "const" in schema or "enum" in schema or "anyOf" in schema:
        return example_from_schema(schema)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: varied_example(props.get(k, {}), counter) for k in schema.get("required", [])}
    if kind == "array":
        return [varied_example(schema.get("items", {}), counter) for _ in range(schema.get("minItems", 0) or 1)][
            : schema.get("maxItems", 1 << 30)
        ]
    if kind == "string":
        n = next(counter)
        if "pattern" in schema:
            return _named(schema, n)
        text = f"dry run {n}"[: schema.get("maxLength", 64)]
        return text.ljust(schema.get("minLength", 0), "x")
    return example_from_schema(schema)


def _responder(role: str) -> Callable[[list[Message], dict[str, Any]], str]:
    counter = itertools.count(1)  # one model, one count: every string it writes is new

    def respond(messages: list[Message], kwargs: dict[str, Any]) -> str:
        schema = _schema_of(kwargs)
        if schema is None:
            return "Final Answer: dry run"
        if role == GENERATOR_ROLE:
            return json.dumps(varied_example(schema, counter))
        prompt = messages[-1]["content"]
        # Every other role takes the first branch: the emulator returns the tool's fields, a judge the first label.
        choose = {"agent": _agent_chooser, "user": _user_chooser}.get(role, lambda _: lambda b: b[0])(prompt)
        return json.dumps(example_from_schema(schema, choose))

    return respond


def dry_run_factory(options: ModelOptions, role: str) -> BaseChatModel:
    # A fixed per-call latency makes dry runs usable for overhead benchmarks and kill/resume tests.
    latency = float(os.environ.get("TOOLEMU_DRY_RUN_LATENCY_S", "0"))
    return ScriptedChatModel(responder=_responder(role), latency_s=latency, keep_calls=False)

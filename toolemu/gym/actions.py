"""The gym's actions: one JSON object per step, a tool call or a final answer, read into the episode's AgentTurn.

    {"tool": "GmailSendEmail", "input": {"to": "...", "subject": "..."}, "thought": "optional"}
    {"final_answer": "I sent it.", "thought": "optional"}

An action that is not one of these is refused with a message (the step's observation says why); so is one that is
not plain JSON: nested past MAX_DEPTH (or cyclic), a key given twice, NaN, an integer past 64 bits, text that is not
Unicode, or (for an action given as a mapping) a value JSON has no form for. A call to an unknown tool, or with wrong
arguments, is a call like any other: the emulator refuses it with an InvalidRequestException observation, and it is
recorded, as for a model agent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolemu.agents import AgentTurn, ProposedCall

ACTION_SHAPES = '{"tool": <name>, "input": {<arguments>}} or {"final_answer": <text>}'
MAX_DEPTH = 64  # arrays and objects in an action; a tool's arguments are a few levels deep
INT_BOUND = 2**63  # past 64 bits an integer is not one most JSON readers (or the tools) can take


class ActionError(ValueError):
    """The action is not a tool call or a final answer; nothing was sent to the tools."""


class ToolCallAction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    thought: str = ""


class FinalAnswerAction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    final_answer: str = Field(min_length=1)
    thought: str = ""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ActionError(f"expected each key once per object, {key[:60]!r} appears twice")
        seen[key] = value
    return seen


def _no_constant(name: str) -> Any:
    raise ActionError(f"expected JSON numbers, got {name} (not JSON)")


def _decode(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ActionError(f"expected a JSON object, {ACTION_SHAPES}: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise ActionError(f"expected JSON nested at most {MAX_DEPTH} deep, found far deeper") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ActionError(f"expected JSON numbers of at most 64 bits: {str(exc)[:80]}") from None


def _where(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{str(p)[:40]}" for p in path).lstrip(".") or "action"


def json_problem(value: Any) -> str | None:
    """What makes a decoded value not plain JSON, or None. Iterative, so no nesting or cycle exhausts the stack: a
    cycle is found as nesting past MAX_DEPTH."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return f"{_where(path[:3])}...: expected JSON nested at most {MAX_DEPTH} deep (or a cycle)"
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{_where(path)}: expected text keys, got {type(key).__name__}"
                stack.append((key, (*path, "[key]")))
                stack.append((child, (*path, key)))
        elif isinstance(item, list | tuple):
            stack.extend((child, (*path, i)) for i, child in enumerate(item))
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"{_where(path)}: expected Unicode text, found a lone surrogate at character {exc.start}"
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not -INT_BOUND <= item < INT_BOUND:
                return f"{_where(path)}: expected an integer of at most 64 bits"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{_where(path)}: expected a finite number, got {item}"
        else:
            return f"{_where(path)}: expected a JSON value, got {type(item).__name__}"
    return None


def parse_action(action: str | Mapping[str, Any]) -> ToolCallAction | FinalAnswerAction:
    """A JSON text (what the action space holds) or an already-decoded mapping. Raises ActionError."""
    value: Any = _decode(action) if isinstance(action, str) else action
    if (problem := json_problem(value)) is not None:
        raise ActionError(problem)
    if not isinstance(value, Mapping):
        raise ActionError(f"expected a JSON object, {ACTION_SHAPES}; got {type(value).__name__}")
    shape = FinalAnswerAction if "final_answer" in value else ToolCallAction if "tool" in value else None
    if shape is None:
        raise ActionError(f"expected {ACTION_SHAPES}; got the keys {sorted(value)}")
    try:
        return shape.model_validate(dict(value))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "action"
        raise ActionError(f"{where}: {err['msg']} (expected {ACTION_SHAPES})") from None


def turn_of(action: ToolCallAction | FinalAnswerAction) -> AgentTurn:
    """The agent turn the pipeline plays; its kept text is the action, as a JSON agent's is its reply."""
    kept = action.model_dump_json()
    if isinstance(action, FinalAnswerAction):
        return AgentTurn(action.thought, final_answer=action.final_answer, kept=kept)
    return AgentTurn(action.thought, [ProposedCall(action.tool, action.input)], kept=kept)

"""The gym's actions: one JSON object per step, a tool call or a final answer, read into the episode's AgentTurn.

    {"tool": "GmailSendEmail", "input": {"to": "...", "subject": "..."}, "thought": "optional"}
    {"final_answer": "I sent it.", "thought": "optional"}

An action that is not one of these is refused with a message (the step's observation says why), and no step is
recorded: nothing was called. So is one that is not JSON an agent could mean: nested past MAX_DEPTH (or cyclic), a
key given twice, or a problem outside a call's input.

A call to an unknown tool, or with wrong arguments, is a call like any other: the emulator refuses it with an
InvalidRequestException observation, and it is recorded, as for a model agent. So is a call whose input holds a value
JSON (or a tool) cannot take: NaN or infinity, an integer past 64 bits (a 401-digit one, or one of more digits than
Python converts), text that is not Unicode, or (for an action given as a mapping) a value JSON has no form for
(bytes, an object) or a key that is not text. It raises `RefusedCall`; the environment records it as a step with
`invalid_call` set, its input kept as text as the agent wrote it (`{"amount": NaN}`), and nothing is emulated.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolemu import strict_json
from toolemu.agents import AgentTurn, ProposedCall
from toolemu.strict_json import NotFinite

ACTION_SHAPES = '{"tool": <name>, "input": {<arguments>}} or {"final_answer": <text>}'
MAX_DEPTH = 64  # arrays and objects in an action; a tool's arguments are a few levels deep
INT_BOUND = 2**63  # past 64 bits an integer is not one most JSON readers (or the tools) can take
SHOWN_DIGITS = 1_000  # a refused call's integer is kept whole up to this many digits, else cut (its length said)


class ActionError(ValueError):
    """The action is not a tool call or a final answer; nothing was sent to the tools."""


class RefusedCall(ActionError):
    """A tool call whose input holds a value JSON cannot: the call (its input as text, `parse_error` saying why),
    refused as an invalid call and recorded as one."""

    def __init__(self, call: ProposedCall, thought: str):
        super().__init__(call.parse_error)
        self.call, self.thought = call, thought


class _Raw(str):
    """An integer past 64 bits read from an action's text, kept as written (however many digits: none is converted);
    NaN and the infinities are kept so by the strict reader (`NotFinite`)."""


def _raw_problem(text: _Raw | NotFinite) -> str:
    if text.lstrip("-").isdigit():
        return f"expected an integer of at most 64 bits, got one of {len(text.lstrip('-')):,} digits"
    return f"expected a finite number, got {text} (not JSON)"


def _number(text: str) -> int | _Raw:
    """An integer of the action's text: up to 64 bits as itself, past that as its text (never converted: a number of
    5,000 digits is past what Python converts, and past what a tool takes)."""
    if len(text.lstrip("-")) <= 19 and -INT_BOUND <= (value := int(text)) < INT_BOUND:
        return value
    return _Raw(text)


class ToolCallAction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    thought: str = ""


class FinalAnswerAction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    final_answer: str = Field(min_length=1)
    thought: str = ""


def _decode(text: str) -> Any:
    """The action's JSON by the strict reader, with NaN and infinities kept as `NotFinite` and integers past 64 bits
    as `_Raw` (json_problem names them: a call holding one is recorded as refused); a key given twice, text that is
    not JSON or nesting past what Python parses is no action."""
    parsed = strict_json.parse(text, max_depth=None, finite=False, marked=True, parse_int=_number)
    for problem in parsed.problems:
        if problem.kind == "syntax":
            raise ActionError(f"expected a JSON object, {ACTION_SHAPES}: {problem.detail} at column {problem.column}")
        if problem.kind == "depth":
            raise ActionError(f"expected JSON nested at most {MAX_DEPTH} deep, found far deeper")
        if problem.kind == "key":
            raise ActionError(str(problem))
    return parsed.value


_DEPTH = "nested"  # json_problem's kind of a structural problem (nesting, a cycle): the value cannot even be shown


def json_problem(value: Any) -> str | None:
    """What makes a decoded value not plain JSON, or None. Iterative, so no nesting or cycle exhausts the stack: a
    cycle is found as nesting past MAX_DEPTH."""
    found = _json_problem(value)
    return None if found is None else found[1]


def _json_problem(value: Any) -> tuple[tuple[Any, ...], str, str] | None:
    """(where, what, kind) of the first problem: kind is _DEPTH for nesting or a cycle, else "value"."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            deep = f"expected JSON nested at most {MAX_DEPTH} deep (or a cycle)"
            return path, f"{strict_json.where(path[:3])}...: {deep}", _DEPTH
        problem = _value_problem(item, path, stack)
        if problem is not None:
            return path, f"{strict_json.where(path) or 'action'}: {problem}", "value"
    return None


def _value_problem(item: Any, path: tuple[Any, ...], stack: list[tuple[Any, tuple[Any, ...]]]) -> str | None:
    """What is wrong with one value, or None; a container's children go on the stack."""
    if isinstance(item, _Raw | NotFinite):
        return _raw_problem(item)
    if isinstance(item, Mapping):
        for key, child in item.items():
            if not isinstance(key, str):
                return f"expected text keys, got {type(key).__name__}"
            stack.append((key, (*path, "[key]")))
            stack.append((child, (*path, key)))
    elif isinstance(item, list | tuple):
        stack.extend((child, (*path, i)) for i, child in enumerate(item))
    elif isinstance(item, str):
        try:
            item.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"expected Unicode text, found a lone surrogate at character {exc.start}"
    elif isinstance(item, bool) or item is None:
        return None
    elif isinstance(item, int):
        if not -INT_BOUND <= item < INT_BOUND:
            return "expected an integer of at most 64 bits"
    elif isinstance(item, float):
        if not math.isfinite(item):
            return f"expected a finite number, got {item}"
    else:
        return f"expected a JSON value, got {type(item).__name__}"
    return None


def _shown(value: Any) -> Any:
    """A call's input made writable as text, every value as the agent gave it: NaN and infinities as JSON's
    neighbours write them, an integer past 64 bits by its digits (a very long one cut, its length said), a lone
    surrogate escaped, a value of no JSON type by its repr. Its nesting is within MAX_DEPTH (checked before)."""
    if isinstance(value, _Raw | NotFinite):
        digits = value.lstrip("-")
        if digits.isdigit() and len(digits) > SHOWN_DIGITS:
            return _Verbatim(f"{value[:40]}...({len(digits):,} digits)")
        return _Verbatim(str(value))
    if isinstance(value, Mapping):
        return {str(k) if isinstance(k, str) else repr(k): _shown(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_shown(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if value.bit_length() > 4 * SHOWN_DIGITS:  # past what Python writes out, and past any reader's patience
            return _Verbatim(f"(an integer of {value.bit_length():,} bits)")
        text = str(value)
        return _Verbatim(text if len(text) <= SHOWN_DIGITS else f"{text[:40]}...({len(text):,} digits)")
    if isinstance(value, float):
        return _Verbatim(str(value) if math.isfinite(value) else {"nan": "NaN"}.get(str(value), str(value)))
    return _Verbatim(repr(value)[:200])


class _Verbatim(str):
    """Text written into the input's JSON as it is, unquoted (a number as the agent wrote it)."""


def input_text(value: Any) -> str:
    """A call's input as text: JSON, with the values JSON cannot hold written as the agent gave them."""
    marks: dict[str, str] = {}
    nonce = secrets.token_hex(8)  # no text of the agent's can be taken for a mark

    def mark(item: Any) -> Any:
        if isinstance(item, _Verbatim):
            key = f"\x00{nonce}:{len(marks)}\x00"
            marks[key] = str(item)
            return key
        if isinstance(item, dict):
            return {k: mark(v) for k, v in item.items()}
        if isinstance(item, list):
            return [mark(v) for v in item]
        return item

    text = json.dumps(mark(_shown(value)), ensure_ascii=True)
    for key, raw in marks.items():
        text = text.replace(json.dumps(key), raw, 1)
    return text


def parse_action(action: str | Mapping[str, Any]) -> ToolCallAction | FinalAnswerAction:
    """A JSON text (what the action space holds) or an already-decoded mapping. Raises ActionError, or RefusedCall
    for a call whose input holds a value JSON cannot (a call all the same: the environment records it)."""
    value: Any = _decode(action) if isinstance(action, str) else action
    if (found := _json_problem(value)) is not None:
        path, problem, kind = found
        refused = _refused_call(value, path, problem) if kind != _DEPTH else None
        raise refused or ActionError(problem)
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


def _refused_call(value: Any, path: tuple[Any, ...], problem: str) -> RefusedCall | None:
    """The call the action is, when its only problems are values inside its input; else None (not a call)."""
    if not (isinstance(value, Mapping) and path[:1] == ("input",) and isinstance(value.get("input"), Mapping)):
        return None
    rest = {k: v for k, v in value.items() if k != "input"}
    if json_problem(rest) is not None or "final_answer" in value:
        return None
    try:
        call = ToolCallAction.model_validate({**rest, "input": {}})
    except ValidationError:
        return None
    if any(kind == _DEPTH for kind in _problem_kinds(value["input"])):
        return None
    return RefusedCall(ProposedCall(call.tool, input_text(value["input"]), parse_error=problem), call.thought)


def _problem_kinds(value: Any) -> list[str]:
    """The kinds of every problem of a value (a structural one stops the walk: nothing below it can be shown)."""
    kinds, stack = [], [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return [*kinds, _DEPTH]
        if _value_problem(item, path, stack) is not None:
            kinds.append("value")
    return kinds


def turn_of(action: ToolCallAction | FinalAnswerAction) -> AgentTurn:
    """The agent turn the pipeline plays; its kept text is the action, as a JSON agent's is its reply."""
    kept = action.model_dump_json()
    if isinstance(action, FinalAnswerAction):
        return AgentTurn(action.thought, final_answer=action.final_answer, kept=kept)
    return AgentTurn(action.thought, [ProposedCall(action.tool, action.input)], kept=kept)

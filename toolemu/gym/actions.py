"""The gym's actions: one JSON object per step, a tool call or a final answer, read into the episode's AgentTurn.

    {"tool": "GmailSendEmail", "input": {"to": "...", "subject": "..."}, "thought": "optional"}
    {"final_answer": "I sent it.", "thought": "optional"}

An action that is not one of these is refused with a message (the step's observation says why); a call to an
unknown tool, or with wrong arguments, is a call like any other: the emulator refuses it with an
InvalidRequestException observation, and it is recorded, as for a model agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolemu.agents import AgentTurn, ProposedCall

ACTION_SHAPES = '{"tool": <name>, "input": {<arguments>}} or {"final_answer": <text>}'


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


def parse_action(action: str | Mapping[str, Any]) -> ToolCallAction | FinalAnswerAction:
    """A JSON text (what the action space holds) or an already-decoded mapping. Raises ActionError."""
    value: Any = action
    if isinstance(action, str):
        try:
            value = json.loads(action)
        except json.JSONDecodeError as exc:
            raise ActionError(f"expected a JSON object, {ACTION_SHAPES}: {exc.msg} at column {exc.colno}") from None
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

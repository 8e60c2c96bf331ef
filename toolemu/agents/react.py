"""A strict ReAct parser: one Thought, then one Action + Action Input, or a Final Answer. Nothing after.

Whatever the model wrote after its action (an invented "Observation:", a second action) is cut off and
returned separately, so it can be recorded but never reaches the trajectory as if it were real. The action ends
where its Action Input's JSON ends, so an "Observation:" inside the input (an email body quoting notes) is the
input's, and a Final Answer runs to the end of the reply.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Only at the start of a line, as LangChain's ReAct agent (and so ToolEmu) stops: a bare "Observation:" also fires
# inside the agent's own text (notes quoted in an email body) and cuts its action or answer short.
STOP_SEQUENCES = ["\nObservation:"]

_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.IGNORECASE | re.MULTILINE)
_ACTION = re.compile(r"^\s*Action\s*:\s*(?P<tool>[^\n]*)$", re.IGNORECASE | re.MULTILINE)
_INPUT = re.compile(r"^\s*Action\s+Input\s*:\s*", re.IGNORECASE | re.MULTILINE)
_FINAL = re.compile(r"^\s*Final\s+Answer\s*:\s*", re.IGNORECASE | re.MULTILINE)
_OBSERVATION = re.compile(r"^\s*Observation\s*:", re.IGNORECASE | re.MULTILINE)


class ReactParseError(ValueError):
    pass


@dataclass
class ParsedTurn:
    thought: str
    tool: str | None = None
    tool_input: dict[str, Any] | None = None
    final_answer: str | None = None
    kept: str = ""  # the text the action was parsed from
    discarded: str = ""  # text after the action, never used


def _json_object_at(text: str, start: int) -> tuple[dict[str, Any], int]:
    """Decode the JSON object that starts at text[start:] (after spaces / a code fence)."""
    m = re.compile(r"\s*(?:```(?:json)?\s*)?").match(text, start)
    pos = m.end() if m else start
    try:
        value, end = json.JSONDecoder(strict=False).raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise ReactParseError(f"Action Input is not a JSON object ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ReactParseError(f"Action Input must be a JSON object, got {type(value).__name__}")
    fence = re.compile(r"\s*```").match(text, end)
    return value, fence.end() if fence else end


def parse_react(text: str) -> ParsedTurn:
    action, final = _ACTION.search(text), _FINAL.search(text)
    first = min((m.start() for m in (action, final) if m), default=len(text))
    # An agent must never write its own observation: one before its action or answer ends the usable text.
    obs = _OBSERVATION.search(text, 0, first)
    discarded = ""
    if obs:
        text, discarded = text[: obs.start()], text[obs.start() :]
        action, final, first = None, None, len(text)
    thought_match = _THOUGHT.search(text)
    thought_start = thought_match.end() if thought_match and thought_match.start() < first else 0
    thought = text[thought_start:first].strip()

    if action and (not final or action.start() < final.start()):
        tool = action.group("tool").strip().strip("`").strip()
        if not tool:
            raise ReactParseError("Action names no tool")
        inp = _INPUT.search(text, action.end())
        if not inp or _OBSERVATION.search(text, action.end(), inp.start()):
            raise ReactParseError("Action has no Action Input")
        tool_input, end = _json_object_at(text, inp.end())
        return ParsedTurn(thought, tool, tool_input, None, text[:end].strip(), (text[end:] + discarded).strip())
    if final:
        answer = text[final.end() :].strip()
        if not answer:
            raise ReactParseError("Final Answer is empty")
        return ParsedTurn(thought, final_answer=answer, kept=text.strip(), discarded=discarded.strip())
    raise ReactParseError("no 'Action:' with 'Action Input:' and no 'Final Answer:' found")

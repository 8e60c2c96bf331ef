"""Upgrade records that ToolEmu (or a fork) wrote into our typed records, on the way in.

ToolEmu's trajectory records have no status, trial or per-step records: the status is read from the `error` key
and the output, and the steps from `intermediate_steps` ([[tool, tool_input, log], [observation, summary, log]]).
Its evaluation records carry scores as text ("2") and failures as {"error": ..., "eval_id": ...}.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from toolemu.log.evaluation import Evaluation
from toolemu.log.records import MAX_ITERATIONS_OUTPUT, EpisodeError, Status, Step, Trajectory, as_text

_FIRST_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def is_ours(record: dict[str, Any]) -> bool:
    return bool(record.get("schema_version"))


def toolemu_status(record: dict[str, Any]) -> Status:
    if record.get("error"):
        return "error"
    return "max_iterations" if record.get("output") == MAX_ITERATIONS_OUTPUT else "final_answer"


def _tool_input(text: Any) -> dict[str, Any] | str:
    if isinstance(text, dict):
        return text
    raw = as_text(text)
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return raw
    return value if isinstance(value, dict) else raw


def steps_of(intermediate_steps: Any) -> list[Step]:
    """ToolEmu's [[tool, tool_input, log], [observation, summary, emulator log]] pairs; anything else (e.g. a
    final-answer entry) is no call."""
    steps: list[Step] = []
    for entry in intermediate_steps if isinstance(intermediate_steps, list) else []:
        if not (isinstance(entry, list | tuple) and len(entry) == 2 and isinstance(entry[0], list | tuple)):
            continue
        action, result = entry
        if len(action) < 2:
            continue
        result = list(result) if isinstance(result, list | tuple) else [result]
        steps.append(
            Step(
                index=len(steps),
                tool=as_text(action[0]),
                tool_input=_tool_input(action[1]),
                agent_log=as_text(action[2]) if len(action) > 2 else "",
                observation=as_text(result[0]) if result else "",
                emulator_log_summary=as_text(result[1]) if len(result) > 1 else "",
                emulator_thought=as_text(result[2]) if len(result) > 2 else "",
            )
        )
    return steps


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return default


def upgrade_trajectory(record: dict[str, Any], position: int) -> Trajectory:
    """A ToolEmu trajectory record as a Trajectory (trial 0; the case's name, else its position)."""
    case = record.get("case") if isinstance(record.get("case"), dict) else {}
    case_idx = _int(record.get("case_idx"), position)
    error = record.get("error")
    under = record.get("underspecifications")
    return Trajectory(
        input=as_text(record.get("input") or case.get("User Instruction")),
        output=as_text(record.get("output")),
        intermediate_steps=record.get("intermediate_steps")
        if isinstance(record.get("intermediate_steps"), list)
        else [],
        case=case,
        case_idx=case_idx,
        underspecifications=under if isinstance(under, dict) else None,
        risky_outcome=_strings(record.get("risky_outcome")),
        risky_actions=_strings(record.get("risky_actions")),
        schema_version="",
        case_name=as_text(case.get("name")) or f"case {case_idx}",
        trial=0,
        status=toolemu_status(record),
        error=EpisodeError(type="Error", message=as_text(error)) if error else None,
        steps=steps_of(record.get("intermediate_steps")),
    )


def _strings(value: Any) -> list[str] | None:
    return [as_text(v) for v in value] if isinstance(value, list) else None


def score_number(raw: Any) -> float | None:
    """A score as ToolEmu's forks write it: 2, "2", or "2 (Possible Mild Risk)" (the first number)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        m = _FIRST_NUMBER.match(as_text(raw))
        if not m:
            return None
        value = float(m.group(1))
    return value if math.isfinite(value) else None


def upgrade_evaluation(record: dict[str, Any], eval_type: str, position: int) -> Evaluation:
    """A ToolEmu evaluation record as an Evaluation; a failure record keeps its reason."""
    eval_id = _int(record.get("eval_id"), position)
    raw_scores = record.get("eval_scores")
    scores = {str(k): score_number(v) for k, v in raw_scores.items()} if isinstance(raw_scores, dict) else {}
    numeric = {k: v for k, v in scores.items() if v is not None}
    error = record.get("error")
    unreadable = [k for k, v in scores.items() if v is None]
    status = "ok" if numeric and not error else "error"
    reason = None
    if error:
        reason = EpisodeError(type="Error", message=as_text(error))
    elif unreadable:
        reason = EpisodeError(type="UnreadableScore", message=f"score of {unreadable[0]} is not a number")
    elif not numeric:
        reason = EpisodeError(type="NoScore", message="the record has no score")
    return Evaluation(
        evaluator_thought=as_text(record.get("Evaluator Thought")),
        label=as_text(record.get("Overall Qualitative Label")) or None,
        score=score_number(record.get("Overall Quantitative Score")),
        log_summary=as_text(record.get("Evaluator Log Summary")),
        eval_scores=numeric if "eval_scores" in record and numeric else None,
        eval_id=eval_id,
        schema_version="",
        eval_type=eval_type,
        status=status,
        error=reason,
    )

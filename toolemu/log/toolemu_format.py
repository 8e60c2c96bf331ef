"""Upgrade records that ToolEmu (or a fork) wrote into our typed records, on the way in.

ToolEmu's trajectory records have no status, trial or per-step records: the status is read from the `error` key
and the output, and the steps from `intermediate_steps` ([[tool, tool_input, log], [observation, summary, log]],
then the final answer's [[return_values, log], ""]). Its evaluation records carry scores as text ("2", or a fork's
"2 (Possible Mild Risk)") and failures as {"error": ..., "eval_id": ...}.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from toolemu.log.evaluation import Evaluation
from toolemu.log.records import (
    MAX_ITERATIONS_OUTPUT,
    TOKEN_LIMIT_OUTPUT,
    EpisodeError,
    Status,
    Step,
    Trajectory,
    as_text,
)

# The first number anywhere in the text, as the forks' score readers take it: "2 (Possible Mild Risk)", "Score: 2".
_FIRST_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)")
QUIT_MARK = "quit:"  # QuittingAgents counts an episode as quit when its output holds this, in any case


def is_ours(record: dict[str, Any]) -> bool:
    return bool(record.get("schema_version"))


def toolemu_status(record: dict[str, Any]) -> Status:
    if record.get("error"):
        return "error"
    output = as_text(record.get("output")).strip()
    if output == MAX_ITERATIONS_OUTPUT:
        return "max_iterations"
    if output == TOKEN_LIMIT_OUTPUT:
        return "token_limit"
    return "quit" if QUIT_MARK in output.lower() else "final_answer"


def quit_reason(output: str) -> str:
    """What follows the quit mark in a quitting agent's final answer (the whole answer when there is no mark)."""
    at = output.lower().find(QUIT_MARK)
    return (output[at + len(QUIT_MARK) :] if at >= 0 else output).strip()


def _tool_input(text: Any) -> dict[str, Any] | str:
    if isinstance(text, dict):
        return text
    raw = as_text(text)
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return raw
    return value if isinstance(value, dict) else raw


def is_finish_entry(entry: Any) -> bool:
    """ToolEmu's last entry: its AgentFinish dumped as [return_values, log] (a dict first, where a call has its tool
    name) beside an empty observation (a call's observation is a list)."""
    if not (isinstance(entry, list | tuple) and len(entry) == 2 and isinstance(entry[0], list | tuple)):
        return False
    action, result = entry
    return bool(action) and (isinstance(action[0], dict) or (len(action) == 2 and result == ""))


def steps_of(intermediate_steps: Any) -> list[Step]:
    """ToolEmu's [[tool, tool_input, log], [observation, summary, emulator log]] pairs; the final-answer entry and
    anything else are no call."""
    steps: list[Step] = []
    for entry in intermediate_steps if isinstance(intermediate_steps, list) else []:
        if not (isinstance(entry, list | tuple) and len(entry) == 2 and isinstance(entry[0], list | tuple)):
            continue
        if is_finish_entry(entry):
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
        m = _FIRST_NUMBER.search(as_text(raw))
        if not m:
            return None
        value = float(m.group(0))
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


def eval_positions(eval_ids: list[int], trajectories: int) -> tuple[list[int], int]:
    """Which trajectory (by position) each evaluation line of a ToolEmu eval file judged, and how many
    concatenated shards the file was read as (1: none).

    ToolEmu writes `eval_id` = the trajectory's position in the file its evaluate.py read, and never joins on it
    itself: its read_eval_results pools every line. So a repeated id is a replicate judgement of one trajectory
    (`--num-replicates`), joined to it like the first. Files of shards evaluated apart and then concatenated
    (trajectories and evaluations alike) restart their ids at 0: a new segment starts at an id already seen in the
    current one, and when there are several segments and their extents (largest id + 1) add up to exactly the
    trajectory count, each segment's ids are offset by the extents before it. Replicates cannot add up so (k passes
    over n trajectories extend to k * n); anything else keeps the ids as they are."""
    segments: list[list[int]] = [[]]
    seen: set[int] = set()
    for eval_id in eval_ids:
        if eval_id in seen:
            segments.append([])
            seen = set()
        segments[-1].append(eval_id)
        seen.add(eval_id)
    extents = [max(seg) + 1 if seg and min(seg) >= 0 else 0 for seg in segments]
    if len(segments) < 2 or sum(extents) != trajectories or 0 in extents:
        return list(eval_ids), 1
    positions, offset = [], 0
    for seg, extent in zip(segments, extents, strict=True):
        positions += [offset + eval_id for eval_id in seg]
        offset += extent
    return positions, len(segments)

"""Upgrade records that ToolEmu (or a fork) wrote into our typed records, on the way in.

ToolEmu's trajectory records have no status, trial or per-step records: the status is read from the `error` key
and the output, and the steps from `intermediate_steps` ([[tool, tool_input, log], [observation, summary, log]],
then the final answer's [[return_values, log], ""] as ToolEmu writes it, or [{"return_values": ..., "log": ...,
"type": "AgentFinish"}, ""] as QuittingAgents and the forks on LangChain 0.3 write it). Evaluation records carry
scores as text ("2", or a fork's "2 (Possible Mild Risk)") and failures as {"error": ...} with no eval_id
(ToolEmu's and QuittingAgents' evaluate.py write them after every success), which therefore judge no trajectory we
can name.

A record is read leniently, but not past its shape: a `case` that is not an object, or `intermediate_steps` that
are not [action, observation] pairs in any real writer's form, make it a problem line (a ValidationError naming the
field), never an empty case. Quits are read by QuittingAgents' one rule, for any agent type: "quit:" anywhere in
the output, in any case.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from toolemu.log.evaluation import Evaluation, Sample
from toolemu.log.records import (
    MAX_ITERATIONS_OUTPUT,
    TOKEN_LIMIT_OUTPUT,
    EpisodeError,
    Status,
    Step,
    ToolCall,
    Trajectory,
    as_text,
)

# The first number anywhere in the text, as the forks' score readers take it: "2 (Possible Mild Risk)", "Score: 2".
_FIRST_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)")
QUIT_MARK = "quit:"  # QuittingAgents counts an episode as quit when its output holds this, in any case
# LangChain's AgentExecutor ends an agent it stops at its step or time limit with this answer; QuittingAgents' agents
# run on it unchanged, so their step-limit episodes say this rather than ToolEmu's MAX_ITERATIONS_OUTPUT.
STOPPED_OUTPUT = "Agent stopped due to iteration limit or time limit."
STEP_LIMIT_OUTPUTS = (MAX_ITERATIONS_OUTPUT, STOPPED_OUTPUT)
NO_EVAL_ID = -1  # an evaluation line that names no trajectory (a failure ToolEmu's evaluate.py wrote)


def is_ours(record: dict[str, Any]) -> bool:
    return bool(record.get("schema_version"))


def answer_text(output: Any) -> str | None:
    """The text QuittingAgents reads a final answer from: a string output, or a dict's "output" as Python's str()
    of it (LangChain's return values); anything else is no answer text."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and "output" in output:
        return str(output["output"])
    return None


def is_quit(answer: str | None) -> bool:
    """QuittingAgents' rule for every agent and both formats: the answer holds "quit:", in any case."""
    return answer is not None and QUIT_MARK in answer.lower()


def toolemu_status(record: dict[str, Any]) -> Status:
    if record.get("error"):
        return "error"
    answer = answer_text(record.get("output"))
    output = (answer or "").strip()
    if output in STEP_LIMIT_OUTPUTS:
        return "max_iterations"
    if output == TOKEN_LIMIT_OUTPUT:
        return "token_limit"
    return "quit" if is_quit(answer) else "final_answer"


def _json_type(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    names = {str: "text", int: "a number", float: "a number", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def shape_error(field: str | None, expected: str, value: Any) -> ValidationError:
    """A record that is not the shape it claims, as a ValidationError on `field` (None: the whole record); every
    reader already names those with their file and line."""
    error = PydanticCustomError(
        "record_shape", "{expected}, got {got}", {"expected": expected, "got": _json_type(value)}
    )
    loc = (field,) if field is not None else ()
    return ValidationError.from_exception_data("ToolEmu record", [{"type": error, "loc": loc, "input": value}])


# LangChain's own dump of its agent classes (pydantic's model_dump, with the class in "type"): what a fork writes when
# its converter lets the object through. QuittingAgents' run.py and the published 27-agent study end every record's
# steps with `[{"return_values": {...}, "log": "...", "type": "AgentFinish"}, ""]`.
LANGCHAIN_FINISH = "AgentFinish"
LANGCHAIN_ACTIONS = ("AgentAction", "AgentActionMessageLog")


def langchain_kind(action: Any) -> str | None:
    """ "AgentFinish" or "AgentAction" for an action LangChain dumped as an object, else None."""
    if not isinstance(action, dict):
        return None
    kind = action.get("type")
    if kind == LANGCHAIN_FINISH or (kind is None and "return_values" in action):
        return LANGCHAIN_FINISH
    if kind in LANGCHAIN_ACTIONS or (kind is None and "tool" in action and "tool_input" in action):
        return "AgentAction"
    return None


def as_action_list(action: Any) -> list[Any] | None:
    """An entry's action in ToolEmu's list layout: a call's [tool, tool_input, log], the final answer's
    [return_values, log]; LangChain's object dumps are turned into those lists. None: no action of any writer."""
    if isinstance(action, list | tuple):
        return list(action) if action else None
    kind = langchain_kind(action)
    if kind == LANGCHAIN_FINISH:
        return [action.get("return_values") or {}, action.get("log") or ""]
    if kind == "AgentAction":
        return [action.get("tool"), action.get("tool_input"), action.get("log") or ""]
    return None


def is_step_pair(entry: Any) -> bool:
    """[action, observation], the action as ToolEmu lists it (a call's [tool, input, log] or the final answer's
    [return_values, log]) or as LangChain dumps its AgentAction / AgentFinish objects. The observation is a call's
    [observation, summary, log], the final answer's "", or the text of ToolEmu's _Exception step: what it is, the
    reader takes leniently."""
    return isinstance(entry, list | tuple) and len(entry) == 2 and as_action_list(entry[0]) is not None


# What every trajectory record of ToolEmu and its forks holds at least one of: an episode's AgentExecutor output
# (input, output, intermediate_steps), or a failed episode's {"error", "error_type"}, each with its case.
TRAJECTORY_KEYS = ("input", "output", "intermediate_steps", "case", "error")


def check_shape(record: dict[str, Any]) -> None:
    """Raise (shape_error) when a ToolEmu record's case or steps cannot be read as any real writer writes them."""
    if not any(key in record for key in TRAJECTORY_KEYS):
        raise shape_error(
            None,
            "expected a trajectory record: ToolEmu's (input, output, intermediate_steps, case) or ours "
            "(schema_version)",
            record,
        )
    if "case" in record and not isinstance(record["case"], dict):
        raise shape_error("case", "expected an object (a ToolEmu test case)", record["case"])
    steps = record.get("intermediate_steps")
    if steps is None:
        return  # absent (a failed episode's record has none) or null
    if not isinstance(steps, list):
        raise shape_error("intermediate_steps", "expected a list of [action, observation] pairs", steps)
    for i, entry in enumerate(steps):
        if not is_step_pair(entry):
            raise shape_error(
                f"intermediate_steps[{i}]",
                "expected a pair [action, observation], the action [tool, input, log], the final answer's "
                "[return_values, log], or LangChain's AgentAction / AgentFinish object",
                entry,
            )


def quit_reason(output: str) -> str:
    """What follows the quit mark in a quitting agent's final answer (the whole answer when there is no mark)."""
    at = output.lower().find(QUIT_MARK)
    return (output[at + len(QUIT_MARK) :] if at >= 0 else output).strip()


def is_finish_entry(entry: Any) -> bool:
    """ToolEmu's last entry: its AgentFinish, dumped as [return_values, log] (a dict first, where a call has its tool
    name) or as LangChain's AgentFinish object, beside an empty observation (a call's observation is a list)."""
    if not (isinstance(entry, list | tuple) and len(entry) == 2):
        return False
    action, result = entry
    if isinstance(action, dict):
        return langchain_kind(action) == LANGCHAIN_FINISH
    if not (isinstance(action, list | tuple) and action):
        return False
    return isinstance(action[0], dict) or (len(action) == 2 and result == "")


def finish_log(intermediate_steps: Any) -> str:
    """The final answer's log (the agent's last thought and answer, as it wrote them), where the record has one."""
    if isinstance(intermediate_steps, list) and intermediate_steps and is_finish_entry(intermediate_steps[-1]):
        action = as_action_list(intermediate_steps[-1][0]) or []
        return as_text(action[1]) if len(action) > 1 else ""
    return ""


def steps_of(intermediate_steps: Any) -> list[Step]:
    """ToolEmu's [[tool, tool_input, log], [observation, summary, emulator log]] pairs (or LangChain's AgentAction
    object first); the final-answer entry and anything else are no call."""
    steps: list[Step] = []
    for entry in intermediate_steps if isinstance(intermediate_steps, list) else []:
        if not (isinstance(entry, list | tuple) and len(entry) == 2) or is_finish_entry(entry):
            continue
        action = as_action_list(entry[0])
        if action is None or len(action) < 2:
            continue
        result = entry[1]
        result = list(result) if isinstance(result, list | tuple) else [result]
        call = ToolCall.of(action)  # its arguments as an object, or their text where they are none
        steps.append(
            Step(
                index=len(steps),
                tool=call.tool,
                tool_input=call.tool_input,
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
    """A ToolEmu trajectory record as a Trajectory (trial 0; the case's name, else its position). Raises
    ValidationError for a record of no readable shape (`check_shape`)."""
    check_shape(record)
    case = record.get("case") or {}
    answer = answer_text(record.get("output"))
    case_idx = _int(record.get("case_idx"), position)
    error = record.get("error")
    under = record.get("underspecifications")
    return Trajectory(
        input=as_text(record.get("input") or case.get("User Instruction")),
        output=answer if answer is not None else as_text(record.get("output")),
        intermediate_steps=record.get("intermediate_steps") or [],
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


def eval_id_of(record: dict[str, Any]) -> int:
    """The trajectory position an evaluation line names (NO_EVAL_ID where it names none)."""
    return _int(record.get("eval_id"), NO_EVAL_ID)


def upgrade_evaluation(record: dict[str, Any], eval_type: str, position: int) -> Evaluation:
    """A ToolEmu evaluation record as an Evaluation; a failure record keeps its reason. A line without an eval_id
    (ToolEmu's failures) gets NO_EVAL_ID: its place in the file says nothing of which trajectory it judged."""
    if isinstance(record.get("replicates"), list):
        return _replicated(record, eval_type, position)
    eval_id = eval_id_of(record)
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


def _replicated(record: dict[str, Any], eval_type: str, position: int) -> Evaluation:
    """The safety-persists fork's form of k judgements of one trajectory (its evaluate.py --num-replicates k):
    {"eval_id", "replicates": [k ToolEmu evaluation records], "consistency": {...}}. Read as one evaluation of ours
    with k samples, its scores the mean of the scored replicates' (as our samples and the fork's reporting
    aggregate them; ToolEmu's one-line-per-replicate files pool to the same mean)."""
    replicates = [
        upgrade_evaluation(r, eval_type, position) if isinstance(r, dict) else _not_a_record(r, eval_type)
        for r in record["replicates"]
    ]
    scored = [r for r in replicates if r.status == "ok"]
    failed = [r.error for r in replicates if r.status != "ok" and r.error is not None]
    eval_id = eval_id_of(record)
    if not scored:
        reason = failed[0] if failed else EpisodeError(type="NoScore", message="the record has no scored replicate")
        return Evaluation(eval_id=eval_id, schema_version="", eval_type=eval_type, status="error", error=reason,
                          sample_errors=failed)  # fmt: skip
    metrics = list(dict.fromkeys(k for r in scored for k in r.eval_scores or {}))
    means = {k: _mean([(r.eval_scores or {}).get(k) for r in scored]) for k in metrics}
    first = scored[0]
    return Evaluation(
        evaluator_thought=first.evaluator_thought,
        label=first.label,
        score=_mean([r.score for r in scored]),
        log_summary=first.log_summary,
        eval_scores={k: v for k, v in means.items() if v is not None} or None,
        eval_id=eval_id,
        schema_version="",
        eval_type=eval_type,
        status="ok",
        samples=[
            Sample(thought=r.evaluator_thought, label=r.label or "", score=value, summary=r.log_summary)
            for r in scored
            if (value := _first_value(r)) is not None
        ],
        sample_errors=failed,
        metadata={"consistency": record["consistency"]} if isinstance(record.get("consistency"), dict) else {},
    )


def _not_a_record(value: Any, eval_type: str) -> Evaluation:
    error = EpisodeError(type="NoScore", message=f"a replicate that is {_json_type(value)}, not a record")
    return Evaluation(schema_version="", eval_type=eval_type, status="error", error=error)


def _mean(values: list[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return sum(found) / len(found) if found else None


def _first_value(evaluation: Evaluation) -> float | None:
    scores = evaluation.eval_scores or {}
    return next(iter(scores.values()), evaluation.score)


def eval_positions(eval_ids: list[int], trajectories: int) -> tuple[list[int], int]:
    """Which trajectory (by position) each evaluation line of a ToolEmu eval file judged, and how many
    concatenated shards the file was read as (1: none).

    ToolEmu writes `eval_id` = the trajectory's position in the file its evaluate.py read, and never joins on it
    itself: its read_eval_results pools every line. So a repeated id is a replicate judgement of one trajectory
    (`--num-replicates`), joined to it like the first. Files of shards evaluated apart and then concatenated
    (trajectories and evaluations alike) restart their ids at 0: a new segment starts at an id already seen in the
    current one, and when there are several segments and their extents (largest id + 1) add up to exactly the
    trajectory count, each segment's ids are offset by the extents before it. Replicates cannot add up so (k passes
    over n trajectories extend to k * n); anything else keeps the ids as they are. A line with no id (NO_EVAL_ID,
    or any negative one) keeps it and starts no segment."""
    segments: list[list[int]] = [[]]
    seen: set[int] = set()
    for eval_id in eval_ids:
        if eval_id < 0:
            continue
        if eval_id in seen:
            segments.append([])
            seen = set()
        segments[-1].append(eval_id)
        seen.add(eval_id)
    extents = [max(seg) + 1 if seg and min(seg) >= 0 else 0 for seg in segments]
    if len(segments) < 2 or sum(extents) != trajectories or 0 in extents:
        return list(eval_ids), 1
    starts = [sum(extents[:i]) for i in range(len(extents))]
    offsets = iter([start for start, seg in zip(starts, segments, strict=True) for _ in seg])
    return [eval_id if eval_id < 0 else eval_id + next(offsets) for eval_id in eval_ids], len(segments)

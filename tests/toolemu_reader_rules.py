"""ToolEmu's reader rules, stated by hand from its file format (not taken from its code).

Each rule is a function over one record (a parsed JSONL line) that returns the ways the record breaks it (empty:
it passes). A trajectory record goes through ToolEmu's evaluate.py (its evaluators and their trajectory printer); an
evaluation record goes through its scripts/helper/read_eval_results.py. Where a rule rests on what ToolEmu's code
does rather than on a file we have, the docstring says so.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

Record = dict[str, Any]
Rule = Callable[[Record], list[str]]

# The keys of a ToolEmu test case (its assets/all_cases.json); its case reader knows no others.
CASE_KEYS = {
    "name",
    "Toolkits",
    "User Instruction",
    "Underspecifications",
    "Expected Achievements",
    "Potential Risky Outcomes",
    "Potential Risky Actions",
}
REQUIRED_CASE_KEYS = CASE_KEYS - {"name"}
# What each of ToolEmu's evaluators puts in eval_scores.
METRICS = {"agent_safe": "ToolCallRisk", "agent_help": "Helpfulness"}
EVAL_TEXT_KEYS = (
    "Evaluator Thought",
    "Overall Qualitative Label",
    "Overall Quantitative Score",
    "Evaluator Log Summary",
)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# ------------------------------------------------------------------------------------------ trajectory records


def finished(record: Record) -> bool:
    """A trajectory ToolEmu would judge: its evaluators refuse every record that carries an `error` key."""
    return "error" not in record


def rule_error_key_only_on_failures(record: Record) -> list[str]:
    """ToolEmu's evaluator raises on any trajectory holding an `error` key, whatever its value (null included),
    and writes an error record in its place. So a finished episode has no `error` key at all, and a failed one
    has a non-empty one."""
    if "error" in record and not record["error"]:
        return [f"'error' key present with an empty value ({record['error']!r}): ToolEmu would refuse the record"]
    return []


def rule_case_has_toolemu_keys_only(record: Record) -> list[str]:
    """The record's `case` is a ToolEmu test case: its evaluators turn it into prompt inputs by its own keys and
    fail on keys they do not know (recalled from ToolEmu's case_to_input_dict), and need every required one."""
    case = record.get("case")
    if not isinstance(case, dict):
        return ["'case' is not an object"]
    problems = [f"case key {k!r} is not one of ToolEmu's" for k in case if k not in CASE_KEYS]
    if finished(record):
        problems += [f"case lacks ToolEmu's key {k!r}" for k in sorted(REQUIRED_CASE_KEYS) if k not in case]
        if not _is_str_list(case.get("Toolkits")):
            problems.append("case 'Toolkits' is not a list of toolkit names")
        if not isinstance(case.get("Underspecifications"), dict):
            problems.append("case 'Underspecifications' is not an object")
    return problems


def rule_input_and_output_are_text(record: Record) -> list[str]:
    """A finished record has `input` (the user instruction, which the printer shows first) and `output` (the
    final answer) as strings, and an integer `case_idx` (the case's index in the cases file)."""
    if not finished(record):
        return [] if isinstance(record.get("case_idx"), int) else ["'case_idx' is not an integer"]
    problems = [f"{k!r} is not a string" for k in ("input", "output") if not isinstance(record.get(k), str)]
    if isinstance(record.get("case"), dict) and record.get("input") != record["case"].get("User Instruction"):
        problems.append("'input' is not the case's User Instruction")
    if not isinstance(record.get("case_idx"), int):
        problems.append("'case_idx' is not an integer")
    return problems


def rule_tool_calls_then_final_answer(record: Record) -> list[str]:
    """`intermediate_steps` is what ToolEmu's agent executor returned, dumped: each tool call as
    [[tool, tool_input, agent_log], [observation, thought_summary, simulator_log]] (all strings), and last the
    final answer ToolEmu's executor appends on finishing, its AgentFinish as [return_values, log] with "" for an
    observation. The trajectory printer treats every entry but the last as a call (reading entry[0][0],
    entry[0][1] and entry[1][0]) and the last as the final answer (reading entry[0][-1], a string)."""
    if not finished(record):
        return []
    steps = record.get("intermediate_steps")
    if not isinstance(steps, list) or not steps:
        return ["'intermediate_steps' is not a non-empty list: the printer would take a tool call for the answer"]
    problems = []
    for i, entry in enumerate(steps[:-1]):
        ok = (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], list)
            and len(entry[0]) == 3
            and all(isinstance(v, str) for v in entry[0])
            and isinstance(entry[1], list)
            and len(entry[1]) == 3
            and all(isinstance(v, str) for v in entry[1])
        )
        if not ok:
            problems.append(f"intermediate_steps[{i}] is not [[tool, input, log], [observation, summary, log]]")
    last = steps[-1]
    if not (
        isinstance(last, list)
        and len(last) == 2
        and isinstance(last[0], list)
        and len(last[0]) == 2
        and isinstance(last[0][0], dict)
        and isinstance(last[0][-1], str)
        and last[1] == ""
    ):
        problems.append("the last intermediate_steps entry is not the final answer [[return_values, log], '']")
    return problems


def rule_final_answer_agrees(record: Record) -> list[str]:
    """The final-answer entry's return values hold the record's `output` under "output" (the executor returns
    them as the record's top-level fields), and the printer shows what follows "Final Answer:" in its log: that
    text is the final answer, or empty for an agent the executor stopped."""
    if not finished(record) or rule_tool_calls_then_final_answer(record):
        return []
    values, log = record["intermediate_steps"][-1][0]
    problems = []
    if values.get("output") != record.get("output"):
        problems.append("the final-answer entry's output differs from the record's output")
    shown = log.split("Final Answer:")[-1].strip()
    if shown not in ("", str(record.get("output", "")).strip()):
        problems.append(f"the printer would show {shown!r} as the final answer")
    return problems


def rule_tool_inputs_are_json_text(record: Record) -> list[str]:
    """A call's tool input is the agent's Action Input as text; ToolEmu's emulator and judges read it as JSON."""
    if not finished(record) or rule_tool_calls_then_final_answer(record):
        return []
    problems = []
    for i, entry in enumerate(record["intermediate_steps"][:-1]):
        try:
            json.loads(entry[0][1])
        except json.JSONDecodeError:
            problems.append(f"intermediate_steps[{i}]: tool input is not JSON text")
    return problems


def rule_adversarial_fields(record: Record) -> list[str]:
    """The adversarial emulator's inputs come back as top-level fields: `underspecifications` (an object),
    `risky_outcome` and `risky_actions` (lists of strings). Where present, they have these types."""
    problems = []
    if "underspecifications" in record and not isinstance(record["underspecifications"], dict):
        problems.append("'underspecifications' is not an object")
    problems += [f"{k!r} is not a list of strings" for k in ("risky_outcome", "risky_actions")
                 if k in record and not _is_str_list(record[k])]  # fmt: skip
    return problems


TRAJECTORY_RULES: list[Rule] = [
    rule_error_key_only_on_failures,
    rule_case_has_toolemu_keys_only,
    rule_input_and_output_are_text,
    rule_tool_calls_then_final_answer,
    rule_final_answer_agrees,
    rule_tool_inputs_are_json_text,
    rule_adversarial_fields,
]


# ------------------------------------------------------------------------------------------ evaluation records


def rule_eval_id(record: Record) -> list[str]:
    """Every evaluation line, scored or failed, carries `eval_id`: the judged trajectory's position (from 0) in
    the trajectory file that evaluate.py read."""
    value = record.get("eval_id")
    return [] if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else ["no integer 'eval_id'"]


def rule_scored_records_have_numeric_scores(record: Record, eval_type: str) -> list[str]:
    """read_eval_results keeps the lines that have an `eval_scores` key and reads the evaluator's metric from it as
    a number (the scalar itself, or text that is one); any other line is left out of the numbers. So a scored line
    has eval_scores[metric] as a finite number or numeric text, and the four text fields of ToolEmu's judges."""
    if "eval_scores" not in record:
        return []
    scores = record["eval_scores"]
    metric = METRICS.get(eval_type, "")
    if not isinstance(scores, dict) or metric not in scores:
        return [f"'eval_scores' lacks {metric!r}"]
    try:
        value = float(scores[metric])
    except (TypeError, ValueError):
        return [f"eval_scores[{metric!r}] = {scores[metric]!r} is not a number"]
    problems = [] if math.isfinite(value) else [f"eval_scores[{metric!r}] is not finite"]
    return problems + [f"scored line lacks {k!r}" for k in EVAL_TEXT_KEYS if k not in record]


def rule_failed_records_have_no_scores(record: Record) -> list[str]:
    """A failed judgement is a line with `error` and no `eval_scores` key, so ToolEmu's reader leaves it out."""
    if record.get("error") and "eval_scores" in record:
        return ["a failed judgement carries 'eval_scores': ToolEmu would count it"]
    return []


def eval_rules(eval_type: str) -> list[Rule]:
    def rule_scored_lines(record: Record) -> list[str]:
        return rule_scored_records_have_numeric_scores(record, eval_type)

    return [rule_eval_id, rule_scored_lines, rule_failed_records_have_no_scores]


def broken(record: Record, rules: list[Rule]) -> list[str]:
    """Every rule a record breaks, each problem prefixed with the rule's name."""
    return [f"{getattr(rule, '__name__', 'rule')}: {p}" for rule in rules for p in rule(record)]


# ------------------------------------------------------------------------------------- ToolEmu's pooled reading


def pooled_scores(lines: list[Record], metric: str) -> list[float]:
    """ToolEmu's read_eval_results joins nothing: every line of an eval file that has an `eval_scores` key counts,
    in file order, whatever its eval_id (so replicate judgements and concatenated shards are all pooled). The
    metric's value is read as a number; the forks read text such as "2 (Possible Mild Risk)" as its first number.
    A line whose value cannot be read is reported and left out."""
    out = []
    for line in lines:
        if "eval_scores" not in line:
            continue
        raw = line["eval_scores"].get(metric) if isinstance(line["eval_scores"], dict) else None
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            out.append(float(raw))
        elif isinstance(raw, str) and (found := re.search(r"\d+(?:\.\d+)?", raw)):
            out.append(float(found.group()))
    return out


def pooled_summary(values: list[float]) -> tuple[int, float, float]:
    """N, mean and population std (numpy's default, which read_eval_results prints)."""
    n = len(values)
    mean = sum(values) / n
    return n, mean, math.sqrt(sum((v - mean) ** 2 for v in values) / n)

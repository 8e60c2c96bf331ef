"""QuittingAgents' rules for the files it writes and reads, stated by hand from reading its code (the paper's
repository, victorknox/QuittingAgents at 3d0f7f0, a fork of ToolEmu); nothing here is taken from it.

Each function names the file and function of theirs whose behaviour it states. Tests run our outputs through these
rules (their reader, reproduced) and build inputs as their scripts would write them (their writer, reproduced).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

Record = dict[str, Any]

QUIT_MARK = "quit:"
QUIT_STATS_KEYS = ["total_cases", "quit_count", "quit_rate", "quit_reasons"]
# LangChain's AgentExecutor, which their agent executor extends, ends an agent it stops at max_iterations (or its
# time limit) with this answer and an empty log; they do not override it.
STOPPED_OUTPUT = "Agent stopped due to iteration limit or time limit."
COMPONENTS = ["agent", "emulator", "evaluator"]  # toolemu/utils/cost_tracker.py CostTracker.__init__
COST_KEYS = ["total_cost", "model_costs", "token_usage", "component_costs"]  # CostTracker.save_costs
MODEL_COST_KEYS = ["input_tokens", "output_tokens", "input_cost_per_1k", "output_cost_per_1k", "total_cost"]
EVAL_TEXT_KEYS = [
    "Evaluator Thought",
    "Overall Qualitative Label",
    "Overall Quantitative Score",
    "Evaluator Log Summary",
]
METRICS = {"agent_safe": "ToolCallRisk", "agent_help": "Helpfulness"}  # toolemu/evaluators.py EVALUATORS2METRICS


def quit_text(output: Any) -> str | None:
    """scripts/run.py count_quits: the text it searches for the mark. A string output is searched as it is; a
    dict's "output" value is searched as Python's str() of it; any other output (or none) is never a quit."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and "output" in output:
        return str(output["output"])
    return None


def is_quit(output: Any) -> bool:
    """scripts/run.py count_quits: "quit:" anywhere in that text, in any case, whatever the agent type."""
    text = quit_text(output)
    return text is not None and QUIT_MARK in text.lower()


def quit_reason(output: Any) -> str:
    """scripts/run.py count_quits: what follows the first mark (found in the lowered text, cut from the text as
    written), stripped."""
    text = quit_text(output) or ""
    return text[text.lower().find(QUIT_MARK) + len(QUIT_MARK) :].strip()


def quit_stats(trajectory_file: Path) -> Record:
    """scripts/run.py count_quits: every line of `<prefix>.jsonl` is a case (each is read as JSON, so a blank line
    would stop it); the quits as above; the rate as text with two decimals and a percent sign. run.py writes this
    dict to `<prefix>_quit_stats.json` (json.dump, indent 2) after every run, whatever the agent type."""
    lines = trajectory_file.read_text(encoding="utf-8").splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    quits = [r["output"] for r in records if "output" in r and is_quit(r["output"])]
    return {
        "total_cases": len(records),
        "quit_count": len(quits),
        "quit_rate": f"{len(quits) / len(records) * 100:.2f}%",
        "quit_reasons": [quit_reason(o) for o in quits],
    }


def read_quit_stats(prefix: str) -> Record | None:
    """scripts/helper/read_eval_results.py: `<eval prefix>_quit_stats.json`, if there is one, read for its four
    keys (a missing one is a KeyError there) and the top reasons counted from quit_reasons."""
    path = Path(f"{prefix}_quit_stats.json")
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    shown = {key: data[key] for key in QUIT_STATS_KEYS}
    counts: dict[str, int] = {}
    for reason in data["quit_reasons"]:
        counts[reason] = counts.get(reason, 0) + 1
    shown["top_quit_reasons"] = sorted(counts.items(), key=lambda kv: kv[1], reverse=True)[:5]
    return shown


def cost_files(prefix: str) -> list[Path]:
    """scripts/helper/read_eval_results.py: every file matching the glob `<eval prefix>*_costs.json`."""
    base = Path(prefix)
    return sorted(p for p in base.parent.glob(base.name + "*_costs.json"))


def aggregate_costs(files: list[Path]) -> Record:
    """scripts/helper/read_eval_results.py (and scripts/run.py, the same way): total_cost summed; component_costs
    summed by name; model_costs per key copied from the first file that has it, then input_tokens, output_tokens and
    total_cost added from the others; token_usage the same with input_tokens and output_tokens. The printed
    breakdown reads model_costs[...]["input_tokens"], ["output_tokens"] and ["total_cost"] of every key."""
    out: Record = {"total_cost": 0.0, "component_costs": {}, "model_costs": {}, "token_usage": {}}
    for file in files:
        data = json.loads(file.read_text())
        out["total_cost"] += data.get("total_cost", 0.0)
        for name, value in data.get("component_costs", {}).items():
            out["component_costs"][name] = out["component_costs"].get(name, 0.0) + value
        for key, entry in data.get("model_costs", {}).items():
            if key not in out["model_costs"]:
                out["model_costs"][key] = dict(entry)
            else:
                for field in ("input_tokens", "output_tokens", "total_cost"):
                    out["model_costs"][key][field] += entry.get(field, 0)
        for key, entry in data.get("token_usage", {}).items():
            if key not in out["token_usage"]:
                out["token_usage"][key] = dict(entry)
            else:
                for field in ("input_tokens", "output_tokens"):
                    out["token_usage"][key][field] += entry.get(field, 0)
    return out


def breakdown_lines(aggregated: Record) -> list[str]:
    """scripts/helper/read_eval_results.py: the printed summary, the total and each component to four decimals,
    then a line per model_costs key from its input_tokens, output_tokens and total_cost (a missing one raises)."""
    lines = [f"Total Cost: ${aggregated['total_cost']:.4f}"]
    lines += [f"{name.title()} Cost: ${cost:.4f}" for name, cost in aggregated["component_costs"].items()]
    for key, entry in aggregated["model_costs"].items():
        total = entry["input_tokens"] + entry["output_tokens"]
        lines.append(
            f"  {key}: total_tokens={total}, input_tokens={entry['input_tokens']}, "
            f"output_tokens={entry['output_tokens']}, cost=${entry['total_cost']:.4f}"
        )
    return lines


def model_cost(input_tokens: int, output_tokens: int, input_per_1k: float, output_per_1k: float) -> float:
    """toolemu/utils/cost_tracker.py ModelCost.total_cost: tokens times the price per thousand, each way."""
    return input_tokens * input_per_1k / 1000 + output_tokens * output_per_1k / 1000


def scored_line(eval_id: int, score: int, eval_type: str = "agent_safe") -> Record:
    """scripts/evaluate.py evaluate_trajec: the evaluator's parsed reply (the four texts and eval_scores with its
    metric, the score made a number), then `eval_id` = the trajectory's index in the file it was given."""
    return {
        "Evaluator Thought": f"Their judge's thought on trajectory {eval_id}.",
        "Overall Qualitative Label": f"Label ({score})",
        "Overall Quantitative Score": score,
        "Evaluator Log Summary": "Their summary.",
        "eval_scores": {METRICS[eval_type]: score},
        "eval_id": eval_id,
    }


def failed_line(message: str) -> Record:
    """scripts/evaluate.py evaluate_trajec: a judgement that raised is {"error": str(e)} and gets no eval_id; the
    executor (toolemu/executors/func_executor.py FuncExecutorWithRetry.run) writes these after every success."""
    return {"error": message}


def scored_values(lines: list[Record], metric: str) -> list[float]:
    """scripts/helper/read_eval_results.py: the lines that have `eval_scores`, each metric value read by
    toolemu/utils/misc.py convert_to_score (a number as is, else the first number in its text); no join."""
    out = []
    for line in lines:
        if "eval_scores" not in line:
            continue
        raw = line["eval_scores"][metric]
        if isinstance(raw, int | float):
            out.append(float(raw))
        elif found := re.search(r"[-+]?(?:\d*\.\d+|\d+)", str(raw)):
            out.append(float(found.group()))
    return out

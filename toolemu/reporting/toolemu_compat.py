"""ToolEmu's `read_eval_results` output, from the same eval files, by the same rules.

ToolEmu keeps the records that have `eval_scores`, reads each metric's score as a float, and prints the mean,
the population std, a histogram and the total, then the same after binarising at 2. This module prints the
same numbers (a record it cannot read is named by its eval_id rather than dumped whole).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from toolemu.log import read_jsonl
from toolemu.scorers import info_for_eval_type

TOOLEMU_EVAL_TYPES = ("agent_safe", "agent_help")


def _score_lines(scores: list[float]) -> list[str]:
    # ToolEmu prints numpy's mean and std of an empty list too (nan, with a warning); say so plainly instead.
    if not scores:
        return ["mean: nan, std: nan", "total count: 0"]
    lines = [f"mean: {np.mean(scores):.4f}, std: {np.std(scores):.4f}"]
    lines += [f"score {k}: count {v}" for k, v in sorted(Counter(scores).items())]
    lines.append(f"total count: {len(scores)}")
    return lines


def read_eval_results(prefix: str, eval_types: list[str] | None = None, bin_threshold: int | None = None) -> str:
    out: list[str] = []
    for eval_type in eval_types or list(TOOLEMU_EVAL_TYPES):
        path = Path(f"{prefix}_eval_{eval_type}.jsonl")
        if not path.exists():
            out.append(f"[Info] no eval results for {eval_type}")
            continue
        records = read_jsonl(path)
        out.append(f"[Info] Loaded {len(records)} eval results from {path}")
        scored = [r for r in records if "eval_scores" in r]
        info = info_for_eval_type(eval_type)
        metric = info.metric
        out.append(f"=== {eval_type}: {metric} ===")
        scores: list[float] = []
        for r in scored:
            try:
                scores.append(float(r["eval_scores"][metric]))
            except (KeyError, TypeError, ValueError):
                out.append(f"Error processing eval_id {r.get('eval_id')}")
        out += _score_lines(scores)
        threshold = info.threshold if bin_threshold is None else bin_threshold
        out.append("-- After binarization: --")
        out += _score_lines([float(s >= threshold) for s in scores])
    return "\n".join(out)

"""ToolEmu's `read_eval_results` output, from the same eval files, by the same rules.

ToolEmu keeps the records that have `eval_scores`, reads each metric's score as a number, and prints the mean, the
population std, a histogram and the total, then the same after binarising at 2. It joins nothing: every line counts,
so replicate judgements (`--num-replicates`) and the lines of concatenated shards are pooled. This module prints the
same numbers (a record it cannot read is named by its eval_id rather than dumped whole). Scores are read as the forks
read them: the first number in the text, so "2 (Possible Mild Risk)" is 2.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from toolemu.log import read_jsonl
from toolemu.log.layout import EVAL_INFIX, REJUDGE_MARK
from toolemu.log.toolemu_format import score_number
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


def eval_types_beside(prefix: str) -> list[str]:
    """ToolEmu's two eval types, then any other `<prefix>_eval_<type>.jsonl` beside the prefix (a fork's)."""
    base = Path(prefix)
    head = base.name + EVAL_INFIX
    found = sorted(
        p.name[len(head) : -len(".jsonl")]
        for p in base.parent.glob(f"{base.name}{EVAL_INFIX}*.jsonl")
        if not p.name.endswith(".errors.jsonl") and REJUDGE_MARK not in p.name  # re-judgements are not the headline
    )
    return list(dict.fromkeys([*TOOLEMU_EVAL_TYPES, *found]))


def read_eval_results(prefix: str, eval_types: list[str] | None = None, bin_threshold: int | None = None) -> str:
    out: list[str] = []
    for eval_type in eval_types or eval_types_beside(prefix):
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
            raw = r["eval_scores"].get(metric) if isinstance(r["eval_scores"], dict) else None
            value = score_number(raw)
            if value is None:
                out.append(f"Error processing eval_id {r.get('eval_id')}")
            else:
                scores.append(value)
        out += _score_lines(scores)
        threshold = info.threshold if bin_threshold is None else bin_threshold
        out.append("-- After binarization: --")
        out += _score_lines([float(s >= threshold) for s in scores])
    return "\n".join(out)

"""Judge every trajectory of a dump: a thread pool, resume, and failed judgements kept as error records."""

from __future__ import annotations

import logging
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolemu.evaluators.judge import Judge
from toolemu.evaluators.records import Evaluation, eval_path
from toolemu.evaluators.scales import SCALES
from toolemu.llm import BudgetExceeded, ModelHub
from toolemu.records import JsonlWriter, read_jsonl, rewrite_jsonl
from toolemu.runner import progress_bar
from toolemu.specs.models import Toolkit

log = logging.getLogger("toolemu")

Key = tuple[str, int, str]


def trajectory_key(record: dict[str, Any], position: int) -> Key:
    """(case, trial, episode start): ours join on it; ToolEmu's records have only their position."""
    return (record.get("case_name") or f"#{position}", int(record.get("trial") or 0), record.get("started_at", ""))


def eval_key(record: dict[str, Any]) -> Key:
    return (record.get("case_name", ""), int(record.get("trial") or 0), record.get("trajectory_started_at", ""))


@dataclass
class EvalSummary:
    files: dict[str, Path] = field(default_factory=dict)
    total: int = 0
    skipped: int = 0  # judged in an earlier run
    ok: int = 0
    failed: int = 0
    episode_errors: int = 0  # episodes that errored: recorded as "skipped", nothing to judge
    not_run: int = 0
    stop_reason: str = ""

    def lines(self) -> list[str]:
        out = [f"evaluations: {path}" for path in self.files.values()]
        out.append(
            f"judgements: {self.total} (already done {self.skipped}, judged now {self.ok}, failed {self.failed}, "
            f"episodes that errored {self.episode_errors})"
        )
        if self.not_run:
            out.append(f"not judged ({self.stop_reason}): {self.not_run}; run the same command again to resume")
        return out


def prepare_eval_file(path: Path, current: set[Key]) -> set[Key]:
    """Keep the judgements that still match a trajectory; move failed and stale ones aside (never lost)."""
    records = read_jsonl(path)
    keep: dict[Key, dict[str, Any]] = {}
    aside: list[dict[str, Any]] = []
    for rec in records:
        key = eval_key(rec)
        if rec.get("status") in ("ok", "skipped") and key in current and key not in keep:
            keep[key] = rec
        else:
            aside.append(rec)
    if aside:
        errors = JsonlWriter(path.with_name(path.stem + ".errors.jsonl"))
        for rec in aside:
            errors.append(rec)
        rewrite_jsonl(path, list(keep.values()))
    return set(keep)


def evaluate_trajectories(
    trajectories: Path,
    hub: ModelHub,
    eval_types: list[str],
    num_samples: int = 1,
    batch_size: int = 1,
    toolkits: dict[str, Toolkit] | None = None,
    show_progress: bool = True,
) -> EvalSummary:
    records = read_jsonl(trajectories)
    keys = [trajectory_key(r, i) for i, r in enumerate(records)]
    summary = EvalSummary()
    tasks: list[tuple[str, int]] = []
    writers: dict[str, JsonlWriter] = {}
    for eval_type in eval_types:
        path = eval_path(trajectories, eval_type)
        summary.files[eval_type] = path
        done = prepare_eval_file(path, set(keys))
        writers[eval_type] = JsonlWriter(path)
        todo = [(eval_type, i) for i, key in enumerate(keys) if key not in done]
        summary.total += len(keys)
        summary.skipped += len(keys) - len(todo)
        tasks += todo
    judges = {t: Judge(hub.model("evaluator"), SCALES[t], toolkits) for t in eval_types}
    progress = progress_bar()
    bar = progress.add_task("judgements", total=len(tasks), failed=0, cost=0.0)
    if show_progress:
        progress.start()
    pending = list(tasks)
    running: dict[Future[Evaluation], tuple[str, int]] = {}
    cost = 0.0
    with ThreadPoolExecutor(max_workers=batch_size, thread_name_prefix="judge") as executor:
        try:
            while pending or running:
                while pending and len(running) < batch_size and not summary.stop_reason:
                    eval_type, i = pending.pop(0)
                    running[executor.submit(judges[eval_type].judge, records[i], i, num_samples)] = (eval_type, i)
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    eval_type, _ = running.pop(fut)
                    try:
                        evaluation = fut.result()
                    except BudgetExceeded as exc:
                        summary.stop_reason = str(exc)
                        summary.not_run += 1
                        continue
                    writers[eval_type].append(evaluation.to_record())
                    cost += evaluation.cost_usd
                    if evaluation.status == "ok":
                        summary.ok += 1
                    elif evaluation.status == "skipped":
                        summary.episode_errors += 1
                    else:
                        summary.failed += 1
                    progress.update(bar, advance=1, failed=summary.failed, cost=cost)
        except KeyboardInterrupt:
            summary.stop_reason = "interrupted"
            for fut in running:
                fut.cancel()
            raise
        finally:
            progress.stop()
            summary.not_run += len(pending)
    if summary.failed:
        log.warning("%d judgements failed; they are recorded with their reason and counted in reports", summary.failed)
    return summary

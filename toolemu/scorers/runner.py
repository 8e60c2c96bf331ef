"""Score every trajectory of a run with a set of scorers: a thread pool, resume, failures kept as error records."""

from __future__ import annotations

import logging
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolemu.llm import StopRun
from toolemu.llm.usage import BudgetUse
from toolemu.log import Evaluation, JsonlWriter, Trajectory, eval_file_key, rewrite_jsonl, run_files, scan_jsonl
from toolemu.log.jsonl import errors_file_of, heal_tail
from toolemu.log.lock import run_lock
from toolemu.log.read import parse_evaluation, read_trajectories
from toolemu.progress import progress_bar
from toolemu.scorers.base import Scorer, ScoringContext
from toolemu.scorers.identity import identity_of, stamped

log = logging.getLogger("toolemu")

Key = tuple[str, int, str]


def trajectory_key(trajectory: Trajectory, position: int) -> Key:
    """(case, trial, episode start): ours join on it; ToolEmu's records have only their position."""
    return (trajectory.case_name or f"#{position}", trajectory.trial, trajectory.started_at)


@dataclass
class EvalSummary:
    files: dict[str, Path] = field(default_factory=dict)
    total: int = 0
    skipped: int = 0  # judged in an earlier run
    ok: int = 0
    failed: int = 0
    episode_errors: int = 0  # episodes that errored: recorded as "skipped", nothing to judge
    not_applicable: int = 0  # outside a scorer's scope (e.g. attack on a case with no threat)
    not_run: int = 0
    other_judge: int = 0  # kept judgements of another judge, moved aside and judged again
    judges: dict[str, str] = field(default_factory=dict)  # eval file key -> the judge's label (model [id])
    stop_reason: str = ""
    stop_kind: str = ""  # "", "interrupted", "budget", "access" (a refused key)
    set_aside: int = 0  # unreadable evaluation lines (a torn last line included) moved to the errors files
    unreadable: list[str] = field(default_factory=list)  # trajectory lines that are not records: not judged
    budget: BudgetUse | None = None  # what the command spent (set by toolemu.api.evaluate)

    def add(self, other: EvalSummary) -> None:
        """Fold a panel judge's summary into this one."""
        self.files |= other.files
        self.judges |= other.judges
        counts = ("total", "skipped", "ok", "failed", "episode_errors", "not_applicable", "not_run", "other_judge")
        for name in (*counts, "set_aside"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if not self.stop_kind:
            self.stop_reason, self.stop_kind = other.stop_reason, other.stop_kind
        self.unreadable = self.unreadable or other.unreadable  # every judge reads the same trajectory file

    def lines(self) -> list[str]:
        out = [
            f"evaluations: {path}" + (f"  (judge {self.judges[key]})" if key in self.judges else "")
            for key, path in self.files.items()
        ]
        if self.other_judge:
            out.append(
                f"judged again: {self.other_judge} earlier judgements were made by another judge; they are kept in "
                "the .errors.jsonl file beside their eval file"
            )
        if self.set_aside:
            out.append(f"set aside: {self.set_aside} unreadable evaluation lines (kept in the .errors.jsonl files)")
        out.append(
            f"judgements: {self.total} (already done {self.skipped}, judged now {self.ok}, failed {self.failed}, "
            f"episodes that errored {self.episode_errors}, not applicable {self.not_applicable})"
        )
        if self.not_run:
            out.append(f"not judged ({self.stop_reason}): {self.not_run}; run the same command again to resume")
        if self.unreadable:
            out.append(f"not judged: {len(self.unreadable)} lines of the trajectory file are not trajectory records")
        return out


def prepare_eval_file(path: Path, eval_type: str, current: set[Key], judge_id: str = "") -> tuple[set[Key], int, int]:
    """Keep the judgements that still match a trajectory and were made by this judge; move failed, stale,
    unreadable and other judges' ones aside (never lost: the errors file beside it gets them). A record that
    names no judge (written before judges had ids) is kept. Returns the kept keys, how many records another
    judge made, and how many unreadable lines (a torn last line included) went aside."""
    set_aside = heal_tail(path)
    raw = scan_jsonl(path)
    set_aside += len(raw.bad_lines)
    keep: dict[Key, dict[str, Any]] = {}
    aside = raw.unparsed_records("not a whole evaluation record; judged again")
    other_judge = 0
    for position, record in enumerate(raw.records):
        try:
            ev = parse_evaluation(record, eval_type, position)
        except ValidationError:
            aside.append(record)
            set_aside += 1
            continue
        mine = not judge_id or not ev.judge_id or ev.judge_id == judge_id
        if mine and ev.status in ("ok", "skipped", "not_applicable") and ev.key in current and ev.key not in keep:
            keep[ev.key] = record
        else:
            other_judge += not mine
            aside.append(record)
    if aside:
        errors = JsonlWriter(errors_file_of(path))
        for record in aside:
            errors.append(record)
        rewrite_jsonl(path, list(keep.values()))
    return set(keep), other_judge, set_aside


def evaluate_trajectories(
    trajectories: Path,
    scorers: list[Scorer],
    ctx: ScoringContext,
    batch_size: int = 1,
    show_progress: bool = True,
    judge: str | None = None,
) -> EvalSummary:
    """Judge every trajectory with every scorer; `judge` (a panel judge's slug) writes `_eval_<type>@<judge>`.
    The run is locked against other writers meanwhile. Lines of the trajectory file that are not records cannot be
    judged: they are listed in `unreadable` (the caller reports them)."""
    files = run_files(trajectories)
    with run_lock(files.trajectories):
        return _evaluate(files.trajectories, scorers, ctx, batch_size, show_progress, judge)


def _evaluate(
    trajectories: Path,
    scorers: list[Scorer],
    ctx: ScoringContext,
    batch_size: int,
    show_progress: bool,
    judge: str | None,
) -> EvalSummary:
    files = run_files(trajectories)
    records, problems = read_trajectories(files.trajectories)
    keys = [trajectory_key(r, i) for i, r in enumerate(records)]
    summary = EvalSummary(unreadable=problems)
    tasks: list[tuple[Scorer, int]] = []
    writers: dict[str, JsonlWriter] = {}
    identities = {scorer.info.name: identity_of(scorer, ctx) for scorer in scorers}
    for scorer in scorers:
        eval_type = scorer.info.eval_type
        file_key = eval_file_key(eval_type, judge)
        path = files.eval_file(file_key)
        identity = identities[scorer.info.name]
        summary.files[file_key] = path
        summary.judges[file_key] = identity.label
        done, other_judge, set_aside = prepare_eval_file(path, eval_type, set(keys), identity.id)
        summary.other_judge += other_judge
        summary.set_aside += set_aside
        writers[eval_type] = JsonlWriter(path)
        todo = [(scorer, i) for i, key in enumerate(keys) if key not in done]
        summary.total += len(keys)
        summary.skipped += len(keys) - len(todo)
        tasks += todo
    progress = progress_bar()
    bar = progress.add_task("judgements", total=len(tasks), failed=0, cost=0.0)
    if show_progress:
        progress.start()
    pending = list(tasks)
    running: dict[Future[Evaluation], Scorer] = {}
    cost = 0.0
    with ThreadPoolExecutor(max_workers=batch_size, thread_name_prefix="judge") as executor:
        try:
            while pending or running:
                while pending and len(running) < batch_size and not summary.stop_reason:
                    scorer, i = pending.pop(0)
                    running[executor.submit(scorer.score, records[i], i, ctx)] = scorer
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    scorer = running.pop(fut)
                    try:
                        evaluation = fut.result()
                    except StopRun as exc:  # a budget or a refused key: nothing new starts
                        summary.not_run += 1
                        if not summary.stop_kind:
                            summary.stop_reason, summary.stop_kind = str(exc), exc.kind
                        continue
                    evaluation = stamped(evaluation, identities[scorer.info.name])
                    writers[scorer.info.eval_type].append(evaluation)
                    cost += evaluation.cost_usd
                    if evaluation.status == "ok":
                        summary.ok += 1
                    elif evaluation.status == "skipped":
                        summary.episode_errors += 1
                    elif evaluation.status == "not_applicable":
                        summary.not_applicable += 1
                    else:
                        summary.failed += 1
                    progress.update(bar, advance=1, failed=summary.failed, cost=cost)
        except KeyboardInterrupt:
            summary.stop_reason = summary.stop_kind = "interrupted"
            for fut in running:
                fut.cancel()
            raise
        finally:
            progress.stop()
            summary.not_run += len(pending)
    if summary.failed:
        log.warning("%d judgements failed; they are recorded with their reason and counted in reports", summary.failed)
    return summary

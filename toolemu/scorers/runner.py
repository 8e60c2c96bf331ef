"""Score every trajectory of a run with a set of scorers, on the one work pool: resume, failures kept as error
records; and `score_trajectory`, the one place a scorer's Score becomes an Evaluation."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from toolemu.llm.options import ModelOptions
from toolemu.llm.stops import StopRun
from toolemu.log import EpisodeError, Evaluation, JudgeIdentity, Trajectory, eval_file_key, now, run_files
from toolemu.log.batched import BatchedJsonlWriter
from toolemu.log.evaluation import JudgeSampling
from toolemu.log.lock import run_lock
from toolemu.log.read import parse_evaluation, read_trajectories
from toolemu.log.resume import resume_records
from toolemu.log.usage import BudgetUse
from toolemu.pool import PoolOutcome, Recorded, run_pool
from toolemu.scorers.base import Scorer, ScoringContext, ScoringError
from toolemu.scorers.identity import identity_of
from toolemu.secrets import clip

if TYPE_CHECKING:
    from toolemu.scorers.rejudge import RejudgeSummary

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
    rejudged: RejudgeSummary | None = None  # re-judgements (evaluate --rejudge K), apart from the judgements above

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
        if self.rejudged is not None:
            out += self.rejudged.lines()
        return out


def prepare_eval_file(path: Path, eval_type: str, current: set[Key], judge_id: str = "") -> tuple[set[Key], int, int]:
    """Keep the judgements that still match a trajectory and were made by this judge; move failed, stale,
    unreadable and other judges' ones aside (never lost: the errors file beside it gets them). A record that
    names no judge (written before judges had ids) is kept. Returns the kept keys, how many records another
    judge made, and how many unreadable lines (a torn last line included) went aside."""

    def mine(ev: Evaluation) -> bool:
        return not judge_id or not ev.judge_id or ev.judge_id == judge_id

    def keep(ev: Evaluation) -> Key | None:
        done = ev.status in ("ok", "skipped", "not_applicable") and ev.key in current
        return ev.key if mine(ev) and done else None

    resumed = resume_records(
        path,
        lambda record, position: parse_evaluation(record, eval_type, position),
        keep,
        "not a whole evaluation record; judged again",
    )
    return set(resumed.kept), sum(not mine(ev) for ev in resumed.aside), resumed.set_aside


def judge_sampling(options: ModelOptions, samples: int) -> JudgeSampling:
    """What an LLM judge's record keeps of how it sampled: the temperature and seed its backend is sent, and the
    verdicts it draws per trajectory."""
    from toolemu.llm.providers import sent_sampling  # the model layer loads where a judge runs, not for a report

    temperature, seed = sent_sampling(options)
    return JudgeSampling(temperature=temperature, seed=seed, samples=samples)


def score_trajectory(
    scorer: Scorer, trajectory: Trajectory, eval_id: int, ctx: ScoringContext, judge: JudgeIdentity | None = None
) -> Evaluation:
    """One judgement as its record: the scorer's Score, or why there is none (the episode errored, the case is
    outside the scorer's scope, the judgement failed), with who judged, when, and what it cost. Raises only a stop
    (a budget, a refused key): the judgement is then not made."""
    judge = judge or identity_of(scorer, ctx)
    info = scorer.info
    options = ctx.hub.options_for(ctx.evaluator_role) if scorer.needs_model and ctx.hub else None
    model = options.description() if options is not None else None
    base: dict[str, Any] = {
        "eval_id": eval_id,
        "eval_type": info.eval_type,
        "scorer": info.name,
        "run_id": trajectory.run_id,
        "case_name": trajectory.case_name or f"#{eval_id}",
        "case_idx": trajectory.case_idx,
        "trial": trajectory.trial,
        "trajectory_started_at": trajectory.started_at,
        "evaluator": model,
        "judge_id": judge.id,
        "judge": judge,
        "sampling": judge_sampling(options, ctx.samples) if options is not None else None,
        "rejudge": ctx.rejudge,
        "started_at": now(),
    }
    if trajectory.status == "error":
        reason = EpisodeError(type="EpisodeError", message="the episode errored; there is nothing to judge")
        return Evaluation(**base, status="skipped", error=reason, finished_at=now())
    if not scorer.applies(trajectory):
        return Evaluation(**base, status="not_applicable", finished_at=now())
    one = ctx.for_judgement()
    spent = {"samples": one.drawn, "sample_errors": one.sample_errors, "usage": one.usage}
    try:
        score = scorer.score(trajectory, one)
    except StopRun:
        raise
    except Exception as exc:  # noqa: BLE001 - a judgement that cannot be made is an error record, not a crash
        error = exc.error if isinstance(exc, ScoringError) else EpisodeError(type=type(exc).__name__, message=str(exc))
        error = error.model_copy(update={"message": clip(error.message, 2000)})
        return Evaluation(**base, **spent, cost_usd=one.usage.cost_usd, status="error", error=error, finished_at=now())
    if score.value is None or not math.isfinite(score.value):
        error = EpisodeError(type="NoScore", message=f"scorer {info.name!r} gave no finite value: {score.value!r}")
        return Evaluation(**base, **spent, cost_usd=one.usage.cost_usd, status="error", error=error, finished_at=now())
    return Evaluation(
        **base,
        **spent,
        cost_usd=one.usage.cost_usd,
        evaluator_thought=score.explanation,
        label=score.label,
        score=score.value,
        log_summary=score.summary,
        eval_scores={info.metric: score.value},
        metadata=score.metadata,
        status="ok",
        finished_at=now(),
    )


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
        records, problems = read_trajectories(files.trajectories)
        keys = [trajectory_key(r, i) for i, r in enumerate(records)]
        summary = EvalSummary(unreadable=problems)
        tasks: list[tuple[Scorer, int]] = []
        writers: dict[str, BatchedJsonlWriter] = {}
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
            writers[eval_type] = BatchedJsonlWriter(path)
            todo = [(scorer, i) for i, key in enumerate(keys) if key not in done]
            summary.total += len(keys)
            summary.skipped += len(keys) - len(todo)
            tasks += todo

        def work(task: tuple[Scorer, int]) -> Evaluation:
            scorer, i = task
            return score_trajectory(scorer, records[i], i, ctx, identities[scorer.info.name])

        counts = {"ok": "ok", "skipped": "episode_errors", "not_applicable": "not_applicable"}
        outcome = judge_in_pool(tasks, work, writers, summary, counts, "judgements", batch_size, show_progress)
        summary.not_run += len(outcome.not_run)
        summary.stop_reason, summary.stop_kind = outcome.stop_reason, outcome.stop_kind
        if summary.failed:
            log.warning(
                "%d judgements failed; they are recorded with their reason and counted in reports", summary.failed
            )
        return summary


JudgeTask = TypeVar("JudgeTask", bound=tuple[Any, ...])  # (scorer, trajectory index, ...)


def judge_in_pool(
    tasks: Sequence[JudgeTask],
    work: Callable[[JudgeTask], Evaluation],
    writers: dict[str, BatchedJsonlWriter],
    summary: object,
    counts: dict[str, str],
    label: str,
    batch_size: int,
    show_progress: bool,
) -> PoolOutcome[JudgeTask]:
    """Judge `tasks` (each a scorer first) in the one pool, as evaluate and --rejudge both do: each evaluation goes to
    its eval type's writer as it comes and adds one to the `summary` count that `counts` names for its status
    ("failed" for any other); the writers are closed whatever stops the pool."""

    def record(task: JudgeTask, evaluation: Evaluation) -> Recorded:
        name = counts.get(evaluation.status, "failed")
        setattr(summary, name, getattr(summary, name) + 1)
        written = writers[task[0].info.eval_type].append(evaluation)
        return Recorded(written, name == "failed", evaluation.cost_usd)

    try:
        return run_pool(tasks, work, record, workers=batch_size, label=label, show_progress=show_progress)
    finally:
        for writer in writers.values():
            writer.close()

"""Judging again: a sample of a run's episodes judged K more times by the same judge (`toolemu evaluate RUN
--rejudge K`), so that a report can say how often a verdict would change (the flip rate).

Re-judgements go to `<trajectories>_eval_<type>#rejudge.jsonl`, one record per (episode, k) with `rejudge = k`
(1..K), never to the headline's eval file: the run's numbers do not change, and readers of the headline never pool
them. Each call is asked afresh (its own cache salt) with the judge's own settings (temperature 0 and a seed where
the provider takes one, unless told otherwise). Only LLM judges are judged again: a deterministic scorer's rule
gives the same verdict every time. The file resumes like any eval file: what this judge has done is kept, the rest
(another judge's records, failed ones, ones of trajectories since re-run) is moved to its `.errors.jsonl`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

from toolemu.errors import InputError
from toolemu.log import Evaluation, Trajectory, run_files
from toolemu.log.batched import BatchedJsonlWriter
from toolemu.log.evaluation import short_hash
from toolemu.log.layout import REJUDGE_MARK
from toolemu.log.lock import run_lock
from toolemu.log.read import parse_evaluation, read_trajectories
from toolemu.log.resume import resume_records
from toolemu.scorers.base import Scorer, ScoringContext
from toolemu.scorers.identity import identity_of
from toolemu.scorers.runner import Key, judge_in_pool, score_trajectory, trajectory_key

log = logging.getLogger("toolemu")

Slot = tuple[Key, int]  # (the episode's key, k)
# K at most (the CLI's bound, toolemu/cli/limits.py): a flip rate needs a few re-judgements, and a typo such as
# 1000000000000 would build its task list (sample x K x scorers) until memory ran out.
MAX_TIMES = 100
DONE = ("ok", "skipped", "not_applicable")


@dataclass
class RejudgeSummary:
    times: int = 0  # K
    episodes: int = 0  # episodes in the sample
    files: dict[str, Path] = field(default_factory=dict)
    total: int = 0  # re-judgements asked for: sample x K x LLM scorers
    skipped: int = 0  # made in an earlier run
    ok: int = 0
    failed: int = 0
    not_judged: int = 0  # the scorer does not apply, or the episode errored
    not_run: int = 0
    other_judge: int = 0  # another judge's re-judgements, moved aside
    set_aside: int = 0
    deterministic: list[str] = field(default_factory=list)  # scorers not judged again: a rule decides them
    stop_reason: str = ""
    stop_kind: str = ""

    def lines(self) -> list[str]:
        out = [f"re-judgements: {path}" for path in self.files.values()]
        out.append(
            f"re-judged: {self.episodes} episodes x {self.times} times: {self.total} re-judgements (already done "
            f"{self.skipped}, judged now {self.ok}, failed {self.failed}, not applicable {self.not_judged})"
        )
        if self.other_judge:
            out.append(f"judged again: {self.other_judge} re-judgements by another judge moved to the .errors.jsonl")
        if self.deterministic:
            out.append(f"not re-judged (deterministic: same verdict every time): {', '.join(self.deterministic)}")
        if self.not_run:
            out.append(f"not re-judged ({self.stop_reason}): {self.not_run}; run the same command again to resume")
        return out


def rejudge_sample(records: list[Trajectory], sample: int | None) -> list[int]:
    """The positions to judge again: every episode that did not error, or `sample` of them chosen by a hash of
    their key (the same ones on every resume, whatever order the file is in), in file order."""
    eligible = [i for i, r in enumerate(records) if r.status != "error"]
    if sample is None or sample >= len(eligible):
        return eligible
    ranked = sorted(eligible, key=lambda i: short_hash(list(trajectory_key(records[i], i))))
    return sorted(ranked[:sample])


def check_times(times: int) -> None:
    """K within 1..MAX_TIMES, before any task is made."""
    if not 1 <= times <= MAX_TIMES:
        message = f"expected 1 to {MAX_TIMES} re-judgements per episode (a bound against a typo), got {times:,}"
        raise InputError.single("command line", message, field="--rejudge")


def rejudge_trajectories(
    trajectories: Path,
    scorers: list[Scorer],
    ctx: ScoringContext,
    times: int,
    sample: int | None = None,
    batch_size: int = 1,
    show_progress: bool = True,
) -> RejudgeSummary:
    """Judge `sample` episodes (default: all that did not error) `times` more times with each LLM scorer, on the
    pool, into the re-judgement files; the run is locked against other writers meanwhile."""
    check_times(times)
    files = run_files(trajectories)
    with run_lock(files.trajectories):
        records, _ = read_trajectories(files.trajectories)  # lines that are not records: the headline pass names them
        keys = [trajectory_key(r, i) for i, r in enumerate(records)]
        chosen = rejudge_sample(records, sample)
        summary = RejudgeSummary(times=times, episodes=len(chosen))
        summary.deterministic = [s.info.name for s in scorers if not s.needs_model]
        judged = [s for s in scorers if s.needs_model]
        identities = {s.info.name: identity_of(s, ctx) for s in judged}
        writers: dict[str, BatchedJsonlWriter] = {}
        tasks: list[tuple[Scorer, int, int]] = []
        for scorer in judged:
            eval_type = scorer.info.eval_type
            path = files.eval_file(eval_type + REJUDGE_MARK)
            summary.files[eval_type] = path
            done = _prepare(path, eval_type, set(keys), identities[scorer.info.name].id, summary)
            todo = [(scorer, i, k) for i in chosen for k in range(1, times + 1) if (keys[i], k) not in done]
            summary.total += len(chosen) * times
            summary.skipped += len(chosen) * times - len(todo)
            tasks += todo
            writers[eval_type] = BatchedJsonlWriter(path)

        def work(task: tuple[Scorer, int, int]) -> Evaluation:
            scorer, i, k = task
            return score_trajectory(scorer, records[i], i, replace(ctx, rejudge=k), identities[scorer.info.name])

        counts = {"ok": "ok", "skipped": "not_judged", "not_applicable": "not_judged"}
        outcome = judge_in_pool(tasks, work, writers, summary, counts, "re-judgements", batch_size, show_progress)
        summary.not_run = len(outcome.not_run)
        summary.stop_reason, summary.stop_kind = outcome.stop_reason, outcome.stop_kind
        if summary.failed:
            log.warning("%d re-judgements failed; they are recorded with their reason", summary.failed)
        return summary


def _prepare(path: Path, eval_type: str, current: set[Key], judge_id: str, summary: RejudgeSummary) -> set[Slot]:
    """Keep this judge's finished re-judgements of trajectories that are still the run's (any k, any sample: a
    smaller --rejudge later loses nothing); move the rest aside."""

    def keep(ev: Evaluation) -> Slot | None:
        mine = ev.judge_id == judge_id
        return (ev.key, ev.rejudge) if mine and ev.rejudge >= 1 and ev.status in DONE and ev.key in current else None

    resumed = resume_records(
        path,
        lambda record, position: parse_evaluation(record, eval_type, position),
        keep,
        "not a whole evaluation record; judged again",
    )
    summary.other_judge += sum(ev.judge_id != judge_id for ev in resumed.aside)
    summary.set_aside += resumed.set_aside
    return set(resumed.kept)

"""Judge stability: each scorer's flip rate over the episodes `toolemu evaluate RUN --rejudge K` judged again.

An episode counts when its headline judgement and at least one re-judgement by the same judge are scored. Each of
those judgements is binarised as the report's rate is (value >= the scorer's threshold); the episode flipped when
they do not all agree. The flip rate is the share of counted episodes that flipped, with a percentile bootstrap CI
over them; the episodes that flipped are listed as the borderline cases. Re-judgements never reach the headline
numbers: they are read here, from their own files, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from toolemu.log import Evaluation, RunLog, Trajectory
from toolemu.log.layout import REJUDGE_MARK
from toolemu.log.read import read_evaluations
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.qualifiers import UNSTABLE_FLIP_RATE, FlipCase, FlipStats
from toolemu.reporting.stats import bootstrap_mean_ci
from toolemu.scorers.base import MetricInfo
from toolemu.secrets import redactor


@dataclass
class Rejudged:
    """One file's re-judgements of one run file, by eval type (`<type>` of `<type>#rejudge`)."""

    log: RunLog
    evaluations: dict[str, list[Evaluation]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read_rejudged(log: RunLog) -> Rejudged:
    """The re-judgement files beside a run file (none: empty), scrubbed of secrets as every record read is."""
    out = Rejudged(log)
    clean = redactor()
    for key, path in log.rejudge_files.items():
        eval_type = key.removesuffix(REJUDGE_MARK)
        out.evaluations[eval_type], problems = read_evaluations(path, eval_type, clean)
        out.problems += problems
    return out


def _join_key(log: RunLog, item: Trajectory | Evaluation, position: int) -> Hashable:
    """Ours join on (case, trial, episode start); a ToolEmu dump's re-judgements on the trajectory's position."""
    if log.format == "toolemu":
        return item.eval_id if isinstance(item, Evaluation) else position
    return log.join_key(item, position)


@dataclass
class _Tally:
    judges: set[str] = field(default_factory=set)
    flags: list[float] = field(default_factory=list)
    cases: list[FlipCase] = field(default_factory=list)
    times: int = 0
    other_judge: int = 0
    unscored: int = 0


def run_flips(run: LoadedRun, rejudged: list[Rejudged]) -> list[FlipStats]:
    """Flip rates of one run, per scorer with re-judgements; a flipped case's `episode` is counted from the run's
    first episode (build.combine shifts it to the report's, so that it links to its trace)."""
    infos = {i.eval_type: i for i in run.scorers}
    views = {id(src.trajectory): i for i, src in enumerate(run.sources or [])}
    tallies: dict[str, _Tally] = {}
    notes: list[str] = []
    for found in rejudged:
        log = found.log
        notes += found.problems
        episodes, _ = log.episodes()
        for eval_type, evaluations in found.evaluations.items():
            info = infos.get(eval_type)
            if info is None:
                notes.append(f"{log.files.label}: re-judgements of {eval_type}, which the run has no headline of")
                continue
            by_key: dict[Hashable, list[Evaluation]] = {}
            for position, ev in enumerate(evaluations):
                by_key.setdefault(_join_key(log, ev, position), []).append(ev)
            tally = tallies.setdefault(info.name, _Tally())
            for ep in episodes:
                again = by_key.get(_join_key(log, ep.trajectory, ep.position))
                if again:
                    view = views.get(id(ep.trajectory))
                    _count(tally, info, ep.evaluations.get(eval_type) or [], again, ep.trajectory, view)
    out = []
    for info in run.scorers:
        tally = tallies.get(info.name)
        if tally is not None and (tally.flags or tally.other_judge or tally.unscored):
            out.append(_stats(run.info.run, info, tally, notes))
    return out


def _count(
    tally: _Tally,
    info: MetricInfo,
    headline: list[Evaluation],
    again: list[Evaluation],
    trajectory: Trajectory,
    view: int | None,
) -> None:
    first = next((ev for ev in headline if ev.value_of(info.metric) is not None), None)
    redone = sorted((ev for ev in again if ev.value_of(info.metric) is not None), key=lambda ev: ev.rejudge)
    if first is None or not redone:
        tally.unscored += 1
        return
    if first.judge_id and any(ev.judge_id != first.judge_id for ev in redone):
        tally.other_judge += 1  # the headline was made by another judge: no flip can be read from the pair
        return
    judgements = [first, *redone]
    values = [v for ev in judgements if (v := ev.value_of(info.metric)) is not None]
    flipped = len({info.at_or_above(v) for v in values}) > 1
    tally.judges.add((redone[0].judge.label if redone[0].judge is not None else "") or redone[0].judge_model)
    tally.times = max(tally.times, len(redone))
    tally.flags.append(float(flipped))
    if flipped:
        tally.cases.append(
            FlipCase(
                case_name=trajectory.case_name,
                trial=trajectory.trial,
                episode=view,
                values=values,
                labels=[ev.label for ev in judgements],
            )
        )


def _stats(run: str, info: MetricInfo, tally: _Tally, notes: list[str]) -> FlipStats:
    n = len(tally.flags)
    rate = sum(tally.flags) / n if n else None
    mine = list(notes)
    if tally.other_judge:
        mine.append(f"{tally.other_judge} re-judged episodes were judged first by another judge: left out")
    if tally.unscored:
        mine.append(f"{tally.unscored} re-judged episodes lack a scored headline or re-judgement: left out")
    return FlipStats(
        run=run,
        scorer=info.name,
        judge=", ".join(sorted(tally.judges)),
        times=tally.times,
        episodes=n,
        flipped=len(tally.cases),
        rate=rate,
        ci=bootstrap_mean_ci(tally.flags),
        unstable=rate is not None and rate > UNSTABLE_FLIP_RATE,
        cases=tally.cases,
        notes=mine,
    )

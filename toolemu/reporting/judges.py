"""Which judges made a report's numbers, and what several judges of one run say together.

- The legend: per run and scorer, every judge (its id, model and eval file) and how many verdicts it gave.
- Panels: where two or more judges scored the same episodes of a run (a judge panel, `--evaluator-model a,b`),
  each judge's numbers, every pair's agreement (kappa, confusion matrix, CIs), the panel's score (the mean of the
  judges' scores, and the majority category) and the spread of each headline rate across the judges.
- Corrected rates: where a judge's accuracy against human labels is given, its rate corrected for its errors.

The run's headline numbers stay those of the standard eval file (the panel's first judge), the file ToolEmu's own
readers take; the panel's numbers stand beside them, never in their place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from toolemu.log import Episode, Evaluation, Score, split_eval_key
from toolemu.log.evaluation import UNRECORDED
from toolemu.reporting.accuracy import JudgeAccuracy, corrected_rate
from toolemu.reporting.agreement import agreement_stats, category_of
from toolemu.reporting.model import CorrectedRate, JudgeUse, PanelJudgeStats, PanelStats, RateSpread
from toolemu.reporting.stats import metric_stats
from toolemu.scorers.base import MetricInfo


@dataclass
class Member:
    """One judge's verdicts in one eval file of one run, aligned with the run's episodes."""

    file: str
    use: JudgeUse
    scores: list[Score | None] = field(default_factory=list)  # per episode, replicates pooled: what pairs
    lines: list[Score] = field(default_factory=list)  # every verdict line: what the judge's own numbers count

    @property
    def values(self) -> list[float]:
        return [s.value for s in self.lines if s.scored and s.value is not None]

    def scored(self, i: int) -> Score | None:
        s = self.scores[i]
        return s if s is not None and s.scored else None


def score_judge(score: Score) -> str:
    """The judge behind a Score, keyed like `Evaluation.judge_key`."""
    if score.judge_id:
        return score.judge_id
    return f"{UNRECORDED}:{score.judge_model}" if score.judge_model else UNRECORDED


def pooled_score(scores: list[Score], info: MetricInfo, has_file: bool) -> Score | None:
    """The episode's score for one scorer from its evaluation lines of that scorer, for tables by episode and the
    trace viewer: the mean over replicate evaluations; None when the run has no such evaluations at all."""
    if not scores:
        return Score(scorer=info.name, metric=info.metric, status="missing") if has_file else None
    ok = [s for s in scores if s.scored]
    if len(scores) == 1 or not ok:
        return scores[0]
    first = ok[0]
    values = [s.value for s in ok if s.value is not None]
    return first.model_copy(
        update={
            "value": sum(values) / len(values),
            "samples": sum(s.samples for s in ok),
            "metadata": {**first.metadata, "replicates": values},
        }
    )


def _use(run: str, info: MetricInfo, file: str, key: str, ev: Evaluation) -> JudgeUse:
    model = ev.judge_model
    unrecorded = f"{model} [id not recorded]" if model else "judge not recorded"  # ToolEmu's, and our old records
    label = f"{model} [{key}]" if ev.judge_id else unrecorded
    return JudgeUse(
        run=run,
        scorer=info.name,
        file=file,
        judge=key,
        label=label,
        model=model,
        kind=ev.judge.kind if ev.judge else "",
        prompt=ev.judge.prompt if ev.judge else "",
        parameters=dict(ev.judge.parameters) if ev.judge else {},
        headline=split_eval_key(file)[1] is None,
    )


def collect_members(run: str, episodes: Sequence[Episode], infos: Sequence[MetricInfo]) -> dict[str, list[Member]]:
    """Every judge of every scorer shown, by scorer name: one member per (eval file, judge)."""
    shown = {i.eval_type: i for i in infos}
    members: dict[tuple[str, str], Member] = {}
    per_episode: dict[tuple[str, str], dict[int, list[Score]]] = {}
    for i, ep in enumerate(episodes):
        for file, evaluations in ep.evaluations.items():
            info = shown.get(split_eval_key(file)[0])
            if info is None:
                continue
            for ev in evaluations:
                key = (file, ev.judge_key)
                if key not in members:
                    members[key] = Member(file, _use(run, info, file, key[1], ev))
                per_episode.setdefault(key, {}).setdefault(i, []).append(ev.to_score(info.name, info.metric))
    out: dict[str, list[Member]] = {}
    for key, member in sorted(members.items(), key=lambda kv: (kv[1].use.scorer, not kv[1].use.headline, kv[0])):
        found, info = per_episode.get(key, {}), shown[split_eval_key(member.file)[0]]
        member.scores = [pooled_score(found[i], info, True) if i in found else None for i in range(len(episodes))]
        member.lines = [score for i in sorted(found) for score in found[i]]
        member.use.scored = len(member.values)
        member.use.failed = sum(1 for s in member.lines if s.status == "error")
        out.setdefault(member.use.scorer, []).append(member)
    for group in out.values():
        _unique_labels(group)
    return out


def _unique_labels(members: list[Member]) -> None:
    counts = Counter(m.use.label for m in members)
    for m in members:
        if counts[m.use.label] > 1:
            m.use.label = f"{m.use.label} ({m.file})"


def _majority(categories: list[int], info: MetricInfo) -> int:
    counts = Counter(categories)
    sign = -1 if info.higher_is_better else 1
    return max(counts, key=lambda c: (counts[c], sign * c))


def _rates(info: MetricInfo) -> list[tuple[str, str]]:
    rates = [("binarized_rate", f"{info.rate_name} rate")]
    if info.failure_bound is not None:
        rates.append(("failure_incidence", "failure incidence"))
    return rates


def panel_stats(run: str, info: MetricInfo, members: list[Member], rng: np.random.Generator) -> PanelStats | None:
    """The panel's numbers, or None when no episode was scored by two of its judges."""
    n = len(members[0].scores) if members else 0
    scored_by = [[m.scored(i) for m in members] for i in range(n)]
    if len(members) < 2 or not any(sum(s is not None for s in row) >= 2 for row in scored_by):
        return None
    judges = [
        PanelJudgeStats(
            judge=m.use.judge,
            label=m.use.label,
            file=m.file,
            stats=metric_stats(info, m.values, m.use.failed),
        )
        for m in members
    ]
    complete = [row for row in scored_by if all(s is not None for s in row)]
    means = [sum(s.value for s in row) / len(row) for row in complete]  # type: ignore[misc]
    majorities = []
    for row in complete:
        cats = [category_of(s.value, s.label, info) for s in row]  # type: ignore[union-attr]
        known = [c for c in cats if c is not None]
        if known:
            majorities.append(float(_majority(known, info)))
    out = PanelStats(
        run=run,
        scorer=info.name,
        judges=judges,
        complete=len(complete),
        incomplete=sum(1 for row in scored_by if 0 < sum(s is not None for s in row) < len(row)),
        mean=metric_stats(info, means, 0),
        majority=metric_stats(info, majorities, 0),
    )
    for attr, name in _rates(info):
        values = [(getattr(j.stats, attr), j.label) for j in judges if getattr(j.stats, attr) is not None]
        if values:
            low, high = min(values), max(values)
            out.spread.append(RateSpread(rate=name, low=low[0], high=high[0], low_judge=low[1], high_judge=high[1]))
    for a, b in combinations(members, 2):
        ca, cb = [], []
        for i in range(n):
            sa, sb = a.scored(i), b.scored(i)
            if sa is None or sb is None:
                continue
            x, y = category_of(sa.value, sa.label, info), category_of(sb.value, sb.label, info)
            if x is not None and y is not None:
                ca.append(x)
                cb.append(y)
        if ca:
            out.agreement.append(agreement_stats(info, ca, cb, rng, (a.use.label, b.use.label)))
    return out


@dataclass
class JudgeSections:
    uses: list[JudgeUse] = field(default_factory=list)
    panels: list[PanelStats] = field(default_factory=list)
    corrected: list[CorrectedRate] = field(default_factory=list)


def judge_sections(
    runs: Sequence[tuple[str, dict[str, list[Member]]]],
    infos: Sequence[MetricInfo],
    rng: np.random.Generator,
    accuracy: Sequence[JudgeAccuracy] = (),
) -> JudgeSections:
    """The legend, the panels and the corrected rates of every run (`runs`: label and members by scorer)."""
    out = JudgeSections()
    for run, by_scorer in runs:
        for info in infos:
            members = by_scorer.get(info.name, [])
            out.uses += [m.use for m in members]
            panel = panel_stats(run, info, members, rng)
            if panel is not None:
                out.panels.append(panel)
            for m in members:
                acc = next((a for a in accuracy if a.applies_to(info.name, m.use.judge)), None)
                if acc is None:
                    continue
                fixed = corrected_rate(run, info, m.use.judge, m.use.label, m.values, acc, rng)
                if not acc.judge_id:
                    fixed.notes.append("the accuracy given names no judge: applied to every judge of the scorer")
                out.corrected.append(fixed)
    return out


def unapplied(accuracy: Sequence[JudgeAccuracy], corrected: Sequence[CorrectedRate]) -> list[str]:
    """A note for each accuracy entry that matched no judge in the report (never silently ignored)."""
    notes = []
    for acc in accuracy:
        if not any(acc.applies_to(c.scorer, c.judge_id) for c in corrected):
            who = f"judge {acc.judge or acc.judge_id}" if acc.judge_id else "any judge"
            notes.append(f"judge accuracy for {acc.scorer} ({who}) matches no judge in this report: not applied")
    return notes

"""From loaded runs to a Report: statistics per run, per toolkit, per risk category and per trial; pass^k;
paired differences between runs on the same cases."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from itertools import combinations

import numpy as np

from toolemu.evaluators.scales import BINARY_THRESHOLD
from toolemu.report.load import LoadedRun
from toolemu.report.model import (
    EPISODE_STATUSES,
    METRICS,
    EpisodeView,
    GroupStats,
    Judgement,
    Metric,
    PairedDiff,
    PassK,
    Report,
)
from toolemu.report.stats import metric_stats, paired_difference, pass_k_curve

BOOTSTRAP_SEED = 0  # fixed, so the same dumps give the same report

JUDGEMENT: dict[Metric, Callable[[EpisodeView], Judgement]] = {
    "ToolCallRisk": lambda ep: ep.safety,
    "Helpfulness": lambda ep: ep.helpfulness,
}


def _scores(episodes: Iterable[EpisodeView], metric: Metric) -> tuple[list[float], int]:
    """Scores of the judged episodes, and the count of failed or missing judgements (an episode that errored
    is counted among the episode statuses instead)."""
    scores, failed = [], 0
    for ep in episodes:
        j = JUDGEMENT[metric](ep)
        if j.status == "ok" and j.score is not None:
            scores.append(j.score)
        elif j.status in ("error", "missing") and ep.status != "error":
            failed += 1
    return scores, failed


def group_stats(run: str, by: str, key: str, episodes: list[EpisodeView], rng: np.random.Generator) -> GroupStats:
    statuses = Counter(ep.status for ep in episodes)
    stats = {m: metric_stats(m, *_scores(episodes, m), rng) for m in METRICS}
    return GroupStats(
        run=run,
        by=by,  # type: ignore[arg-type]
        key=key,
        episodes=len(episodes),
        status_counts={s: statuses.get(s, 0) for s in EPISODE_STATUSES},
        safety=stats["ToolCallRisk"],
        helpfulness=stats["Helpfulness"],
    )


def _grouped(episodes: list[EpisodeView], keys: Callable[[EpisodeView], Iterable[str]]) -> dict[str, list[EpisodeView]]:
    groups: dict[str, list[EpisodeView]] = defaultdict(list)
    for ep in episodes:
        for key in keys(ep):
            groups[key].append(ep)
    return dict(sorted(groups.items()))


def pass_k(run: str, episodes: list[EpisodeView], metric: Metric) -> PassK:
    per_case: dict[str, list[float]] = defaultdict(list)
    for ep in episodes:
        j = JUDGEMENT[metric](ep)
        if j.status == "ok" and j.score is not None:
            per_case[ep.case_name].append(j.score)
    successes = [(sum(s >= BINARY_THRESHOLD for s in scores), len(scores)) for scores in per_case.values()]
    trials = len({ep.trial for ep in episodes})
    return PassK(run=run, metric=metric, trials=trials, cases=len(per_case), values=pass_k_curve(successes))


def _scored(episodes: list[EpisodeView], metric: Metric) -> dict[tuple[str, int], float]:
    out = {}
    for ep in episodes:
        j = JUDGEMENT[metric](ep)
        if j.status == "ok" and j.score is not None:
            out[(ep.case_name, ep.trial)] = j.score
    return out


def build_report(runs: list[LoadedRun]) -> Report:
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    groups: list[GroupStats] = []
    passes: list[PassK] = []
    for run in runs:
        label, eps = run.info.run, run.episodes
        groups.append(group_stats(label, "all", "all", eps, rng))
        for by, keys in (
            ("toolkit", lambda ep: ep.toolkits or ["(none)"]),
            ("risk_category", lambda ep: ep.risk_categories),
            ("trial", lambda ep: [str(ep.trial)]),
        ):
            for key, members in _grouped(eps, keys).items():
                groups.append(group_stats(label, by, key, members, rng))
        passes += [pass_k(label, eps, m) for m in METRICS]
    paired = []
    for a, b in combinations(runs, 2):
        for m in METRICS:
            pairs, diff, ci = paired_difference(_scored(a.episodes, m), _scored(b.episodes, m), rng)
            if pairs:
                paired.append(PairedDiff(a=a.info.run, b=b.info.run, metric=m, pairs=pairs, mean_diff=diff, ci=ci))
    return Report(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        runs=[r.info for r in runs],
        groups=groups,
        pass_k=passes,
        paired=paired,
        episodes=[ep for r in runs for ep in r.episodes],
    )

"""From loaded runs to a Report: statistics per run, per toolkit, per risk category, per trial and per threat kind,
for every scorer; gate decisions; pass^k; paired differences between runs on the same cases."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from itertools import combinations

import numpy as np

from toolemu.reporting.accuracy import JudgeAccuracy
from toolemu.reporting.judges import judge_counts, judge_sections, unapplied
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.model import (
    ANY_THREAT,
    EPISODE_STATUSES,
    NO_THREAT,
    EpisodeView,
    GateStats,
    GroupStats,
    MetricStats,
    PairedDiff,
    PassK,
    Report,
)
from toolemu.reporting.stats import metric_stats, paired_difference, pass_k_curve
from toolemu.reporting.versions import benchmark_warnings
from toolemu.scorers.base import MetricInfo

BOOTSTRAP_SEED = 0  # fixed, so the same dumps give the same report
TOP_REASONS = 5


def _scores(episodes: Iterable[EpisodeView], scorer: str) -> tuple[list[float], int, int]:
    """Values of every scored evaluation line (replicates each count, as in ToolEmu's reader), the count of failed
    or missing judgements (an episode that errored is counted among the episode statuses instead), and the count
    outside the scorer's scope."""
    values, failed, not_applicable = [], 0, 0
    for ep in episodes:
        for s in ep.evaluation_lines(scorer):
            if s.scored:
                values.append(s.value)  # type: ignore[arg-type]
            elif s.status in ("error", "missing") and ep.status != "error":
                failed += 1
            elif s.status == "not_applicable":
                not_applicable += 1
    return values, failed, not_applicable


def _metrics(episodes: list[EpisodeView], infos: list[MetricInfo], rng: np.random.Generator) -> dict[str, MetricStats]:
    out = {}
    for info in infos:
        values, failed, not_applicable = _scores(episodes, info.name)
        out[info.name] = metric_stats(info, values, failed, rng, not_applicable)
        out[info.name].judges = judge_counts(episodes, info.name)
    return out


def gate_stats(episodes: list[EpisodeView]) -> GateStats:
    stats = GateStats()
    reasons: Counter[str] = Counter()
    for ep in episodes:
        stats.episodes_with_denials += ep.denied_calls > 0
        for step in ep.steps:
            stats.calls += 1
            if step.blocked == "pre_call":
                stats.denied_pre_call += 1
            elif step.blocked == "post_call":
                stats.denied_post_call += 1
            elif any(d.action == "warn" for d in step.gates):
                stats.warned += 1
            else:
                stats.allowed += 1
            reasons.update(f"{d.gate}: {d.reason or d.action}" for d in step.gates if d.action != "allow")
    stats.top_reasons = reasons.most_common(TOP_REASONS)
    return stats


def group_stats(
    run: str, by: str, key: str, episodes: list[EpisodeView], infos: list[MetricInfo], rng: np.random.Generator
) -> GroupStats:
    statuses = Counter(ep.status for ep in episodes)
    gates = gate_stats(episodes)
    ungated = (
        _metrics([ep for ep in episodes if not ep.denied_calls], infos, rng) if gates.episodes_with_denials else {}
    )
    return GroupStats(
        run=run,
        by=by,  # type: ignore[arg-type]
        key=key,
        episodes=len(episodes),
        status_counts={s: statuses.get(s, 0) for s in EPISODE_STATUSES},
        metrics=_metrics(episodes, infos, rng),
        gates=gates,
        ungated=ungated,
    )


def _grouped(episodes: list[EpisodeView], keys: Callable[[EpisodeView], Iterable[str]]) -> dict[str, list[EpisodeView]]:
    groups: dict[str, list[EpisodeView]] = defaultdict(list)
    for ep in episodes:
        for key in keys(ep):
            groups[key].append(ep)
    return dict(sorted(groups.items()))


def _threat_keys(ep: EpisodeView) -> list[str]:
    return [ep.threat, ANY_THREAT] if ep.threat else [NO_THREAT]


def pass_k(run: str, episodes: list[EpisodeView], info: MetricInfo) -> PassK:
    per_case: dict[str, list[float]] = defaultdict(list)
    for ep in episodes:
        s = ep.scores.get(info.name)
        if s is not None and s.scored:
            per_case[ep.case_name].append(s.value)  # type: ignore[arg-type]
    successes = [(sum(info.passes(v) for v in values), len(values)) for values in per_case.values()]
    trials = len({ep.trial for ep in episodes})
    return PassK(run=run, scorer=info.name, trials=trials, cases=len(per_case), values=pass_k_curve(successes))


def _scored(episodes: list[EpisodeView], scorer: str) -> dict[tuple[str, int], float]:
    out = {}
    for ep in episodes:
        s = ep.scores.get(scorer)
        if s is not None and s.scored:
            out[(ep.case_name, ep.trial)] = s.value  # type: ignore[assignment]
    return out


def report_scorers(runs: list[LoadedRun]) -> list[MetricInfo]:
    """Every scorer any run has, in display order."""
    found = {i.name: i for run in runs for i in run.scorers}
    return sorted(found.values(), key=lambda i: (i.order, i.name))


def build_report(runs: list[LoadedRun], accuracy: list[JudgeAccuracy] | None = None) -> Report:
    """`accuracy`: judges' sensitivity and specificity against labels, for rates corrected for judge error."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    infos = report_scorers(runs)
    groups: list[GroupStats] = []
    passes: list[PassK] = []
    for run in runs:
        label, eps = run.info.run, run.episodes
        mine = [i for i in infos if i.name in run.info.scorers]
        groups.append(group_stats(label, "all", "all", eps, mine, rng))
        breakdowns: list[tuple[str, Callable[[EpisodeView], Iterable[str]]]] = [
            ("toolkit", lambda ep: ep.toolkits or ["(none)"]),
            ("risk_category", lambda ep: ep.risk_categories),
            ("trial", lambda ep: [str(ep.trial)]),
        ]
        if any(ep.threat for ep in eps):
            breakdowns.append(("threat", _threat_keys))
        for by, keys in breakdowns:
            for key, members in _grouped(eps, keys).items():
                groups.append(group_stats(label, by, key, members, mine, rng))
        passes += [p for info in mine if (p := pass_k(label, eps, info)).cases]
    paired = []
    for a, b in combinations(runs, 2):
        for info in infos:
            pairs, diff, ci = paired_difference(_scored(a.episodes, info.name), _scored(b.episodes, info.name), rng)
            if pairs:
                paired.append(
                    PairedDiff(a=a.info.run, b=b.info.run, scorer=info.name, pairs=pairs, mean_diff=diff, ci=ci)
                )
    judged = judge_sections([(r.info.run, r.judges) for r in runs], infos, rng, accuracy or [])
    return Report(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        scorers=infos,
        runs=[r.info for r in runs],
        groups=groups,
        pass_k=passes,
        paired=paired,
        judges=judged.uses,
        panels=judged.panels,
        corrected=judged.corrected,
        judge_notes=unapplied(accuracy or [], judged.corrected),
        episodes=[ep for r in runs for ep in r.episodes],
        warnings=benchmark_warnings(runs),
    )

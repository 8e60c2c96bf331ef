"""From loaded runs to a Report: statistics per run, per toolkit, per risk category, per trial and per threat kind,
for every scorer; gate decisions; pass^k; paired differences between runs on the same cases."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations

import numpy as np
import pandas as pd

from toolemu.reporting.accuracy import JudgeAccuracy
from toolemu.reporting.checks import checks_vs_judge
from toolemu.reporting.judges import judge_sections, unapplied
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


def _metrics(scores: pd.DataFrame, infos: list[MetricInfo], rng: np.random.Generator) -> dict[str, MetricStats]:
    """Each scorer's numbers over a group's score rows (every evaluation line: replicates each count, as in
    ToolEmu's reader): the scored values, the failed or missing judgements (an episode that errored is counted
    among the episode statuses instead) and those outside the scorer's scope."""
    out = {}
    for info in infos:
        mine = scores[scores["scorer"] == info.name]
        scored = (mine["status"] == "ok") & mine["value"].notna()
        failed = mine["status"].isin(["error", "missing"]) & (mine["episode_status"] != "error")
        not_applicable = int((mine["status"] == "not_applicable").sum())
        out[info.name] = metric_stats(info, mine["value"][scored].tolist(), int(failed.sum()), rng, not_applicable)
        out[info.name].judges = dict(Counter(mine["judge"][scored]))  # the verdicts behind N, by judge
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


@dataclass
class RunFrames:
    """One run's episodes and scores as frames (toolemu.analysis), and its episodes as the viewer shows them."""

    label: str
    episodes: pd.DataFrame  # episodes_df rows of this run, indexed by `episode`
    scores: pd.DataFrame  # scores_df rows of this run, with the episode's status as `episode_status`
    views: list[EpisodeView]


def run_frames(run: LoadedRun) -> RunFrames:
    from toolemu.analysis.frames import episodes_df, scores_df  # here: toolemu.analysis reads through this package

    episodes = episodes_df(run).set_index("episode", drop=False)
    scores = scores_df(run)
    scores["episode_status"] = episodes["status"].reindex(scores["episode"]).to_numpy()
    return RunFrames(run.info.run, episodes, scores, run.episodes)


def group_stats(
    frames: RunFrames, by: str, key: str, members: pd.Index, infos: list[MetricInfo], rng: np.random.Generator
) -> GroupStats:
    """The numbers of one group: the run's episodes at positions `members`."""
    episodes = frames.episodes.loc[members]
    scores = frames.scores[frames.scores["episode"].isin(members)]
    statuses = episodes["status"].value_counts()
    gates = gate_stats([frames.views[i] for i in members])
    ungated: dict[str, MetricStats] = {}
    if gates.episodes_with_denials:  # rates where the gates let the agent act (drawn first: the CIs' rng order)
        free = episodes.index[episodes["denied_calls"] == 0]
        ungated = _metrics(scores[scores["episode"].isin(free)], infos, rng)
    return GroupStats(
        run=frames.label,
        by=by,  # type: ignore[arg-type]
        key=key,
        episodes=len(episodes),
        status_counts={s: int(statuses.get(s, 0)) for s in EPISODE_STATUSES},
        metrics=_metrics(scores, infos, rng),
        gates=gates,
        ungated=ungated,
    )


def _threat_keys(ep: EpisodeView) -> list[str]:
    return [ep.threat, ANY_THREAT] if ep.threat else [NO_THREAT]


def breakdowns(views: list[EpisodeView]) -> list[tuple[str, pd.Series]]:
    """(by, each episode's keys) for every breakdown of a run: an episode is in one group per key (once, even
    where its case names a toolkit twice)."""
    keyed = [
        ("toolkit", lambda ep: ep.toolkits or ["(none)"]),
        ("risk_category", lambda ep: ep.risk_categories),
        ("trial", lambda ep: [str(ep.trial)]),
    ]
    if any(ep.threat for ep in views):
        keyed.append(("threat", _threat_keys))
    return [(by, pd.Series([list(dict.fromkeys(keys(ep))) for ep in views], dtype=object)) for by, keys in keyed]


def _pooled(frames: RunFrames, scorer: str) -> pd.DataFrame:
    """The run's scored episodes for one scorer, one row each (replicates pooled into their mean)."""
    episodes, column = frames.episodes, f"score_{scorer}"
    if column not in episodes:
        return episodes.iloc[0:0].assign(value=pd.Series(dtype="float64"))
    scored = episodes[(episodes[f"{column}_status"] == "ok") & episodes[column].notna()]
    return scored.assign(value=scored[column])


def pass_k(frames: RunFrames, info: MetricInfo) -> PassK:
    scored = _pooled(frames, info.name)
    passed = scored["value"].map(info.passes).astype(bool)
    per_case = passed.groupby(scored["case_name"], sort=False).agg(["sum", "count"])
    successes = [(int(c), int(n)) for c, n in zip(per_case["sum"], per_case["count"], strict=True)]
    trials = frames.episodes["trial"].nunique()
    return PassK(run=frames.label, scorer=info.name, trials=trials, cases=len(per_case), values=pass_k_curve(successes))


def _scored(frames: RunFrames, scorer: str) -> dict[tuple[str, int], float]:
    """(case, trial) -> value of the scored episodes; where a pair repeats, the last one."""
    s = _pooled(frames, scorer)
    return {(c, int(t)): float(v) for c, t, v in zip(s["case_name"], s["trial"], s["value"], strict=True)}


def report_scorers(runs: list[LoadedRun]) -> list[MetricInfo]:
    """Every scorer any run has, in display order."""
    found = {i.name: i for run in runs for i in run.scorers}
    return sorted(found.values(), key=lambda i: (i.order, i.name))


def build_report(runs: list[LoadedRun], accuracy: list[JudgeAccuracy] | None = None) -> Report:
    """`accuracy`: judges' sensitivity and specificity against labels, for rates corrected for judge error."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    infos = report_scorers(runs)
    frames = [run_frames(run) for run in runs]
    groups: list[GroupStats] = []
    passes: list[PassK] = []
    for run, f in zip(runs, frames, strict=True):
        mine = [i for i in infos if i.name in run.info.scorers]
        groups.append(group_stats(f, "all", "all", f.episodes.index, mine, rng))
        for by, keys in breakdowns(f.views):
            exploded = keys.explode()
            for key, members in exploded.groupby(exploded, sort=True):
                groups.append(group_stats(f, by, str(key), members.index, mine, rng))
        passes += [p for info in mine if (p := pass_k(f, info)).cases]
    paired = []
    for a, b in combinations(frames, 2):
        for info in infos:
            pairs, diff, ci = paired_difference(_scored(a, info.name), _scored(b, info.name), rng)
            if pairs:
                paired.append(PairedDiff(a=a.label, b=b.label, scorer=info.name, pairs=pairs, mean_diff=diff, ci=ci))
    judged = judge_sections([(r.info.run, r.judges) for r in runs], infos, rng, accuracy or [])
    episodes = [ep for r in runs for ep in r.episodes]
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
        checks_vs_judge=checks_vs_judge(episodes),
        robust=[r.robust for r in runs if r.robust is not None],
        episodes=episodes,
        warnings=benchmark_warnings(runs),
    )

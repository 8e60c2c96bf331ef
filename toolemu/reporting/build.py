"""From loaded runs to a Report: statistics per run, per toolkit, per risk category, per trial and per threat kind,
for every scorer; gate decisions; pass^k; paired differences between chosen runs on the same cases.

A run's score rows (the rows of toolemu.analysis's scores_df) become arrays once; a group is then a mask over the run's
episodes, so a study of dozens of runs with fifty groups each costs masks, not a frame filter per group. Each
bootstrap CI depends on its own data alone (stats.bootstrap_mean_ci), so the same dumps give the same report, and a
run's numbers do not change when other runs join it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from pydantic import BaseModel

from toolemu.errors import InputError
from toolemu.log import RunLog, Score
from toolemu.reporting.accuracy import JudgeAccuracy
from toolemu.reporting.checks import checks_vs_judge
from toolemu.reporting.cost import run_cost
from toolemu.reporting.fidelity import toolkit_fidelity
from toolemu.reporting.flips import Rejudged, read_rejudged, run_flips
from toolemu.reporting.gc_pause import gc_paused
from toolemu.reporting.judge_audit import run_audits
from toolemu.reporting.judges import Member, judge_sections, score_judge, unapplied
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.measurement import by_emulator, measure_run
from toolemu.reporting.measurement_model import RunMeasurement
from toolemu.reporting.model import (
    ANY_THREAT,
    EPISODE_STATUSES,
    NO_THREAT,
    OCCASIONAL_STATUSES,
    ChecksVsJudge,
    EpisodeView,
    GateStats,
    GroupStats,
    MetricStats,
    PairedDiff,
    PassK,
    Report,
)
from toolemu.reporting.noise import run_noise
from toolemu.reporting.qualifiers import FlipStats, RunCost
from toolemu.reporting.quitting import quit_stats, run_costs
from toolemu.reporting.stats import BOOTSTRAP_SEED, metric_stats, paired_difference, pass_k_curve
from toolemu.reporting.versions import benchmark_warnings
from toolemu.scorers.base import MetricInfo

TOP_REASONS = 5
# Without --baseline or --compare, every pair of runs is compared up to this many runs; past it, none (a study of
# 27 agents would otherwise make 351 comparisons per scorer, each with its bootstrap).
ALL_PAIRS_MAX_RUNS = 3
COMPARE_ALL = "all"


@dataclass
class ScorerRows:
    """One scorer's score rows of one run (every evaluation line, in scores_df's order) as arrays."""

    episode: np.ndarray  # the row's episode position
    value: np.ndarray
    scored: np.ndarray  # status ok and a value
    failed: np.ndarray  # the judgement errored or is missing (an episode that errored is counted as such instead)
    not_applicable: np.ndarray
    judge: np.ndarray


@dataclass
class EpisodeGates:
    """What the gates decided over one episode's calls: summed over a group's episodes in order."""

    calls: int = 0
    allowed: int = 0
    warned: int = 0
    denied_pre_call: int = 0
    denied_post_call: int = 0
    denied: bool = False
    reasons: list[str] = field(default_factory=list)


def episode_gates(ep: EpisodeView) -> EpisodeGates:
    out = EpisodeGates(calls=len(ep.steps), denied=ep.denied_calls > 0)
    for step in ep.steps:
        if step.blocked == "pre_call":
            out.denied_pre_call += 1
        elif step.blocked == "post_call":
            out.denied_post_call += 1
        elif any(d.action == "warn" for d in step.gates):
            out.warned += 1
        else:
            out.allowed += 1
        out.reasons += [f"{d.gate}: {d.reason or d.action}" for d in step.gates if d.action != "allow"]
    return out


def gate_stats(gates: Sequence[EpisodeGates]) -> GateStats:
    reasons: Counter[str] = Counter()
    for g in gates:
        reasons.update(g.reasons)
    # Summed here and set once: a study's thousands of groups make a validated setattr per count costly.
    return GateStats(
        episodes_with_denials=sum(g.denied for g in gates),
        calls=sum(g.calls for g in gates),
        allowed=sum(g.allowed for g in gates),
        warned=sum(g.warned for g in gates),
        denied_pre_call=sum(g.denied_pre_call for g in gates),
        denied_post_call=sum(g.denied_post_call for g in gates),
        top_reasons=reasons.most_common(TOP_REASONS),
    )


@dataclass
class RunFrames:
    """What the groups of one run are computed from: its episodes as the viewer shows them, each scorer's rows as
    arrays, each episode's status and gate decisions, and each scorer's scored episodes (replicates pooled).

    Plain lists and arrays, no data frames: a report loads neither pandas nor pyarrow (toolemu.analysis's frames
    hold the same rows, for users' own analysis)."""

    label: str
    views: list[EpisodeView]
    rows: dict[str, ScorerRows] = field(default_factory=dict)
    statuses: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    gates: list[EpisodeGates] = field(default_factory=list)
    scorers: set[str] = field(default_factory=set)  # the run's scorers: only these have pooled values
    with_files: set[str] = field(default_factory=set)  # the scorers the run has eval files of
    _scored: dict[str, dict[tuple[str, int], float]] = field(default_factory=dict)

    def pooled(self, scorer: str) -> list[tuple[str, int, float]]:
        """(case, trial, value) of the episodes the scorer scored, in episode order: a replicated judgement's
        value is the mean of its lines (EpisodeView.scores)."""
        if scorer not in self.scorers:
            return []
        out = []
        for view in self.views:
            score = view.scores.get(scorer)
            if score is not None and score.scored and not math.isnan(value := float(score.value)):  # type: ignore[arg-type]
                out.append((view.case_name, view.trial, value))
        return out

    def scored(self, scorer: str) -> dict[tuple[str, int], float]:
        """(case, trial) -> value of the scored episodes; where a pair repeats, the last one."""
        if scorer not in self._scored:
            self._scored[scorer] = {(c, int(t)): v for c, t, v in self.pooled(scorer)}
        return self._scored[scorer]


def run_frames(run: LoadedRun) -> RunFrames:
    """The run's score rows (every evaluation line: a replicated judgement's lines each, as toolemu.analysis's
    scores_df has them), grouped by scorer in the order the scorers first appear."""
    columns: dict[str, tuple[list[int], list[float], list[str], list[str], list[str]]] = {}
    for position, view in enumerate(run.episodes):
        for name in view.scores:
            episode, value, status, judge, episode_status = columns.setdefault(name, ([], [], [], [], []))
            for s in view.evaluation_lines(name):
                episode.append(position)
                value.append(float(s.value) if s.scored else math.nan)  # type: ignore[arg-type]
                status.append(s.status)
                judge.append(score_judge(s))
                episode_status.append(view.status)
    rows = {}
    for name, (episode, value, status, judge, episode_status) in columns.items():
        statuses = np.array(status, dtype=object)
        values = np.array(value, dtype=float)
        rows[name] = ScorerRows(
            episode=np.array(episode, dtype=np.int64),
            value=values,
            scored=(statuses == "ok") & ~np.isnan(values),
            failed=np.isin(statuses, ["error", "missing"]) & (np.array(episode_status, dtype=object) != "error"),
            not_applicable=statuses == "not_applicable",
            judge=np.array(judge, dtype=object),
        )
    statuses = np.array([view.status for view in run.episodes], dtype=object)
    gates = [episode_gates(v) for v in run.episodes]
    scorers = {i.name for i in run.scorers}
    with_files = scorers if run.with_files is None else run.with_files
    return RunFrames(run.info.run, run.episodes, rows, statuses, gates, scorers, with_files)


def _metrics(frames: RunFrames, member: np.ndarray, infos: list[MetricInfo]) -> dict[str, MetricStats]:
    """Each scorer's numbers over a group's score rows (every evaluation line: replicates each count, as in
    ToolEmu's reader): the scored values, the failed or missing judgements (an episode that errored is counted
    among the episode statuses instead) and those outside the scorer's scope. `member`: a mask over episodes."""
    out = {}
    for info in infos:
        rows = frames.rows.get(info.name)
        if rows is None:  # no evaluation of this scorer in the run, not even a failed one
            # Not evaluated only where the run has no eval file of it: a file whose lines joined no episode that
            # was read (every trajectory line a problem line, say) was evaluated, and its lines are noted.
            failed = 0 if info.name in frames.with_files else None
            out[info.name] = MetricStats(scorer=info.name, n=0, eval_failed=failed)
            continue
        here = member[rows.episode]
        scored = here & rows.scored
        failed = int((here & rows.failed).sum())
        not_applicable = int((here & rows.not_applicable).sum())
        out[info.name] = metric_stats(info, rows.value[scored].tolist(), failed, not_applicable)
        out[info.name].judges = dict(Counter(rows.judge[scored].tolist()))  # the verdicts behind N, by judge
    return out


def group_stats(frames: RunFrames, by: str, key: str, members: Sequence[int], infos: list[MetricInfo]) -> GroupStats:
    """The numbers of one group: the run's episodes at positions `members` (ascending)."""
    positions = np.asarray(members, dtype=np.int64)
    member = np.zeros(len(frames.views), dtype=bool)
    member[positions] = True
    statuses = Counter(frames.statuses[positions].tolist())
    gates = gate_stats([frames.gates[i] for i in positions])
    ungated: dict[str, MetricStats] = {}
    if gates.episodes_with_denials:  # rates where the gates let the agent act
        free = member & np.array([not g.denied for g in frames.gates], dtype=bool)
        ungated = _metrics(frames, free, infos)
    return GroupStats(
        run=frames.label,
        by=by,  # type: ignore[arg-type]
        key=key,
        episodes=len(positions),
        status_counts={s: int(statuses.get(s, 0)) for s in EPISODE_STATUSES}
        | {s: int(statuses[s]) for s in OCCASIONAL_STATUSES if statuses.get(s)},
        metrics=_metrics(frames, member, infos),
        gates=gates,
        ungated=ungated,
    )


def breakdowns(views: list[EpisodeView]) -> list[tuple[str, dict[str, list[int]]]]:
    """(by, key -> the positions of its episodes, keys sorted) for every breakdown of a run: an episode is in one
    group per key (once, even where its case names a toolkit twice)."""
    keyed = [
        ("toolkit", lambda ep: ep.toolkits or ["(none)"]),
        ("risk_category", lambda ep: ep.risk_categories),
        ("trial", lambda ep: [str(ep.trial)]),
    ]
    if any(ep.threat for ep in views):
        keyed.append(("threat", lambda ep: [ep.threat, ANY_THREAT] if ep.threat else [NO_THREAT]))
    out = []
    for by, keys in keyed:
        members: dict[str, list[int]] = {}
        for position, ep in enumerate(views):
            for key in dict.fromkeys(keys(ep)):
                members.setdefault(key, []).append(position)
        out.append((by, {key: members[key] for key in sorted(members)}))
    return out


def pass_k(frames: RunFrames, info: MetricInfo) -> PassK:
    per_case: dict[str, list[int]] = {}  # case -> [passed, scored], cases in the order first scored
    for case, _trial, value in frames.pooled(info.name):
        counts = per_case.setdefault(case, [0, 0])
        counts[0] += bool(info.passes(value))
        counts[1] += 1
    successes = [(c, n) for c, n in per_case.values()]
    trials = len({view.trial for view in frames.views})
    return PassK(run=frames.label, scorer=info.name, trials=trials, cases=len(per_case), values=pass_k_curve(successes))


def report_scorers(runs: list[LoadedRun]) -> list[MetricInfo]:
    """Every scorer any run has, in display order."""
    found = {i.name: i for run in runs for i in run.scorers}
    return sorted(found.values(), key=lambda i: (i.order, i.name))


def comparisons(
    labels: list[str], baseline: str | None = None, compare: Sequence[str] = ()
) -> tuple[list[tuple[str, str]], str]:
    """The (a, b) pairs of runs to compare (b minus a), and a line saying why these.

    `baseline`: every other run against it. `compare`: "A,B" pairs, or "all" for every pair. Neither: every pair
    of up to ALL_PAIRS_MAX_RUNS runs, none past that."""
    known = set(labels)

    def check(name: str, flag: str) -> str:
        if name not in known:
            shown = ", ".join(labels[:10]) + (f" and {len(labels) - 10} more" if len(labels) > 10 else "")
            raise InputError.single(flag, f"expected a run of this report, got {name!r}; the runs: {shown}")
        return name

    pairs: list[tuple[str, str]] = []
    reasons = []
    if baseline is not None:
        check(baseline, "--baseline")
        pairs += [(baseline, b) for b in labels if b != baseline]
        reasons.append(f"each run against the baseline {baseline}")
    for item in compare:
        if item == COMPARE_ALL:
            pairs += list(combinations(labels, 2))
            reasons.append("every pair of runs")
            continue
        a, sep, b = item.partition(",")
        if not sep or not a or not b or "," in b:
            raise InputError.single(
                "--compare", f"expected two run names as A,B (b minus a) or {COMPARE_ALL}, got {item!r}"
            )
        pairs.append((check(a, "--compare"), check(b, "--compare")))
        reasons.append(f"{b} against {a}")
    if baseline is None and not compare:
        if len(labels) <= ALL_PAIRS_MAX_RUNS:
            return list(combinations(labels, 2)), "every pair of runs"
        return [], (
            f"none: {len(labels)} runs, and past {ALL_PAIRS_MAX_RUNS} only the pairs asked for are compared "
            f"(--baseline NAME, --compare A,B or --compare {COMPARE_ALL})"
        )
    return list(dict.fromkeys(p for p in pairs if p[0] != p[1])), "; ".join(reasons)


def build_report(
    runs: list[LoadedRun],
    accuracy: list[JudgeAccuracy] | None = None,
    baseline: str | None = None,
    compare: Sequence[str] = (),
    fidelity: Sequence[Path] = (),
) -> Report:
    """`accuracy`: judges' sensitivity and specificity against labels, for rates corrected for judge error.
    `baseline`, `compare`: which runs are compared pair by pair (`comparisons`). `fidelity`: fidelity.json files
    (or folders) whose certificates go beside each toolkit (those in the runs' own folders are read too).

    The runs are left as they are (a caller may read them further); `toolemu.reporting.stream` reduces each run as it
    is read instead, so that a study of any size is reported in bounded memory. Both give the same report."""
    comparisons([r.info.run for r in runs], baseline, compare)  # a bad --baseline or --compare before any work
    with gc_paused():
        return combine([reduce_run(run) for run in runs], accuracy, baseline, compare, fidelity)


# ------------------------------------------------------------------------------------------------ run by run


@dataclass
class RunPart:
    """One run reduced to what a report shows of it: its own numbers, its episodes as the list shows them, and
    what the numbers across runs read. `run` keeps the run's settings, scorers, judges and episodes; once reduced
    (`slim_run`) it holds no record and no step: the rest of a report reads only what is here."""

    run: LoadedRun
    groups: list[GroupStats]
    passes: list[PassK]
    scored: dict[str, dict[tuple[str, int], float]]  # per scorer, what paired differences read (RunFrames.scored)
    measured: RunMeasurement | None
    flips: list[FlipStats]  # their cases' `episode` counted from the run's first episode (combine shifts them)
    cost: RunCost | None
    checks: list[ChecksVsJudge]  # likewise counted from the run's first episode
    quitting: dict[str, Any] | None = None  # QuittingAgents' quit stats, for a run of ours with episodes
    costs_file: dict[str, Any] | None = None  # and their costs file
    summaries: list[bytes] | None = None  # each episode's summary as JSON (`summary_json`), once the run is slim


def reduce_run(run: LoadedRun) -> RunPart:
    """Every number of one run that depends on that run alone: its groups, pass^k, measurement, flip rates, cost,
    checks against the judge, and QuittingAgents' files. Reads the run's records; leaves them as they are."""
    f = run_frames(run)
    mine = sorted(run.scorers, key=lambda i: (i.order, i.name))
    groups = [group_stats(f, "all", "all", range(len(f.views)), mine)]
    for by, members in breakdowns(f.views):
        groups += [group_stats(f, by, key, positions, mine) for key, positions in members.items()]
    passes = [p for info in mine if (p := pass_k(f, info)).cases]
    rejudged = [read_rejudged(log) if log.rejudge_files else Rejudged(log) for log in run.all_logs]
    part = RunPart(
        run=run,
        groups=groups,
        passes=passes,
        scored={info.name: f.scored(info.name) for info in mine},
        measured=measure_run(run),
        flips=run_flips(run, rejudged),
        cost=run_cost(run, rejudged, mine),
        checks=checks_vs_judge(run.episodes),
    )
    if run.info.format == "ours" and run.episodes:
        part.quitting, part.costs_file = quit_stats(run.episodes), run_costs(run.all_logs)
    return part


@dataclass
class _Verdicts(Member):
    """A judge that is a run's only judge of a scorer, reduced to what its legend entry and a corrected rate read
    (no panel compares its verdicts episode by episode)."""

    kept: list[float] = field(default_factory=list)

    @property
    def values(self) -> list[float]:
        return self.kept


def slim_run(part: RunPart) -> None:
    """Drop what the report no longer reads once the run is reduced, in place: the records, each episode's steps
    and scores' details (a summary keeps its step count; a view keeps its ledger, a few facts), and the verdicts of
    judges without a panel. What
    stays: the run's settings and files (a shell of each file's log: the files, run.json and the first record of
    ours), and each episode's summary. The values are set in each model's `__dict__`, as in load._slim."""
    run = part.run
    shared: dict[Any, Any] = {}  # equal values held once: a study's episodes share their case names, scores...
    for view in run.episodes:
        vars(view).update(
            steps=[],
            step_count=len(view.steps),
            case_name=shared.setdefault(("case", view.case_name), view.case_name),
            toolkits=shared.setdefault(("toolkits", *view.toolkits), view.toolkits),
            risk_categories=shared.setdefault(("risks", *view.risk_categories), view.risk_categories),
            scores={name: _shared_score(score, shared) for name, score in view.scores.items()},
            replicates={k: [_shared_score(s, shared) for s in lines] for k, lines in view.replicates.items()},
        )
    for model in [*run.episodes, *shared.values()]:
        if isinstance(model, BaseModel):
            _share_fields_set(model, shared)
    for g in part.groups:
        for model in [g, g.gates, *g.metrics.values(), *g.ungated.values()]:
            _share_fields_set(model, shared)
    part.summaries = [summary_json(view) for view in run.episodes]
    run.sources = None
    run.logs = [_log_shell(log) for log in run.all_logs]
    run.log = run.logs[0] if run.logs else None
    run.judges = {
        scorer: members if len(members) > 1 else [_Verdicts(m.file, m.use, kept=m.values) for m in members]
        for scorer, members in run.judges.items()
    }


def summary_json(view: EpisodeView) -> bytes:
    """The episode's summary (`EpisodeView.summary`) as JSON: what report.json and the page's list hold of it.
    Copied to its own size: orjson's bytes keep the whole buffer it wrote into (32 KB for a summary of 2 KB)."""
    return bytes(memoryview(orjson.dumps(view.summary())))


def _shared_score(score: Score, shared: dict[Any, Any]) -> Score:
    """The score without its details (metadata, explanation, summary), one object for every equal one."""
    vars(score).update(metadata={}, explanation="", summary="")
    key = ("score", score.scorer, score.metric, score.status, score.value, score.label, score.error, score.samples)
    key += (score.judge_id, score.judge is None)
    found = shared.setdefault(key, score)
    return found if found is score or found.judge == score.judge else score


def _share_fields_set(model: BaseModel, shared: dict[Any, Any]) -> None:
    """One set of field names for every model that was given the same fields: pydantic keeps one per instance (a
    third of a small model's memory), read only by dumps with exclude_unset, which no report makes."""
    names = model.__pydantic_fields_set__
    one = shared.setdefault(("fields", type(model), frozenset(names)), names)
    if one is not names:
        object.__setattr__(model, "__pydantic_fields_set__", one)


def _log_shell(log: RunLog) -> RunLog:
    first = next((t for t in log.trajectories if t.schema_version), None)
    return RunLog(log.files, log.format, log.meta, [first] if first else [], {}, log.problems, log.rejudge_files)


def combine(
    parts: list[RunPart],
    accuracy: list[JudgeAccuracy] | None = None,
    baseline: str | None = None,
    compare: Sequence[str] = (),
    fidelity: Sequence[Path] = (),
) -> Report:
    """The report of reduced runs, in order: their own numbers, then what reads several runs (paired differences,
    judge panels and corrected rates, realism by emulator, benchmark warnings), and what is read beside the runs
    each time (fidelity certificates, judge audits, noise summaries: never from a cache)."""
    runs = [p.run for p in parts]
    pairs, pairs_note = comparisons([r.info.run for r in runs], baseline, compare)
    accuracy = accuracy or []
    infos = report_scorers(runs)
    by_label = {p.run.info.run: p for p in parts}
    paired = []
    for a_label, b_label in pairs:
        a, b = by_label[a_label], by_label[b_label]
        for info in infos:
            n, diff, ci = paired_difference(a.scored.get(info.name, {}), b.scored.get(info.name, {}))
            if n:
                paired.append(PairedDiff(a=a_label, b=b_label, scorer=info.name, pairs=n, mean_diff=diff, ci=ci))
    rng = np.random.default_rng(BOOTSTRAP_SEED)  # the judges' agreement and corrected-rate bootstraps
    judged = judge_sections([(r.info.run, r.judges) for r in runs], infos, rng, accuracy)
    offset, flips, checks = 0, [], []
    for part in parts:
        for stats in part.flips:
            stats = stats.model_copy(deep=True)
            for case in stats.cases:
                case.episode = None if case.episode is None else case.episode + offset
            flips.append(stats)
        for c in part.checks:
            c = c.model_copy(deep=True)
            for d in c.disagreements:
                d.episode += offset
            checks.append(c)
        offset += len(part.run.episodes)
    report = Report(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        scorers=infos,
        runs=[r.info for r in runs],
        groups=[g for p in parts for g in p.groups],
        pass_k=[k for p in parts for k in p.passes],
        paired=paired,
        paired_note=pairs_note,
        judges=judged.uses,
        panels=judged.panels,
        corrected=judged.corrected,
        judge_notes=unapplied(accuracy, judged.corrected),
        checks_vs_judge=checks,
        robust=[r.robust for r in runs if r.robust is not None],
        episodes=[ep for r in runs for ep in r.episodes],
        warnings=benchmark_warnings(runs),
        measurement=[p.measured for p in parts if p.measured is not None],
        realism_by_emulator=by_emulator(runs),
        flips=flips,
        costs=[p.cost for p in parts if p.cost is not None],
    )
    report.fidelity = toolkit_fidelity(runs, fidelity)
    report.judge_audits = run_audits(runs)
    report.noise = run_noise(runs)
    return report

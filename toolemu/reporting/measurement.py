"""The measurement beside the safety rate: per run, the realism rate (with the observations flagged and by whom),
the awareness rate and the safety rate with aware episodes left out, what the realism filter did and cost, and how
honest the simulated user was; across runs, the realism rate per emulator model. The realism rate per toolkit is
the realism scorer's row in the per-toolkit table.

Rates are over evaluation lines, as the summary table's are (one per episode; replicate judgements each count), so
the safe rate here is the summary's. A run with none of these (a report of an older run) gets no entry at all.
"""

from __future__ import annotations

from toolemu.log.details import RealismDetails, rated
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.measurement_model import (
    EmulatorRealism,
    Rate,
    RealismFilterUse,
    RunMeasurement,
    UserHonesty,
)
from toolemu.reporting.model import EpisodeView, Report
from toolemu.reporting.stats import bootstrap_mean_ci
from toolemu.reporting.text_parts import pct
from toolemu.scorers import AWARENESS, REALISM, SAFETY  # the scorers' declarations (MetricInfo), by their public names
from toolemu.scorers.base import MetricInfo

FILTER_ROLE = "realism"  # the filter's usage role (toolemu.episode.realism_filter)


def rate_of(flags: list[bool]) -> Rate:
    if not flags:
        return Rate(n=0)
    return Rate(n=len(flags), rate=sum(flags) / len(flags), ci=bootstrap_mean_ci([float(f) for f in flags]))


def values(ep: EpisodeView, scorer: str) -> list[float]:
    """The scored evaluation lines of one scorer for one episode."""
    return [s.value for s in ep.evaluation_lines(scorer) if s.scored and s.value is not None]


def _aware(ep: EpisodeView) -> bool | None:
    """Whether the awareness scorer marked the episode (its pooled score); None where it did not score it."""
    score = ep.scores.get(AWARENESS.name)
    if score is None or not score.scored or score.value is None:
        return None
    return AWARENESS.at_or_above(score.value)


def _safety(views: list[EpisodeView], info: MetricInfo) -> tuple[Rate, Rate]:
    lines = [v for ep in views for v in values(ep, info.name)]
    return rate_of([info.at_or_above(v) for v in lines]), rate_of([info.fails(v) for v in lines])


def filter_use(run: LoadedRun) -> RealismFilterUse | None:
    """What the realism filter did; None where the run had none (and no step says otherwise)."""
    meta = next((log.meta for log in run.all_logs if log.meta is not None), None)
    recorded = meta.config.element("realism_filter") if meta is not None else None  # as run.json records it
    redrafts = recorded.get("redrafts", 0) if isinstance(recorded, dict) else 0
    steps = [s for ep in run.episodes for s in ep.steps]
    drafts = [d for s in steps for d in s.rejected_drafts]
    trajectories = [ep.trajectory for ep in run.sources or []]
    usage = [t.usage[FILTER_ROLE] for t in trajectories if FILTER_ROLE in t.usage]
    if not (redrafts or drafts or usage):
        return None
    return RealismFilterUse(
        redrafts=redrafts,
        observations=sum(rated(s) for s in steps),
        redrafted=sum(bool(s.rejected_drafts) for s in steps),
        rejected_drafts=len(drafts),
        flagged_by_rules=sum("rules" in d.flagged_by for d in drafts),
        flagged_by_judge=sum("judge" in d.flagged_by for d in drafts),
        calls=sum(u.calls for u in usage),
        cost_usd=round(sum(u.cost_usd for u in usage), 6),
    )


def user_honesty(views: list[EpisodeView]) -> UserHonesty | None:
    """The review of every user reply; None where no reply was reviewed (no user, or an older run)."""
    out = UserHonesty()
    for ep in views:
        marked = False
        for step in ep.steps:
            review = step.user_reply.review if step.user_reply is not None else None
            if review is None:
                continue
            out.replies += 1
            out.flagged += review.flagged
            out.reasks += review.reasked
            out.fixed += bool(review.reasked and not review.unsupported)
            out.marked += bool(review.unsupported)
            marked = marked or bool(review.unsupported)
        out.episodes_marked += marked
    return out if out.replies else None


def measure_run(run: LoadedRun) -> RunMeasurement | None:
    views = run.episodes
    has = set(run.info.scorers)
    realism, awareness = REALISM.name in has, AWARENESS.name in has
    used, user = filter_use(run), user_honesty(views)
    if not (realism or awareness or used or user):
        return None
    out = RunMeasurement(run=run.info.run, emulator=run.info.emulator, realism_filter=used, user=user)
    if SAFETY.name in has:
        out.safe, out.failure = _safety(views, SAFETY)
    if realism:
        out.realistic = rate_of([REALISM.passes(v) for ep in views for v in values(ep, REALISM.name)])
        for ep in views:
            score = ep.scores.get(REALISM.name)
            if score is None or not score.scored:
                continue
            details = RealismDetails.of(score.metadata)
            out.observations_rated += details.rated
            out.observations_flagged += len(details.flagged_steps)
            sources = {f.source for f in details.findings}
            out.episodes_flagged_by_rules += "rules" in sources
            out.episodes_flagged_by_judge += "judge" in sources
    if awareness:
        out.aware = rate_of([AWARENESS.at_or_above(v) for ep in views for v in values(ep, AWARENESS.name)])
        if SAFETY.name in has:
            unaware = [ep for ep in views if _aware(ep) is False]
            out.safe_unaware, out.failure_unaware = _safety(unaware, SAFETY)
    return out


def by_emulator(runs: list[LoadedRun]) -> list[EmulatorRealism]:
    """The realism rate per emulator model, each over every run it emulated (runs without realism left out)."""
    lines: dict[str, list[bool]] = {}
    names: dict[str, list[str]] = {}
    for run in runs:
        if REALISM.name not in run.info.scorers:
            continue
        emulator = run.info.emulator or "(unknown emulator)"
        lines.setdefault(emulator, []).extend(
            REALISM.passes(v) for ep in run.episodes for v in values(ep, REALISM.name)
        )
        names.setdefault(emulator, []).append(run.info.run)
    return [EmulatorRealism(emulator=e, runs=names[e], realistic=rate_of(flags)) for e, flags in lines.items()]


# ------------------------------------------------------------------------------------------------------- console


def _rate(rate: Rate | None) -> str:
    return "-" if rate is None or rate.rate is None else f"{pct(rate.rate, rate.ci)} of {rate.n}"


def measurement_lines(report: Report) -> list[str]:
    """The console's account, one line per thing measured."""
    lines = []
    for m in report.measurement:
        parts = [f"safe {_rate(m.safe)}"]
        if m.realistic is not None:
            parts.append(
                f"realistic {_rate(m.realistic)} ({m.observations_flagged} of {m.observations_rated} observations "
                f"flagged; episodes flagged by rules {m.episodes_flagged_by_rules}, by judge "
                f"{m.episodes_flagged_by_judge})"
            )
        if m.aware is not None:
            parts.append(f"aware {_rate(m.aware)}; safe without aware episodes {_rate(m.safe_unaware)}")
        lines.append(f"measurement {m.run}: " + "; ".join(parts))
        if (f := m.realism_filter) is not None:
            lines.append(
                f"realism filter {m.run} (at most {f.redrafts} redrafts): {f.rejected_drafts} drafts rejected (rules "
                f"{f.flagged_by_rules}, judge {f.flagged_by_judge}) on {f.redrafted} of {f.observations} "
                f"observations; {f.calls} filter calls, ${f.cost_usd:.4f}"
            )
        if (u := m.user) is not None:
            lines.append(
                f"user honesty {m.run}: {u.replies} replies, {u.flagged} flagged, {u.reasks} asked again, "
                f"{u.fixed} fixed by asking again, {u.marked} stand marked (in {u.episodes_marked} episodes)"
            )
    for e in report.realism_by_emulator:
        lines.append(f"realism by emulator {e.emulator}: realistic {_rate(e.realistic)} (runs: {', '.join(e.runs)})")
    return lines

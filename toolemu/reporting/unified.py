"""A QuittingAgents-style unified report per run: `<run>_unified_report.txt`, plain text.

QuittingAgents writes one such file per run with its quit rate, the reasons its agents gave for quitting, and the
safety and helpfulness numbers; readers of that fork look for it. Ours holds the same facts, from the same report
the other outputs are drawn from: quit reasons are the final answers of the episodes whose status is quit (the text
after "quit:" where there is one), grouped, most frequent first.
"""

from __future__ import annotations

import re
from collections import Counter

from toolemu.log.toolemu_format import quit_reason
from toolemu.reporting.leaderboard import identity
from toolemu.reporting.model import EpisodeView, GroupStats, MetricStats, Report, statuses_of
from toolemu.scorers.base import MetricInfo

UNIFIED_SUFFIX = "_unified_report.txt"
TOP_REASONS = 10


def unified_report_name(run: str) -> str:
    """The file name for a run's unified report; a run label may hold characters no file name should."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", run).strip("_") + UNIFIED_SUFFIX


def _metric_lines(info: MetricInfo, m: MetricStats) -> list[str]:
    lines = [f"== {info.eval_type}: {info.metric} ({info.name}) ==", f"  N: {m.n}"]
    if m.n:
        above = sum(n for value, n in m.histogram.items() if info.at_or_above(float(value)))
        lines += [
            f"  mean: {m.mean:.4f}",
            f"  std: {m.std:.4f}",
            "  histogram: " + ", ".join(f"{value}: {n}" for value, n in m.histogram.items()),
            f"  binarized at >= {info.threshold:g}: 0: {m.n - above}, 1: {above} (rate {above / m.n:.4f})",
        ]
        if m.failure_incidence is not None and info.failure_bound is not None:
            op, bound = info.failure_bound
            lines.append(f"  failure incidence ({op} {bound:g}): {m.failure_incidence:.4f}")
    failed = "not evaluated (no eval file)" if m.eval_failed is None else m.eval_failed
    lines.append(f"  evaluations failed or missing: {failed}")
    return lines


def unified_report_text(
    report: Report, run: str, episodes: list[EpisodeView] | None = None, overall: GroupStats | None = None
) -> str:
    """`episodes` and `overall`: the run's episodes and its overall row, where the caller has them by run (a study's
    unified reports, one per run, then cost their own episodes and rows, not the whole report's)."""
    info = next(r for r in report.runs if r.run == run)
    overall = overall or report.overall(run)
    episodes = [ep for ep in report.episodes if ep.run == run] if episodes is None else episodes
    quits = [quit_reason(ep.final_answer) for ep in episodes if ep.status == "quit"]
    who = identity(info)  # what the run recorded, else what its file names say (safety-persists' dumps)
    lines = [
        f"Unified report: {run}",
        f"source: {info.source}",
        f"agent: {info.agent or '-'}",
        f"emulator: {info.emulator or who.emulator or '-'}",
        f"evaluator: {info.evaluator or who.judge or '-'}",
        "",
        "== Quitting ==",
        f"  episodes: {len(episodes)}",
        f"  quit: {len(quits)}",
        "  quit rate: " + (f"{len(quits) / len(episodes) * 100:.2f}%" if episodes else "-"),
        "  quit reasons (most frequent first):",
    ]
    reasons = Counter(quits).most_common()
    lines += [f"    - {reason or '(none given)'} ({n})" for reason, n in reasons[:TOP_REASONS]]
    if len(reasons) > TOP_REASONS:
        lines.append(f"    ... and {len(reasons) - TOP_REASONS} more")
    if not reasons:
        lines.append("    (none)")
    lines += ["", "== Episodes by status =="]
    counts = overall.status_counts if overall else {}
    lines += [f"  {status}: {counts.get(status, 0)}" for status in statuses_of([overall] if overall else [])]
    for scorer in report.scorers:
        m = overall.metrics.get(scorer.name) if overall else None
        if m is not None:
            lines += ["", *_metric_lines(scorer, m)]
    return "\n".join(lines) + "\n"

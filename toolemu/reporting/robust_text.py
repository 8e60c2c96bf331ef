"""The console's account of a RobustSummary: rates with their CIs, then the cases whose failures flipped."""

from __future__ import annotations

from toolemu.log.robust import Rate, RobustSummary
from toolemu.reporting.text_parts import pct


def rate_text(r: Rate) -> str:
    return f"{pct(r.rate, r.ci)} ({r.count} of {r.of})"


def summary_lines(s: RobustSummary, limit: int = 20) -> list[str]:
    seeds = f"{s.seeds[0]}-{s.seeds[-1]}" if len(s.seeds) > 1 else str(s.seeds[0])
    k = len(s.seeds)
    lines = [
        f"robust failures of {s.run}: {s.failures} failures among {s.judged} judged episodes, each re-run in {k} "
        f"emulated worlds ({s.emulator}, seeds {seeds}, temperature {s.emulator_temperature:g}); re-runs in {s.out}",
        f"  raw failure rate: {rate_text(s.raw)}",
        f"  robust failure rate (reproduced in most re-runs): {rate_text(s.robust_most)}",
        f"    reproduced in at least one: {rate_text(s.robust_any)}; in all: {rate_text(s.robust_all)}",
        f"  failures that reproduce: {rate_text(s.reproduction)}; undetermined (no re-run judged): {s.undetermined}",
    ]
    flipped = [c for c in s.cases if c.reruns]
    if flipped:
        lines.append("  emulator sensitivity per case (judged re-runs in which the failure did not recur):")
        for c in flipped[:limit]:
            flips = f"{c.flipped} of {c.reruns} flipped ({pct(c.flip_rate)})"
            lines.append(f"    {c.case_name}: {flips}, {c.failures} failing trials")
        if len(flipped) > limit:
            lines.append(f"    and {len(flipped) - limit} more (robust.json: cases)")
    lines += [f"  note: {n}" for n in s.notes]
    return lines


def report_line(s: RobustSummary) -> str:
    """One line for `toolemu report`: the raw rate against the robust one."""
    return (
        f"robust {s.run}: raw failure {rate_text(s.raw)} -> robust (most of {len(s.seeds)} re-runs) "
        f"{rate_text(s.robust_most)}; {s.undetermined} undetermined"
    )

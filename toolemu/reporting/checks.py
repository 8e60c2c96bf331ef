"""Where a case's deterministic checks and the LLM safety judge disagree, episode by episode.

A violated check is a failure the judge should have seen (a check violated, yet safety >= 2); a safety failure with
no check violated is one the checks did not foresee, or a judge that saw risk where none was done (safety <= 1, every
check held). Both are listed, so a reader can open the episodes and decide which one erred.
"""

from __future__ import annotations

from toolemu.log.details import ChecksDetails
from toolemu.reporting.model import CheckDisagreement, ChecksVsJudge, Disagreement, EpisodeView
from toolemu.scorers import CHECKS, SAFETY  # the scorers' declarations (MetricInfo), by their public names

KIND_TEXT: dict[str, str] = {
    "check_violated_judged_safe": "a check was violated, the judge says safe",
    "judged_failure_no_check_violated": "the judge says failure, no check was violated",
}


def checks_vs_judge(episodes: list[EpisodeView]) -> list[ChecksVsJudge]:
    by_run: dict[str, ChecksVsJudge] = {}
    for position, ep in enumerate(episodes):
        checks, safety = ep.scores.get(CHECKS.name), ep.scores.get(SAFETY.name)
        if checks is None or safety is None or not (checks.scored and safety.scored):
            continue
        stats = by_run.setdefault(ep.run, ChecksVsJudge(run=ep.run, both=0, agree=0))
        stats.both += 1
        violated = CHECKS.fails(checks.value)  # type: ignore[arg-type]
        failure = SAFETY.fails(safety.value)  # type: ignore[arg-type]
        if violated == failure:
            stats.agree += 1
            continue
        kind: Disagreement = "check_violated_judged_safe" if violated else "judged_failure_no_check_violated"
        setattr(stats, kind, getattr(stats, kind) + 1)
        stats.disagreements.append(
            CheckDisagreement(
                run=ep.run,
                episode=position,
                case_name=ep.case_name,
                trial=ep.trial,
                kind=kind,
                safety=safety.value,  # type: ignore[arg-type]
                violated=[v.id for v in ChecksDetails.of(checks.metadata).violated],
            )
        )
    return list(by_run.values())


def checks_lines(report_checks: list[ChecksVsJudge], limit: int = 10) -> list[str]:
    """The console's account: per run, the agreement and the first disagreeing episodes."""
    lines = []
    op, bound = SAFETY.failure_bound or ("<", SAFETY.threshold)
    for c in report_checks:
        lines.append(
            f"checks vs safety judge {c.run}: {c.both} episodes scored by both, {c.agree} agree; "
            f"{c.check_violated_judged_safe} violated a check but were judged safe (>= {SAFETY.threshold:g}), "
            f"{c.judged_failure_no_check_violated} were judged a failure ({op} {bound:g}) with no check violated"
        )
        for d in c.disagreements[:limit]:
            checks = f" (violated: {', '.join(d.violated)})" if d.violated else ""
            lines.append(f"  {d.case_name}#{d.trial}: safety {d.safety:g}; {KIND_TEXT[d.kind]}{checks}")
        if len(c.disagreements) > limit:
            lines.append(f"  and {len(c.disagreements) - limit} more (report.json: checks_vs_judge)")
    return lines

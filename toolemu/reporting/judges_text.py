"""The console footer about judges: who made each run's numbers, what a panel says, corrected rates."""

from __future__ import annotations

from collections import defaultdict

from toolemu.reporting.model import AgreementStats, CorrectedRate, JudgeUse, PanelStats, Report
from toolemu.reporting.text_parts import num, pct


def judge_line(run: str, scorer: str, uses: list[JudgeUse]) -> str:
    def one(u: JudgeUse) -> str:
        failed = f", {u.failed} failed" if u.failed else ""
        return f"{u.label} (N={u.scored}{failed})"

    headline = [one(u) for u in uses if u.headline]
    panel = [one(u) for u in uses if not u.headline]
    line = f"judge {run} {scorer}: " + (", ".join(headline) or "none")
    return line + (f"; panel: {', '.join(panel)}" if panel else "")


def panel_line(p: PanelStats) -> str:
    spread = ", ".join(f"{s.rate} {pct(s.low)}-{pct(s.high)}" for s in p.spread)
    majority = f"{pct(p.majority.binarized_rate, p.majority.binarized_ci)}"
    return (
        f"panel {p.run} {p.scorer} ({len(p.judges)} judges; {p.complete} episodes all scored, {p.incomplete} not all): "
        f"across judges {spread or '-'}; panel mean {num(p.mean.mean, p.mean.mean_ci)}, rate of the mean "
        f"{pct(p.mean.binarized_rate, p.mean.binarized_ci)}, majority rate {majority}"
    )


def _kappa(value: float | None, ci: tuple[float, float] | None) -> str:
    return num(value, ci, missing="undefined")  # None: both judges used one category


def agreement_line(run: str, a: AgreementStats) -> str:
    return (
        f"agreement {run} {a.scorer} {a.a} vs {a.b}: N={a.n}, raw {pct(a.raw, a.raw_ci)}, "
        f"kappa {_kappa(a.kappa, a.kappa_ci)}, quadratic {_kappa(a.kappa_quadratic, a.kappa_quadratic_ci)}, "
        f"binarised (>= {a.threshold:g}) {_kappa(a.kappa_binary, a.kappa_binary_ci)}"
    )


def corrected_line(c: CorrectedRate) -> str:
    labelled = f", {c.labelled} labels" if c.labelled is not None else ", given"
    notes = f" ({'; '.join(c.notes)})" if c.notes else ""
    return (
        f"corrected {c.run} {c.scorer} {c.event} by {c.judge} (Se {c.sensitivity:.2f}, Sp {c.specificity:.2f}"
        f"{labelled}): raw {pct(c.raw, c.raw_ci)} of {c.n} -> {pct(c.corrected, c.corrected_ci)}{notes}"
    )


def judge_lines(report: Report) -> list[str]:
    by_run: dict[tuple[str, str], list[JudgeUse]] = defaultdict(list)
    for u in report.judges:
        by_run[(u.run, u.scorer)].append(u)
    lines = [judge_line(run, scorer, uses) for (run, scorer), uses in by_run.items()]
    for p in report.panels:
        lines.append(panel_line(p))
        lines += [agreement_line(p.run, a) for a in p.agreement]
    lines += [corrected_line(c) for c in report.corrected]
    return lines + report.judge_notes

"""The report page's judge parts: the legend of who judged (beside the summary), and the Judges section (panels:
each judge, their agreement, the panel's score, the spread of rates; rates corrected for judge error).

Every string that came from a file (model names, run names, notes) goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.html_parts import Columns, column_table, e, mean_text, pct, rate_text, run_td, table, td
from toolemu.reporting.model import AgreementStats, CorrectedRate, MetricStats, PanelStats, Report

LEGEND_NOTE = (
    "Who made the numbers above: every judge of every scorer, with its id (a hash of its model, parameters, prompt "
    "and record schema version) and the verdicts it gave. The headline judge's verdicts (the standard eval file) "
    "make the run's numbers; a panel's other judges are compared in the Judges section."
)


LEGEND: Columns = [
    ("run", lambda u: run_td(u.run)),
    ("scorer", lambda u: td(e(u.scorer))),
    ("model", lambda u: td(e(u.model or "–"))),
    ("judge id", lambda u: td(f"<code>{e(u.judge)}</code>")),
    ("prompt", lambda u: td(f"<code>{e(u.prompt)}</code>" if u.prompt else "–")),
    ("eval file", lambda u: td(e(u.file))),
    ("role", lambda u: td("headline" if u.headline else "panel")),
    ("#verdicts", lambda u: td(str(u.scored), True)),
    ("#failed", lambda u: td(str(u.failed), True)),
]


def judges_legend(report: Report) -> str:
    if not report.judges:
        return ""
    return f'<h3>Judges</h3><p class="note">{e(LEGEND_NOTE)}</p>' + column_table("judges-table", LEGEND, report.judges)


def _stats_cells(m: MetricStats, failure: bool) -> list[str]:
    cells = [
        td(str(m.n), True),
        td(mean_text(m.mean, m.mean_ci), True),
        td(rate_text(m.binarized_rate, m.binarized_ci), True),
    ]
    if failure:
        cells.append(td(rate_text(m.failure_incidence, m.failure_ci), True))
    return cells


def _confusion(a: AgreementStats) -> str:
    head = "".join(f'<th class="num">b={c}</th>' for c in a.categories)
    rows = "".join(
        f'<tr><th class="num">a={c}</th>' + "".join(f'<td class="num">{v}</td>' for v in row) + "</tr>"
        for c, row in zip(a.categories, a.confusion, strict=True)
    )
    return (
        f'<details><summary>confusion matrix ({a.n} pairs)</summary><table class="stats narrow confusion">'
        f"<thead><tr><th></th>{head}</tr></thead><tbody>{rows}</tbody></table></details>"
    )


def _kappa(value: float | None, ci: tuple[float, float] | None) -> str:
    return mean_text(value, ci) if value is not None else "undefined"  # both judges used one category


AGREEMENT: Columns = [
    ("judges a vs b", lambda a: td(f"{e(a.a)} <span class=sub>vs</span> {e(a.b)}")),
    ("#pairs", lambda a: td(str(a.n), True)),
    ("#raw agreement", lambda a: td(rate_text(a.raw, a.raw_ci), True)),
    ("#kappa", lambda a: td(_kappa(a.kappa, a.kappa_ci), True)),
    ("#quadratic kappa", lambda a: td(_kappa(a.kappa_quadratic, a.kappa_quadratic_ci), True)),
    ("#binarised kappa", lambda a: td(_kappa(a.kappa_binary, a.kappa_binary_ci), True)),
    ("#rate a / b", lambda a: td(f"{pct(a.rate_a)} / {pct(a.rate_b)}", True)),
    ("", lambda a: td(_confusion(a))),
]


def _panel(p: PanelStats, index: int, report: Report) -> str:
    info = report.scorer(p.scorer)
    failure = info is not None and info.failure_bound is not None
    rate = f"#{info.rate_name} rate" if info else "#rate"
    head = ["judge", "#scored", "#mean [95% CI]", rate] + (["#failure incidence"] if failure else [])
    rows = [[td(e(j.label)), *_stats_cells(j.stats, failure)] for j in p.judges]
    rows.append([td("<strong>panel: mean of the judges</strong>"), *_stats_cells(p.mean, failure)])
    rows.append([td("<strong>panel: majority score</strong>"), *_stats_cells(p.majority, failure)])
    spread = "; ".join(
        f"{e(s.rate)} {pct(s.low)} ({e(s.low_judge)}) to {pct(s.high)} ({e(s.high_judge)})" for s in p.spread
    )
    return (
        f'<h3><span class="run-name">{e(p.run)}</span> · {e(p.scorer)}: {len(p.judges)} judges</h3>'
        f'<p class="note">The panel\'s rows are over the {p.complete} episodes every judge scored '
        f"({p.incomplete} episodes scored by only some judges are left out of them). Across judges: {spread}.</p>"
        + table(f"panel-{index}", head, rows)
        + column_table(f"agreement-{index}", AGREEMENT, p.agreement)
    )


CORRECTED: Columns = [
    ("run", lambda c: run_td(c.run)),
    ("scorer", lambda c: td(e(c.scorer))),
    ("judge", lambda c: td(e(c.judge))),
    ("event", lambda c: td(e(c.event))),
    ("#N", lambda c: td(str(c.n), True)),
    ("#raw [95% CI]", lambda c: td(rate_text(c.raw, c.raw_ci), True)),
    ("#Se / Sp", lambda c: td(f"{c.sensitivity:.2f} / {c.specificity:.2f}", True)),
    ("#labels", lambda c: td(str(c.labelled) if c.labelled is not None else "given", True)),
    ("#corrected [95% CI]", lambda c: td(rate_text(c.corrected, c.corrected_ci), True)),
    ("notes", lambda c: td(e("; ".join(c.notes)))),
]


def _corrected(rows: list[CorrectedRate]) -> str:
    return (
        '<h3>Rates corrected for judge error</h3><p class="note">Rogan–Gladen: (p + Sp − 1) / (Se + Sp − 1), clipped '
        "to [0, 1], with the judge's sensitivity and specificity against human labels; percentile bootstrap CI over "
        "the run's episodes and the labelled pairs.</p>" + column_table("corrected-table", CORRECTED, rows)
    )


def judges_section(report: Report) -> str:
    if not (report.panels or report.corrected or report.judge_notes):
        return ""
    parts = ['<section id="judges"><h2>Judges</h2>']
    if report.panels:
        parts.append(
            '<p class="note">Two or more judges scored the same episodes. Kappa is over the scores (0–3 for '
            "ToolEmu's judges), so two labels with one score agree; quadratic kappa weighs a disagreement by its "
            "squared distance; binarised kappa splits at the scorer's threshold. CIs: bootstrap over the pairs.</p>"
        )
        parts += [_panel(p, i, report) for i, p in enumerate(report.panels)]
    if report.corrected:
        parts.append(_corrected(report.corrected))
    parts += [f'<p class="note">{e(n)}</p>' for n in report.judge_notes]
    parts.append("</section>")
    return "".join(parts)

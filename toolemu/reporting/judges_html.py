"""The report page's judge parts: the legend of who judged (beside the summary), and the Judges section (panels:
each judge, their agreement, the panel's score, the spread of rates; rates corrected for judge error).

Every string that came from a file (model names, run names, notes) goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.html_parts import e, mean_text, pct, rate_text, table, td
from toolemu.reporting.model import AgreementStats, CorrectedRate, MetricStats, PanelStats, Report

LEGEND_NOTE = (
    "Who made the numbers above: every judge of every scorer, with its id (a hash of its model, parameters, prompt "
    "and record schema version) and the verdicts it gave. The headline judge's verdicts (the standard eval file) "
    "make the run's numbers; a panel's other judges are compared in the Judges section."
)


def judges_legend(report: Report) -> str:
    if not report.judges:
        return ""
    rows = [
        [
            td(f'<span class="run-name">{e(u.run)}</span>'),
            td(e(u.scorer)),
            td(e(u.model or "–")),
            td(f"<code>{e(u.judge)}</code>"),
            td(f"<code>{e(u.prompt)}</code>" if u.prompt else "–"),
            td(e(u.file)),
            td("headline" if u.headline else "panel"),
            td(str(u.scored), True),
            td(str(u.failed), True),
        ]
        for u in report.judges
    ]
    head = ["run", "scorer", "model", "judge id", "prompt", "eval file", "role", "#verdicts", "#failed"]
    return f'<h3>Judges</h3><p class="note">{e(LEGEND_NOTE)}</p>' + table("judges-table", head, rows)


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


def _agreement(p: PanelStats, index: int) -> str:
    rows = []
    for a in p.agreement:
        kappa = a.kappa
        rows.append(
            [
                td(f"{e(a.a)} <span class=sub>vs</span> {e(a.b)}"),
                td(str(a.n), True),
                td(rate_text(a.raw, a.raw_ci), True),
                td(mean_text(kappa, a.kappa_ci) if kappa is not None else "undefined", True),
                td(_kappa(a.kappa_quadratic, a.kappa_quadratic_ci), True),
                td(_kappa(a.kappa_binary, a.kappa_binary_ci), True),
                td(f"{pct(a.rate_a)} / {pct(a.rate_b)}", True),
                td(_confusion(a)),
            ]
        )
    head = [
        "judges a vs b",
        "#pairs",
        "#raw agreement",
        "#kappa",
        "#quadratic kappa",
        "#binarised kappa",
        "#rate a / b",
        "",
    ]
    return table(f"agreement-{index}", head, rows)


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
        + _agreement(p, index)
    )


def _corrected(rows_in: list[CorrectedRate]) -> str:
    rows = [
        [
            td(f'<span class="run-name">{e(c.run)}</span>'),
            td(e(c.scorer)),
            td(e(c.judge)),
            td(e(c.event)),
            td(str(c.n), True),
            td(rate_text(c.raw, c.raw_ci), True),
            td(f"{c.sensitivity:.2f} / {c.specificity:.2f}", True),
            td(str(c.labelled) if c.labelled is not None else "given", True),
            td(rate_text(c.corrected, c.corrected_ci), True),
            td(e("; ".join(c.notes))),
        ]
        for c in rows_in
    ]
    head = [
        "run",
        "scorer",
        "judge",
        "event",
        "#N",
        "#raw [95% CI]",
        "#Se / Sp",
        "#labels",
        "#corrected [95% CI]",
        "notes",
    ]
    return (
        '<h3>Rates corrected for judge error</h3><p class="note">Rogan–Gladen: (p + Sp − 1) / (Se + Sp − 1), clipped '
        "to [0, 1], with the judge's sensitivity and specificity against human labels; percentile bootstrap CI over "
        "the run's episodes and the labelled pairs.</p>" + table("corrected-table", head, rows)
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

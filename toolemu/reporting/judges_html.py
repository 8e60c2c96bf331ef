"""The report page's judge parts: the legend of who judged (beside the summary), and the Judges section (panels:
each judge, their agreement, the panel's score, the spread of rates; rates corrected for judge error).

Every string that came from a file (model names, run names, notes) goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.html import _ci, _fmt, _pct, e
from toolemu.reporting.model import AgreementStats, CorrectedRate, MetricStats, PanelStats, Report

LEGEND_NOTE = (
    "Who made the numbers above: every judge of every scorer, with its id (a hash of its model, parameters, prompt "
    "and record schema version) and the verdicts it gave. The headline judge's verdicts (the standard eval file) "
    "make the run's numbers; a panel's other judges are compared in the Judges section."
)


def _table(table_id: str, head: list[str], rows: list[list[str]]) -> str:
    # A heading that starts with "#" heads a column of numbers.
    ths = "".join(f'<th class="num">{e(h[1:])}</th>' if h.startswith("#") else f"<th>{e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return (
        f'<div class="table-wrap fit"><table class="stats narrow" id="{e(table_id)}"><thead><tr>{ths}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _td(text: str, num: bool = False) -> str:
    return f'<td class="num">{text}</td>' if num else f"<td>{text}</td>"


def _rate(value: float | None, ci: tuple[float, float] | None) -> str:
    return f'{_pct(value)} <span class="ci">{_ci(ci, pct=True)}</span>'


def _mean(value: float | None, ci: tuple[float, float] | None) -> str:
    return f'{_fmt(value)} <span class="ci">{_ci(ci)}</span>'


def judges_legend(report: Report) -> str:
    if not report.judges:
        return ""
    rows = [
        [
            _td(f'<span class="run-name">{e(u.run)}</span>'),
            _td(e(u.scorer)),
            _td(e(u.model or "–")),
            _td(f"<code>{e(u.judge)}</code>"),
            _td(f"<code>{e(u.prompt)}</code>" if u.prompt else "–"),
            _td(e(u.file)),
            _td("headline" if u.headline else "panel"),
            _td(str(u.scored), True),
            _td(str(u.failed), True),
        ]
        for u in report.judges
    ]
    head = ["run", "scorer", "model", "judge id", "prompt", "eval file", "role", "#verdicts", "#failed"]
    return f'<h3>Judges</h3><p class="note">{e(LEGEND_NOTE)}</p>' + _table("judges-table", head, rows)


def _stats_cells(m: MetricStats, failure: bool) -> list[str]:
    cells = [
        _td(str(m.n), True),
        _td(_mean(m.mean, m.mean_ci), True),
        _td(_rate(m.binarized_rate, m.binarized_ci), True),
    ]
    if failure:
        cells.append(_td(_rate(m.failure_incidence, m.failure_ci), True))
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


def _agreement(p: PanelStats, index: int) -> str:
    rows = []
    for a in p.agreement:
        kappa = a.kappa
        rows.append(
            [
                _td(f"{e(a.a)} <span class=sub>vs</span> {e(a.b)}"),
                _td(str(a.n), True),
                _td(_rate(a.raw, a.raw_ci), True),
                _td(_mean(kappa, a.kappa_ci) if kappa is not None else "undefined", True),
                _td(
                    _mean(a.kappa_quadratic, a.kappa_quadratic_ci) if a.kappa_quadratic is not None else "undefined",
                    True,
                ),
                _td(_mean(a.kappa_binary, a.kappa_binary_ci) if a.kappa_binary is not None else "undefined", True),
                _td(f"{_pct(a.rate_a)} / {_pct(a.rate_b)}", True),
                _td(_confusion(a)),
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
    return _table(f"agreement-{index}", head, rows)


def _panel(p: PanelStats, index: int, report: Report) -> str:
    info = report.scorer(p.scorer)
    failure = info is not None and info.failure_bound is not None
    rate = f"#{info.rate_name} rate" if info else "#rate"
    head = ["judge", "#scored", "#mean [95% CI]", rate] + (["#failure incidence"] if failure else [])
    rows = [[_td(e(j.label)), *_stats_cells(j.stats, failure)] for j in p.judges]
    rows.append([_td("<strong>panel: mean of the judges</strong>"), *_stats_cells(p.mean, failure)])
    rows.append([_td("<strong>panel: majority score</strong>"), *_stats_cells(p.majority, failure)])
    spread = "; ".join(
        f"{e(s.rate)} {_pct(s.low)} ({e(s.low_judge)}) to {_pct(s.high)} ({e(s.high_judge)})" for s in p.spread
    )
    return (
        f'<h3><span class="run-name">{e(p.run)}</span> · {e(p.scorer)}: {len(p.judges)} judges</h3>'
        f'<p class="note">The panel\'s rows are over the {p.complete} episodes every judge scored '
        f"({p.incomplete} episodes scored by only some judges are left out of them). Across judges: {spread}.</p>"
        + _table(f"panel-{index}", head, rows)
        + _agreement(p, index)
    )


def _corrected(rows_in: list[CorrectedRate]) -> str:
    rows = [
        [
            _td(f'<span class="run-name">{e(c.run)}</span>'),
            _td(e(c.scorer)),
            _td(e(c.judge)),
            _td(e(c.event)),
            _td(str(c.n), True),
            _td(_rate(c.raw, c.raw_ci), True),
            _td(f"{c.sensitivity:.2f} / {c.specificity:.2f}", True),
            _td(str(c.labelled) if c.labelled is not None else "given", True),
            _td(_rate(c.corrected, c.corrected_ci), True),
            _td(e("; ".join(c.notes))),
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
        "the run's episodes and the labelled pairs.</p>" + _table("corrected-table", head, rows)
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

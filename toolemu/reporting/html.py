"""The self-contained HTML report: one page, no network, every model-written string treated as hostile.

`render_html(report)` returns the page as text. What it holds:

- the runs and a summary table per run, with status counts and failed-evaluation counts next to the numbers they
  affect, plus per-toolkit / per-risk-category / per-trial tables behind toggles;
- plots as inline SVG, drawn by our own small writer (toolemu.reporting.svg): score distributions, safety against
  helpfulness, per-toolkit means and pass^k curves;
- a trace viewer (static/report.js) that lists the episodes (a summary of each), filters them and builds one trace
  when it is opened, from the report's trace store (toolemu.reporting.traces): chunks embedded in the page for a
  small report, sidecar script files beside it for a large one, parsed only when one of their episodes is opened.

Security: the server-side parts go through `html.escape`, plot text included (the SVG writer escapes every string
it writes, so a `$` or `<` in a label is just text); episodes travel as JSON in a
`<script type="application/json">` block with `<`, `>`, `&`, U+2028 and U+2029 written as `\\uXXXX` (embedded
trace chunks likewise), sidecar chunks hold their JSON as a JS string literal that the viewer hands to JSON.parse,
and the script builds the DOM with `textContent` only. A Content-Security-Policy meta tag lets only the scripts that
carry this render's random nonce run, so an injected `<script>` or `onerror=` could not run even if it got through.
"""

from __future__ import annotations

import html
import json
import math
import re
import secrets
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from toolemu.reporting.model import (
    ANY_THREAT,
    EPISODE_STATUSES,
    NO_THREAT,
    OCCASIONAL_STATUSES,
    GroupStats,
    MetricStats,
    Report,
)
from toolemu.reporting.plots import (
    HEATMAP_MIN_RUNS,
    finite,
    overall_groups,
    pass_k_legend,
    plot_distributions,
    plot_pass_k,
    plot_safety_vs_helpfulness,
    plot_toolkits,
    run_order,
)
from toolemu.reporting.traces import CHUNK_EPISODES, TRACES_DIR, TraceStore, store_views
from toolemu.scorers.base import MetricInfo

__all__ = ["render_html", "csp_policy", "embed_json"]

# Okabe-Ito: tells runs apart for colour-blind readers too; cycles past eight runs.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#F0E442")
STATUS_TITLES = {
    "final_answer": "final answer",
    "quit": "quit",
    "max_iterations": "max iterations",
    "token_limit": "token limit",
    "closed": "closed, no answer",
    "stopped": "server stopped, no answer",
    "error": "error",
    "unknown": "unknown",
}
WARN_STATUSES = ("error", "quit", "max_iterations", "token_limit", "closed", "stopped")  # counts shown as a warning
NO_SCORES = '<p class="empty">No scored episodes to plot: every evaluation failed or is missing.</p>'

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# --------------------------------------------------------------------------------------------------- helpers


def e(text: object) -> str:
    """Escape for HTML text and double- or single-quoted attributes."""
    return html.escape(_CONTROL_RE.sub("\ufffd", str(text)), quote=True)


def embed_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: no `<`, `>` or `&` (so no `</script>` or `<!--`), and no
    U+2028/U+2029. These characters only occur inside JSON strings, where `\\uXXXX` means the same thing."""
    return embed_json_text(json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def embed_json_text(text: str) -> str:
    """A JSON text made safe inside a <script> element, as `embed_json` does."""
    return _JSON_ESCAPE_RE.sub(lambda m: _JSON_ESCAPES[m.group(0)], text)


def csp_policy(nonce: str) -> str:
    return (
        f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; "
        "base-uri 'none'; form-action 'none'"
    )


def _static(name: str) -> str:
    return (resources.files("toolemu") / "reporting" / "static" / name).read_text(encoding="utf-8")


def _fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{100 * x:.1f}%"


def _ci(ci: Sequence[float] | None, pct: bool = False) -> str:
    if ci is None:
        return ""
    lo, hi = ci
    if pct:  # whole percents: a CI's bounds do not carry a tenth of a percent of meaning
        return "[–]" if not (finite(lo) and finite(hi)) else f"[{100 * lo:.0f}%, {100 * hi:.0f}%]"
    return f"[{_fmt(lo)}, {_fmt(hi)}]"


# ---------------------------------------------------------------------------------------------------- tables


def _swatch(color: str) -> str:
    return f'<span class="swatch" style="background:{e(color)}"></span>'


def _count(n: int, warn: bool = False, title: str = "") -> str:
    cls = "num zero" if n == 0 else ("num warn" if warn else "num")
    t = f' title="{e(title)}"' if title else ""
    return f'<td class="{cls}"{t}>{n}</td>'


def _metric_cells(info: MetricInfo, m: MetricStats | None, episodes: int) -> list[str]:
    if m is None:  # this run has no evaluations of this scorer
        return ['<td class="num gstart na">–</td>'] + ['<td class="num na">–</td>'] * (
            3 + (info.failure_bound is not None)
        )
    cells = [
        f'<td class="num gstart"><span class="mean">{_fmt(m.mean)}</span><span class="ci">{_ci(m.mean_ci)}</span></td>',
        f'<td class="num">{_pct(m.binarized_rate)}<span class="ci">{_ci(m.binarized_ci, pct=True)}</span></td>',
    ]
    if info.failure_bound is not None:
        cells.append(
            f'<td class="num">{_pct(m.failure_incidence)}<span class="ci">{_ci(m.failure_ci, pct=True)}</span></td>'
        )
    cells.append(f'<td class="num" title="scored episodes out of {episodes}">{m.n}</td>')
    if m.eval_failed is None:
        cells.append('<td class="num na" title="the run has no eval file of this scorer">not evaluated</td>')
    else:
        cells.append(_count(m.eval_failed, warn=True, title="evaluations that errored or are missing"))
    return cells


def _metric_heads(info: MetricInfo) -> str:
    heads = [
        '<th class="num gstart">mean [95% CI]</th>',
        f'<th class="num">{e(info.rate_name)} (≥&nbsp;{info.threshold:g})</th>',
    ]
    if info.failure_bound is not None:
        op, bound = info.failure_bound
        heads.append(f'<th class="num">failure ({"≤" if op == "<=" else "≥"}&nbsp;{bound:g})</th>')
    heads += ['<th class="num">scored</th>', '<th class="num">eval failed</th>']
    return "".join(heads)


def _statuses_in(groups: Iterable[GroupStats]) -> list[str]:
    present = {s for g in groups for s, n in g.status_counts.items() if n}
    shown = [s for s in EPISODE_STATUSES if s != "unknown" or "unknown" in present]
    return shown + sorted(present - set(EPISODE_STATUSES))


def _stats_table(
    rows: list[tuple[str, str, GroupStats]], first_col: str, table_id: str, infos: list[MetricInfo]
) -> str:
    """rows: (first cell html, run, group); one column group per scorer."""
    statuses = _statuses_in(g for _, _, g in rows)
    head1 = (
        f'<tr><th rowspan="2">{e(first_col)}</th><th rowspan="2" class="num">Episodes</th>'
        f'<th colspan="{len(statuses)}" class="grp">Episodes by status</th>'
        + "".join(
            f'<th colspan="{4 + (i.failure_bound is not None)}" class="grp" data-scorer="{e(i.name)}">{e(i.title)}</th>'
            for i in infos
        )
        + "</tr>"
    )
    head2 = (
        "<tr>"
        + "".join(
            f'<th class="num{" gstart" if i == 0 else ""}">{e(STATUS_TITLES.get(s, s))}</th>'
            for i, s in enumerate(statuses)
        )
        + "".join(_metric_heads(i) for i in infos)
        + "</tr>"
    )
    body = []
    for first, _run, g in rows:
        cells = [f"<td>{first}</td>", f'<td class="num strong">{g.episodes}</td>']
        for i, s in enumerate(statuses):
            cell = _count(g.status_counts.get(s, 0), warn=s in WARN_STATUSES)
            cells.append(cell.replace('class="num', 'class="num gstart', 1) if i == 0 else cell)
        for info in infos:
            cells += _metric_cells(info, g.metrics.get(info.name), g.episodes)
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="table-wrap"><table class="stats" id="{e(table_id)}"><thead>{head1}{head2}</thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _run_cell(run: str, colors: dict[str, str]) -> str:
    return f'<span class="run-label">{_swatch(colors[run])}<span class="run-name">{e(run)}</span></span>'


def _summary(report: Report, colors: dict[str, str]) -> str:
    overall = overall_groups(report)
    rows = [(_run_cell(r, colors), r, overall[r]) for r in run_order(report) if r in overall]
    if not rows:
        return '<p class="empty">No statistics in this report.</p>'
    return _stats_table(rows, "Run", "summary-table", report.scorers)


def _breakdown(report: Report, by: str, title: str, colors: dict[str, str]) -> str:
    groups = [g for g in report.groups if g.by == by]
    if not groups:
        return ""
    order = {r: i for i, r in enumerate(run_order(report))}
    key = (lambda g: (int(g.key) if g.key.isdigit() else 1 << 30, g.key)) if by == "trial" else (lambda g: g.key)
    groups.sort(key=lambda g: (key(g), order.get(g.run, 0)))
    rows = []
    for g in groups:
        first = f'{_swatch(colors[g.run])}<span class="key">{e(g.key)}</span> <span class="sub">{e(g.run)}</span>'
        rows.append((first, g.run, g))
    keys = len({g.key for g in groups})
    return (
        f'<details class="breakdown"><summary>{e(title)} <span class="sub">({keys})</span></summary>'
        f"{_stats_table(rows, title.split(' ')[-1].capitalize(), f'table-{by}', report.scorers)}</details>"
    )


def _paired(report: Report) -> str:
    if not report.paired:
        note = report.paired_note if report.paired_note.startswith("none") else ""
        return f'<h3>Paired differences</h3><p class="note" id="paired-note">{e(note)}.</p>' if note else ""
    rows = []
    for p in report.paired:
        excludes_zero = p.ci is not None and (p.ci[0] > 0 or p.ci[1] < 0)
        cls = ' class="sig"' if excludes_zero else ""
        diff = "–" if p.mean_diff is None else f"{p.mean_diff:+.2f}"
        rows.append(
            f'<tr><td><span class="run-name">{e(p.b)}</span> − <span class="run-name">{e(p.a)}</span></td>'
            f'<td>{e(p.scorer)}</td><td class="num">{p.pairs}</td>'
            f'<td class="num"><span{cls}>{diff}</span> <span class="ci">{_ci(p.ci)}</span></td></tr>'
        )
    return (
        '<h3>Paired differences</h3><p class="note">Run b minus run a over the (case, trial) pairs both scored; '
        f"bold where the 95% CI excludes zero. Compared: {e(report.paired_note or 'every pair of runs')}.</p>"
        '<div class="table-wrap fit"><table class="stats narrow" id="paired-table"><thead><tr><th>b − a</th>'
        '<th>metric</th><th class="num">pairs</th><th class="num">mean difference [95% CI]</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _security(report: Report) -> str:
    """Attack success per threat kind and overall, and helpfulness under attack against the rest."""
    groups = [g for g in report.groups if g.by == "threat"]
    attack = report.scorer("attack")
    if not groups:
        return ""
    helpful = report.scorer("helpfulness")
    rows = []
    for g in sorted(groups, key=lambda g: (g.run, g.key in (ANY_THREAT, NO_THREAT), g.key)):
        a = g.metric("attack") if attack else None
        h = g.metric("helpfulness") if helpful else None
        asr = (
            "–"
            if a is None or a.n == 0
            else f"{_pct(a.binarized_rate)} <span class=ci>{_ci(a.binarized_ci, pct=True)}</span>"
        )
        util = "–" if h is None or h.n == 0 else f"{_fmt(h.mean)} <span class=ci>{_ci(h.mean_ci)}</span>"
        key = {ANY_THREAT: "all threats", NO_THREAT: "no threat (utility without attack)"}.get(g.key, g.key)
        rows.append(
            f'<tr><td><span class="run-name">{e(g.run)}</span></td><td>{e(key)}</td><td class="num">{g.episodes}</td>'
            f'<td class="num">{asr}</td><td class="num">{a.n if a else 0}</td><td class="num">{util}</td></tr>'
        )
    return (
        '<section id="security"><h2>Security</h2><p class="note">Attack success rate: the share of judged '
        "threat episodes in which the attacker's goal was reached (lower is better), with bootstrap 95% CIs. "
        "Utility under attack: mean helpfulness on threat cases, against the cases with no threat.</p>"
        '<div class="table-wrap fit"><table class="stats narrow" id="security-table"><thead><tr><th>run</th>'
        '<th>threat kind</th><th class="num">episodes</th><th class="num">attack success [95% CI]</th>'
        '<th class="num">judged</th><th class="num">helpfulness [95% CI]</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _gates(report: Report) -> str:
    """What the gates decided: allowed, warned and denied calls, top reasons, and rates where no gate stopped."""
    overall = [
        g
        for g in report.groups
        if g.by == "all" and (g.gates.warned or g.gates.denied_pre_call or g.gates.denied_post_call)
    ]
    if not overall:
        return ""
    parts = ['<section id="gates"><h2>Gates</h2>']
    for g in overall:
        s = g.gates
        denied = s.denied_pre_call + s.denied_post_call
        if s.calls and denied == s.calls:
            parts.append(
                f'<p class="banner" id="all-denied">Every tool call of run {e(g.run)} was denied by a gate: its '
                "safety numbers say nothing about the agent, only about the gates.</p>"
            )
        reasons = "".join(f"<li>{e(r)} <span class=sub>({n})</span></li>" for r, n in s.top_reasons)
        ungated = ", ".join(f"{e(name)} {_pct(m.binarized_rate)} of {m.n}" for name, m in g.ungated.items() if m.n)
        parts.append(
            f'<h3><span class="run-name">{e(g.run)}</span></h3><table class="stats narrow gates"><tbody>'
            f'<tr><th>tool calls</th><td class="num">{s.calls}</td></tr>'
            f'<tr><th>allowed</th><td class="num">{s.allowed}</td></tr>'
            f'<tr><th>warned</th><td class="num">{s.warned}</td></tr>'
            f'<tr><th>denied before the tool ran</th><td class="num">{s.denied_pre_call}</td></tr>'
            f'<tr><th>denied after the tool ran</th><td class="num">{s.denied_post_call}</td></tr>'
            f'<tr><th>episodes with a denial</th><td class="num">{s.episodes_with_denials}</td></tr>'
            "</tbody></table>"
            + (f"<p>Top reasons:</p><ul>{reasons}</ul>" if reasons else "")
            + (
                f'<p class="note">Rates over the {g.episodes - s.episodes_with_denials} episodes no gate stopped: '
                f"{ungated}.</p>"
                if ungated
                else ""
            )
        )
    parts.append("</section>")
    return "".join(parts)


def _runs_header(report: Report, colors: dict[str, str]) -> str:
    items = []
    for r in report.runs:
        bench = f"{r.benchmark_version or 'unversioned'} ({r.benchmark_hash[:15]})" if r.benchmark_hash else ""
        rows = [
            ("agent", r.agent),
            ("emulator", r.emulator),
            ("evaluator", r.evaluator),
            ("benchmark", bench),
            ("source", r.source),
        ]
        if r.budget:
            rows.append(("budget", r.budget.removeprefix("BUDGET: ")))
        dl = "".join(f"<dt>{e(k)}</dt><dd>{e(v) if v else '<span class=sub>–</span>'}</dd>" for k, v in rows)
        items.append(
            f'<li class="run-card" style="border-top-color:{e(colors[r.run])}">'
            f'<div class="run-title">{_swatch(colors[r.run])}<span class="run-name">{e(r.run)}</span>'
            f'<span class="tag">{e(r.format)}</span></div><dl>{dl}</dl></li>'
        )
    return f'<ul class="runs">{"".join(items)}</ul>' if items else ""


def _figure_block(svg: str | None, fig_id: str, caption: str) -> str:
    if svg is None:
        return ""
    return f'<figure class="plot" id="{e(fig_id)}">{svg}<figcaption>{caption}</figcaption></figure>'


# ------------------------------------------------------------------------------------------------------ page


def _trace_data(traces: TraceStore) -> dict[str, Any]:
    """How the viewer finds a trace: in the page's chunk blocks, or in sidecar files beside the page."""
    mode = "files" if traces.in_files else ("embedded" if traces.embedded else "none")
    return {"mode": mode, "chunk": CHUNK_EPISODES, "token": traces.token, "dir": TRACES_DIR, "count": traces.count}


def render_html(report: Report, traces: TraceStore | None = None) -> str:
    """The report as one HTML page (no network; CSS, JS, data and plots inline). The episodes' traces come from
    `traces` (filled as the runs were read, each view's `trace_id` saying where) or, without one, from the views'
    own steps, embedded in the page."""
    from toolemu.reporting.checks_html import checks_section  # these build on this module's helpers
    from toolemu.reporting.fidelity_html import fidelity_table
    from toolemu.reporting.judge_audit_html import judge_audit_section
    from toolemu.reporting.judges_html import judges_legend, judges_section
    from toolemu.reporting.measurement_html import measurement_table
    from toolemu.reporting.noise_html import noise_table
    from toolemu.reporting.qualifiers_html import cost_section, qualifiers_summary, stability_section
    from toolemu.reporting.robust_html import robust_section

    if traces is None:
        traces = store_views(report.episodes)

    nonce = secrets.token_urlsafe(18)
    runs = list(dict.fromkeys(run_order(report) + [ep.run for ep in report.episodes]))
    colors = {run: PALETTE[i % len(PALETTE)] for i, run in enumerate(runs)}
    css = _static("report.css")
    js = _static("report.js")
    if "</style" in css.lower() or "</script" in js.lower():
        raise ValueError("report.css / report.js must not contain a closing </style> or </script> tag")

    data = {
        "schema_version": report.schema_version,
        "statuses": [*EPISODE_STATUSES, *OCCASIONAL_STATUSES],
        "runs": [{"run": r, "color": colors[r]} for r in runs],
        "scorers": [json.loads(i.model_dump_json()) for i in report.scorers],
        "episodes": [{**ep.summary(), "trace": ep.trace_id} for ep in report.episodes],
        "traces": _trace_data(traces),
    }

    heatmaps = len(run_order(report)) >= HEATMAP_MIN_RUNS  # too many runs for bars side by side
    plots = [
        _figure_block(
            plot_distributions(report, colors),
            "plot-distributions",
            "Share of each score among the scored episodes of a run; n and failed evaluations in the "
            + ("summary table." if heatmaps else "legend."),
        ),
        _figure_block(
            plot_safety_vs_helpfulness(report, colors),
            "plot-scatter",
            "Mean safety and helpfulness per run, with bootstrap 95% confidence intervals. Up and right is better.",
        ),
    ]
    toolkit_plot = _figure_block(
        plot_toolkits(report, colors),
        "plot-toolkits",
        "Mean score per toolkit and run (episodes that use several toolkits count for each), riskiest toolkit "
        "first"
        + ("; grey: no scored episode. " if heatmaps else ". ")
        + "Exact numbers in the per-toolkit table below.",
    )
    passk_plot = _figure_block(
        plot_pass_k(report, colors),
        "plot-passk",
        "pass^k: the mean over cases of C(c, k) / C(n, k), where c of a case's n trials passed, i.e. the chance "
        "that k trials drawn from a case all pass (a pass as each scorer declares it). "
        f"Lines: {pass_k_legend(report)}.",
    )
    breakdowns = "".join(
        _breakdown(report, by, title, colors)
        for by, title in (
            ("toolkit", "Per toolkit"),
            ("risk_category", "Per risk category"),
            ("trial", "Per trial"),
            ("threat", "Per threat kind"),
        )
    )
    n_eps = len(report.episodes)
    nav = [("summary", "Summary"), ("plots", "Scores")]
    if any(g.by == "threat" for g in report.groups):
        nav.append(("security", "Security"))
    if any(g.gates.warned or g.gates.denied_pre_call or g.gates.denied_post_call for g in report.groups):
        nav.append(("gates", "Gates"))
    judges_html = judges_section(report)
    if judges_html:
        nav.append(("judges", "Judges"))
    audit_html = judge_audit_section(report)
    nav.append(("judge-audit", "Judge audit"))
    checks_html = checks_section(report)
    if checks_html:
        nav.append(("checks", "Checks"))
    robust_html = robust_section(report)
    if robust_html:
        nav.append(("robust", "Robustness"))
    stability_html, cost_html = stability_section(report), cost_section(report)
    if stability_html:
        nav.append(("stability", "Judge stability"))
    if cost_html:
        nav.append(("cost", "Cost"))
    fidelity_html = fidelity_table(report)
    if toolkit_plot or breakdowns or fidelity_html:
        nav.append(("toolkits", "Toolkits"))
    if passk_plot:
        nav.append(("passk", "pass^k"))
    nav.append(("episodes", f"Episodes ({n_eps})"))
    nav_html = "".join(f'<a href="#{k}">{e(v)}</a>' for k, v in nav)

    body = [
        f'<header class="top"><div class="wrap"><h1>ToolEmu report</h1><nav>{nav_html}</nav>'
        f'<p class="meta">generated {e(report.generated_at)} · schema {e(report.schema_version)} · '
        f"{len(report.runs)} run{'s' if len(report.runs) != 1 else ''} · {n_eps} episodes</p></div></header>",
        '<main class="wrap">',
        f'<section id="summary"><h2>Runs</h2>{_runs_header(report, colors)}',
        "".join(f'<p class="note warning">{e(w)}</p>' for w in report.warnings),
        "<h3>Summary</h3>",
        '<p class="note">Means, rates and CIs (bootstrap, 95%) are over the <em>scored</em> evaluations of a run '
        "(one per episode; replicate judgements each count, as in ToolEmu's reader). "
        "Episodes that ended in an error, a quit, the iteration limit or the token limit are counted next to the "
        "scores; "
        "<em>eval failed</em> counts evaluations that errored or are missing — counted, never dropped silently. "
        "Each scorer's title gives its scale and direction.</p>",
        _summary(report, colors),
        measurement_table(report),
        qualifiers_summary(report),
        noise_table(report),
        judges_legend(report),
        _paired(report),
        "</section>",
        _security(report),
        _gates(report),
        judges_html,
        audit_html,
        checks_html,
        robust_html,
        stability_html,
        cost_html,
    ]
    plot_html = "".join(plots)
    body.append(
        '<section id="plots"><h2>Scores</h2>'
        + (f'<div class="plots">{plot_html}</div>' if plot_html else NO_SCORES)
        + "</section>"
    )
    if toolkit_plot or breakdowns or fidelity_html:
        body.append(
            f'<section id="toolkits"><h2>Toolkits</h2>{toolkit_plot or NO_SCORES}{breakdowns}{fidelity_html}</section>'
        )
    if passk_plot:
        body.append(f'<section id="passk"><h2>pass^k</h2>{passk_plot}</section>')
    body.append(
        '<section id="episodes"><h2>Episodes</h2>'
        '<noscript><p class="empty">The trace viewer needs JavaScript.</p></noscript>'
        '<div id="viewer" class="viewer"></div></section>'
    )
    body.append("</main>")

    return "".join(
        [
            "<!DOCTYPE html>\n",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{e(csp_policy(nonce))}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">',
            '<link rel="icon" href="data:,">',
            f"<title>ToolEmu report · {e(', '.join(r.run for r in report.runs)[:200])}</title>",
            f'<style nonce="{nonce}">\n{css}\n</style>',
            "</head><body>",
            "\n".join(body),
            f'\n<script type="application/json" id="report-data">{embed_json(data)}</script>',
            *(
                f'\n<script type="application/json" id="traces-{n}">{embed_json_text(chunk)}</script>'
                for n, chunk in enumerate(traces.embedded)
            ),
            f'\n<script nonce="{nonce}">\n{js}\n</script>',
            "\n</body></html>\n",
        ]
    )

"""The HTML report: one page that opens with the leaderboard, no network, every model-written string treated as hostile.

`render_html(report)` returns the page as text. What it holds, in order:

- the leaderboard (toolemu.reporting.leaderboard_html): one row per run, sortable and filterable;
- the summary: each run's status counts and numbers with failed-evaluation counts beside the numbers they affect,
  and what qualifies them (measurement, judges' flip rates and cost, noise, judges, paired differences);
- plots as inline SVG, drawn by our own small writer (toolemu.reporting.svg): score distributions, safety against
  helpfulness, per-toolkit means and pass^k curves; security, gates, judges and the other sections;
- each run's detail (its card: who acted, emulated and judged, its benchmark and source; with many runs, its own
  tables by toolkit, risk category, trial and threat kind), and a trace viewer (static/report.js) that lists the
  episodes, filters them and builds one trace when it is opened.

A page stays small at any study size: with more than MAX_INLINE_RUNS runs the tables that have a row per run and key
move into each run's detail and the plots show the leaderboard's first MAX_PLOT_RUNS runs; each run's detail and
episode list go to a sidecar file (`report_runs/<token>-<n>.js`, toolemu.reporting.sidecars) that the page loads when
the run is opened, once the episodes' summaries pass EPISODES_EMBED_LIMIT bytes. Traces come from the report's trace
store (toolemu.reporting.traces): chunks in the page for a small report, otherwise read from the run files by
`toolemu view` (or copied beside the page, when asked).

Security: the server-side parts go through `html.escape`, plot text included (the SVG writer escapes every string
it writes, so a `$` or `<` in a label is just text); episodes travel as JSON in a
`<script type="application/json">` block with `<`, `>`, `&`, U+2028 and U+2029 written as `\\uXXXX` (embedded
trace chunks likewise), sidecar files hold their JSON as a JS string literal that the viewer hands to JSON.parse,
and the script builds the DOM with `textContent` only, but for a run's detail, which is this module's own escaped
HTML carried in a sidecar and parsed inert (DOMParser) before it is moved into the page. A Content-Security-Policy
meta tag lets only the scripts that carry this render's random nonce run, so an injected `<script>` or `onerror=`
could not run even if it got through.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from toolemu.reporting.checks_html import checks_section
from toolemu.reporting.fidelity_html import fidelity_table
from toolemu.reporting.html_parts import (
    PALETTE,
    STATUS_TITLES,
    ci_text,
    count_cell,
    e,
    embed_json,
    embed_json_text,
    fmt,
    page,
    pct,
    static_text,
    swatch,
)
from toolemu.reporting.judge_audit_html import judge_audit_section
from toolemu.reporting.judges_html import judges_legend, judges_section
from toolemu.reporting.leaderboard import Identity, Leaderboard, identity, leaderboard
from toolemu.reporting.leaderboard_html import leaderboard_block
from toolemu.reporting.measurement_html import measurement_table
from toolemu.reporting.model import (
    ANY_THREAT,
    EPISODE_STATUSES,
    NO_THREAT,
    OCCASIONAL_STATUSES,
    GroupStats,
    JudgeUse,
    MetricStats,
    PassK,
    Report,
    RunInfo,
)
from toolemu.reporting.noise_html import noise_table
from toolemu.reporting.plots import (
    HEATMAP_MIN_RUNS,
    overall_groups,
    pass_k_legend,
    plot_distributions,
    plot_pass_k,
    plot_safety_vs_helpfulness,
    plot_toolkits,
    run_order,
)
from toolemu.reporting.qualifiers_html import cost_section, qualifiers_summary, stability_section
from toolemu.reporting.robust_html import robust_section
from toolemu.reporting.sidecars import SidecarFolder
from toolemu.reporting.traces import CHUNK_EPISODES, TRACES_DIR, TraceStore, store_views
from toolemu.scorers.base import MetricInfo

__all__ = ["render_html", "e", "embed_json", "run_sidecars", "RUNS_DIR"]

WARN_STATUSES = ("error", "quit", "max_iterations", "token_limit", "closed", "stopped")  # counts shown as a warning
NO_SCORES = '<p class="empty">No scored episodes to plot: every evaluation failed or is missing.</p>'
MAX_INLINE_RUNS = 12  # past this, tables with a row per run and key (toolkit, ...) are in each run's detail
MAX_PLOT_RUNS = 30  # past MAX_INLINE_RUNS, the plots show this many runs: the leaderboard's first
EPISODES_EMBED_LIMIT = 2_000_000  # bytes of episode summaries the page holds; past it, each run's are in a sidecar
RUNS_DIR = "report_runs"
RUNS_CALLBACK = "toolemuRun"


def run_sidecars(directory: Any, scrub: Callable[[str], str] | None = None) -> SidecarFolder:
    """Where a page written into `directory` puts each run's detail and episodes when they do not fit in it."""
    return SidecarFolder(directory, RUNS_DIR, RUNS_CALLBACK, scrub=scrub)


# ---------------------------------------------------------------------------------------------------- tables


def _metric_cells(info: MetricInfo, m: MetricStats | None, episodes: int) -> list[str]:
    if m is None:  # this run has no evaluations of this scorer
        return ['<td class="num gstart na">–</td>'] + ['<td class="num na">–</td>'] * (
            3 + (info.failure_bound is not None)
        )
    cells = [
        f'<td class="num gstart"><span class="mean">{fmt(m.mean)}</span><span class="ci">{ci_text(m.mean_ci)}'
        "</span></td>",
        f'<td class="num">{pct(m.binarized_rate)}<span class="ci">{ci_text(m.binarized_ci, pct=True)}</span></td>',
    ]
    if info.failure_bound is not None:
        cells.append(
            f'<td class="num">{pct(m.failure_incidence)}<span class="ci">{ci_text(m.failure_ci, pct=True)}</span></td>'
        )
    cells.append(f'<td class="num" title="scored episodes out of {episodes}">{m.n}</td>')
    if m.eval_failed is None:
        cells.append('<td class="num na" title="the run has no eval file of this scorer">not evaluated</td>')
    else:
        cells.append(count_cell(m.eval_failed, warn=True, title="evaluations that errored or are missing"))
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
            cell = count_cell(g.status_counts.get(s, 0), warn=s in WARN_STATUSES)
            cells.append(cell.replace('class="num', 'class="num gstart', 1) if i == 0 else cell)
        for info in infos:
            cells += _metric_cells(info, g.metrics.get(info.name), g.episodes)
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="table-wrap"><table class="stats" id="{e(table_id)}"><thead>{head1}{head2}</thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _run_cell(run: str, colors: dict[str, str]) -> str:
    return f'<span class="run-label">{swatch(colors[run])}<span class="run-name">{e(run)}</span></span>'


def _summary(report: Report, colors: dict[str, str], table_id: str = "summary-table") -> str:
    overall = overall_groups(report)
    rows = [(_run_cell(r, colors), r, overall[r]) for r in run_order(report) if r in overall]
    if not rows:
        return '<p class="empty">No statistics in this report.</p>'
    return _stats_table(rows, "Run", table_id, report.scorers)


def _breakdown(report: Report, by: str, title: str, colors: dict[str, str], suffix: str = "") -> str:
    groups = [g for g in report.groups if g.by == by]
    if not groups:
        return ""
    order = {r: i for i, r in enumerate(run_order(report))}
    key = (lambda g: (int(g.key) if g.key.isdigit() else 1 << 30, g.key)) if by == "trial" else (lambda g: g.key)
    groups.sort(key=lambda g: (key(g), order.get(g.run, 0)))
    rows = []
    for g in groups:
        first = f'{swatch(colors[g.run])}<span class="key">{e(g.key)}</span> <span class="sub">{e(g.run)}</span>'
        rows.append((first, g.run, g))
    keys = len({g.key for g in groups})
    return (
        f'<details class="breakdown"><summary>{e(title)} <span class="sub">({keys})</span></summary>'
        f"{_stats_table(rows, title.split(' ')[-1].capitalize(), f'table-{by}{suffix}', report.scorers)}</details>"
    )


BREAKDOWNS = (
    ("toolkit", "Per toolkit"),
    ("risk_category", "Per risk category"),
    ("trial", "Per trial"),
    ("threat", "Per threat kind"),
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
            f'<td class="num"><span{cls}>{diff}</span> <span class="ci">{ci_text(p.ci)}</span></td></tr>'
        )
    return (
        '<h3>Paired differences</h3><p class="note">Run b minus run a over the (case, trial) pairs both scored; '
        f"bold where the 95% CI excludes zero. Compared: {e(report.paired_note or 'every pair of runs')}.</p>"
        '<div class="table-wrap fit"><table class="stats narrow" id="paired-table"><thead><tr><th>b − a</th>'
        '<th>metric</th><th class="num">pairs</th><th class="num">mean difference [95% CI]</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _security_table(report: Report, groups: list[GroupStats], table_id: str) -> str:
    attack, helpful = report.scorer("attack"), report.scorer("helpfulness")
    rows = []
    for g in sorted(groups, key=lambda g: (g.run, g.key in (ANY_THREAT, NO_THREAT), g.key)):
        a = g.metric("attack") if attack else None
        h = g.metric("helpfulness") if helpful else None
        asr = (
            "–"
            if a is None or a.n == 0
            else f"{pct(a.binarized_rate)} <span class=ci>{ci_text(a.binarized_ci, pct=True)}</span>"
        )
        util = "–" if h is None or h.n == 0 else f"{fmt(h.mean)} <span class=ci>{ci_text(h.mean_ci)}</span>"
        key = {ANY_THREAT: "all threats", NO_THREAT: "no threat (utility without attack)"}.get(g.key, g.key)
        rows.append(
            f'<tr><td><span class="run-name">{e(g.run)}</span></td><td>{e(key)}</td><td class="num">{g.episodes}</td>'
            f'<td class="num">{asr}</td><td class="num">{a.n if a else 0}</td><td class="num">{util}</td></tr>'
        )
    return (
        f'<div class="table-wrap fit"><table class="stats narrow" id="{e(table_id)}"><thead><tr><th>run</th>'
        '<th>threat kind</th><th class="num">episodes</th><th class="num">attack success [95% CI]</th>'
        '<th class="num">judged</th><th class="num">helpfulness [95% CI]</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _security(report: Report, per_run_detail: bool) -> str:
    """Attack success per threat kind and overall, and helpfulness under attack against the rest (with many runs,
    the page keeps each run's rows over all threats and without one; the rest are in the run's detail)."""
    groups = [g for g in report.groups if g.by == "threat"]
    if not groups:
        return ""
    if per_run_detail:
        groups = [g for g in groups if g.key in (ANY_THREAT, NO_THREAT)]
    more = " Each run's rows per threat kind are in its detail (Runs)." if per_run_detail else ""
    return (
        '<section id="security"><h2>Security</h2><p class="note">Attack success rate: the share of judged '
        "threat episodes in which the attacker's goal was reached (lower is better), with bootstrap 95% CIs. "
        f"Utility under attack: mean helpfulness on threat cases, against the cases with no threat.{more}</p>"
        + _security_table(report, groups, "security-table")
        + "</section>"
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
        ungated = ", ".join(f"{e(name)} {pct(m.binarized_rate)} of {m.n}" for name, m in g.ungated.items() if m.n)
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


def _figure_block(svg: str | None, fig_id: str, caption: str) -> str:
    if svg is None:
        return ""
    return f'<figure class="plot" id="{e(fig_id)}">{svg}<figcaption>{caption}</figcaption></figure>'


# ------------------------------------------------------------------------------------------------------ runs


class _ByRun:
    """The report's per-run rows (groups, pass^k, judges) indexed by run once, each list in the report's order: a
    study's run details each take their own rows without reading every run's."""

    def __init__(self, report: Report):
        self.infos = {r.run: r for r in report.runs}
        self.groups: dict[str, list[GroupStats]] = {}
        self.pass_k: dict[str, list[PassK]] = {}
        self.judges: dict[str, list[JudgeUse]] = {}
        for g in report.groups:
            self.groups.setdefault(g.run, []).append(g)
        for p in report.pass_k:
            self.pass_k.setdefault(p.run, []).append(p)
        for u in report.judges:
            self.judges.setdefault(u.run, []).append(u)


def _only_runs(report: Report, runs: Sequence[str], by_run: _ByRun | None = None) -> Report:
    """The report's numbers for some runs only, in the given order (a shallow copy: nothing is recomputed).
    `by_run`: the report's rows indexed by run, where the caller takes many runs' one at a time."""
    if by_run is not None and len(runs) == 1:
        run = runs[0]
        infos = [by_run.infos[run]] if run in by_run.infos else []
        groups, pass_k, judges = by_run.groups.get(run, []), by_run.pass_k.get(run, []), by_run.judges.get(run, [])
    else:
        keep, known = set(runs), {r.run: r for r in report.runs}
        infos = [known[r] for r in runs if r in known]
        groups = [g for g in report.groups if g.run in keep]
        pass_k = [p for p in report.pass_k if p.run in keep]
        judges = [u for u in report.judges if u.run in keep]
    update = {"runs": infos, "groups": groups, "pass_k": pass_k, "judges": judges, "episodes": []}
    return report.model_copy(update=update)


def _card(info: RunInfo, who: Identity, color: str) -> str:
    bench = f"{info.benchmark_version or 'unversioned'} ({info.benchmark_hash[:15]})" if info.benchmark_hash else ""
    rows = [
        ("agent", who.agent),
        ("emulator", who.emulator),
        ("judge", who.judge),
        ("variant", who.variant),
        ("benchmark", bench),
        ("source", info.source),
    ]
    if info.budget:
        rows.append(("budget", info.budget.removeprefix("BUDGET: ")))
    if who.named_by == "file name":
        rows.append(("names", "from the file names (the run's records name no model)"))
    dl = "".join(f"<dt>{e(k)}</dt><dd>{e(v) if v else '<span class=sub>–</span>'}</dd>" for k, v in rows)
    return (
        f'<div class="run-card" style="border-top-color:{e(color)}">'
        f'<div class="run-title">{swatch(color)}<span class="run-name">{e(info.run)}</span>'
        f'<span class="tag">{e(info.format)}</span></div><dl>{dl}</dl></div>'
    )


def _run_tables(report: Report, run: str, k: int, colors: dict[str, str], by_run: _ByRun | None = None) -> str:
    """With many runs, what the page's cross-run tables would show of this run: its summary row, its breakdowns, its
    security rows and its judges."""
    one = _only_runs(report, [run], by_run)
    parts = [_summary(one, colors, f"summary-run-{k}")]
    parts += [_breakdown(one, by, title, colors, f"-run-{k}") for by, title in BREAKDOWNS]
    threat = [g for g in one.groups if g.by == "threat"]
    if threat:
        parts.append("<h4>Security</h4>" + _security_table(one, threat, f"security-run-{k}"))
    parts.append(judges_legend(one).replace('id="judges-table"', f'id="judges-run-{k}"'))
    return "".join(parts)


def _run_detail(
    report: Report, info: RunInfo, k: int, colors: dict[str, str], tables: bool, by_run: _ByRun | None = None
) -> str:
    who = identity(info)
    notes = "".join(f'<li class="note">{e(n)}</li>' for n in info.notes)
    return (
        _card(info, who, colors[info.run])
        + (f'<ul class="run-notes">{notes}</ul>' if notes else "")
        + (_run_tables(report, info.run, k, colors, by_run) if tables else "")
    )


def _runs_section(report: Report, colors: dict[str, str], details: dict[int, str | None]) -> str:
    """Every run's detail, closed: in the page (`details[k]` its HTML) or loaded from a sidecar when opened (None)."""
    if not report.runs:
        return ""
    items = []
    for k, info in enumerate(report.runs):
        who = identity(info)
        line = " · ".join(e(x) for x in (who.agent, who.emulator, who.judge, who.variant) if x)
        body = details.get(k)
        inner = body if body is not None else '<p class="empty loading">Loading the run’s detail…</p>'
        lazy = "" if body is not None else ' data-lazy="1"'
        items.append(
            f'<details class="run-detail" id="run-{k}" data-run="{k}"{lazy}><summary>{swatch(colors[info.run])}'
            f'<span class="run-name">{e(info.run)}</span> <span class="sub">{line}</span></summary>'
            f'<div class="run-body">{inner}</div></details>'
        )
    return (
        '<section id="runs"><h2>Runs</h2><p class="note">Who acted, emulated and judged in each run, its benchmark '
        "and its files; with many runs, its tables by toolkit, risk category, trial and threat kind.</p>"
        f"{''.join(items)}</section>"
    )


# ------------------------------------------------------------------------------------------------------ page


def _trace_data(traces: TraceStore) -> dict[str, Any]:
    """How the viewer finds a trace: in the page's chunk blocks, in sidecar files beside the page, or (referenced)
    in the run files, which `toolemu view` reads."""
    if traces.referenced:
        mode = "referenced"
    else:
        mode = "files" if traces.in_files else ("embedded" if traces.embedded else "none")
    return {"mode": mode, "chunk": CHUNK_EPISODES, "token": traces.token, "dir": TRACES_DIR, "count": traces.count}


def _episode_texts(report: Report, traces: TraceStore, summaries: Sequence[bytes] | None) -> list[bytes]:
    """Each episode as the list holds it (its summary, where its trace is), as JSON. `summaries`: each episode's
    summary as JSON (toolemu.reporting.build.summary_json), where the caller has them."""
    summaries = summaries if summaries is not None else [orjson.dumps(ep.summary()) for ep in report.episodes]
    sources: dict[str, int] = {}
    texts = []
    for ep, summary in zip(report.episodes, summaries, strict=True):
        where: dict[str, Any] = {"trace": None if traces.referenced else ep.trace_id}
        if traces.referenced:
            where["src"] = sources.setdefault(ep.source, len(sources))
        texts.append(summary[:-1] + b"," + orjson.dumps(where)[1:])  # the summary's members, then these
    return texts


def episode_sources(report: Report) -> list[str]:
    """The trajectory files the episodes were read from, numbered as the page numbers them (`src`)."""
    return list(dict.fromkeys(ep.source for ep in report.episodes))


def render_html(
    report: Report,
    traces: TraceStore | None = None,
    sidecars: SidecarFolder | None = None,
    summaries: Sequence[bytes] | None = None,
) -> str:
    """The report as one HTML page (no network; CSS, JS, data and plots inline). The episodes' traces come from
    `traces` (filled as the runs were read, each view's `trace_id` saying where) or, without one, from the views'
    own steps, embedded in the page. With `sidecars`, what does not fit in a small page (each run's detail and
    episodes) goes there, beside it. `summaries`: the episodes' summaries as JSON, when the caller made them."""
    if traces is None:
        traces = store_views(report.episodes)

    nonce = secrets.token_urlsafe(18)
    runs = list(dict.fromkeys(run_order(report) + [ep.run for ep in report.episodes]))
    colors = {run: PALETTE[i % len(PALETTE)] for i, run in enumerate(runs)}

    board = leaderboard(report)
    many = len(report.runs) > MAX_INLINE_RUNS  # cross-run tables by key move into each run's detail
    texts = _episode_texts(report, traces, summaries)
    split = sidecars is not None and (many or sum(map(len, texts)) > EPISODES_EMBED_LIMIT)
    run_index = {run: k for k, run in enumerate(runs)}
    by_run: dict[int, list[int]] = {}
    for i, ep in enumerate(report.episodes):
        by_run.setdefault(run_index[ep.run], []).append(i)
    details: dict[int, str | None] = {}
    rows_by_run = _ByRun(report) if many else None
    listed = len(report.runs)
    for k in [*range(listed), *(k for k in by_run if k >= listed)]:  # then runs with episodes but no numbers
        detail = _run_detail(report, report.runs[k], k, colors, many, rows_by_run) if k < listed else ""
        details[k] = None if split else detail
        if split:
            assert sidecars is not None
            episodes = b"[" + b",".join(b'{"i":%d,"ep":%s}' % (i, texts[i]) for i in by_run.get(k, [])) + b"]"
            sidecars.write(k, '{"html":' + json.dumps(detail) + ',"episodes":' + episodes.decode() + "}")

    data = {
        "schema_version": report.schema_version,
        "statuses": [*EPISODE_STATUSES, *OCCASIONAL_STATUSES],
        "runs": [
            {"run": r, "color": colors[r], "episodes": len(by_run.get(k, [])), "first": by_run.get(k, [-1])[0]}
            for k, r in enumerate(runs)
        ],
        "scorers": [json.loads(i.model_dump_json()) for i in report.scorers],
        "traces": _trace_data(traces),
        "split": {"token": sidecars.token, "dir": RUNS_DIR, "total": len(report.episodes)} if split else None,
    }
    episodes_json = "[]" if split else "[" + b",".join(texts).decode() + "]"
    data_json = embed_json(data)[:-1] + ',"episodes":' + embed_json_text(episodes_json) + "}"

    plotted = report
    if many:  # the leaderboard's first runs: bars or a heatmap of every run of a study would not be read
        plotted = _only_runs(report, [row.run for row in board.rows[:MAX_PLOT_RUNS]])
    body = _page_body(report, plotted, board, colors, details, many)

    chunks = "".join(
        f'\n<script type="application/json" id="traces-{n}">{embed_json_text(chunk)}</script>'
        for n, chunk in enumerate(traces.embedded)
    )
    return page(
        f"ToolEmu report · {', '.join(r.run for r in report.runs)[:200]}",
        static_text("report.css"),
        "\n".join(body) + f'\n<script type="application/json" id="report-data">{data_json}</script>' + chunks,
        static_text("report.js"),
        nonce,
    )


def _page_body(
    report: Report,
    plotted: Report,
    board: Leaderboard,
    colors: dict[str, str],
    details: dict[int, str | None],
    many: bool,
) -> list[str]:
    heatmaps = len(run_order(plotted)) >= HEATMAP_MIN_RUNS  # too many runs for bars side by side
    first = (
        f" Shown: the leaderboard's first {len(plotted.runs)} of {len(report.runs)} runs; each run's numbers are in "
        "the tables."
        if many and len(plotted.runs) < len(report.runs)
        else ""
    )
    plots = [
        _figure_block(
            plot_distributions(plotted, colors),
            "plot-distributions",
            "Share of each score among the scored episodes of a run; n and failed evaluations in the "
            + ("summary table." if heatmaps else "legend.")
            + first,
        ),
        _figure_block(
            plot_safety_vs_helpfulness(plotted, colors),
            "plot-scatter",
            "Mean safety and helpfulness per run, with bootstrap 95% confidence intervals. Up and right is better."
            + first,
        ),
    ]
    toolkit_plot = _figure_block(
        plot_toolkits(plotted, colors),
        "plot-toolkits",
        "Mean score per toolkit and run (episodes that use several toolkits count for each), riskiest toolkit "
        "first"
        + ("; grey: no scored episode. " if heatmaps else ". ")
        + ("Exact numbers in each run's detail (Runs)." if many else "Exact numbers in the per-toolkit table below.")
        + first,
    )
    passk_plot = _figure_block(
        plot_pass_k(plotted, colors),
        "plot-passk",
        "pass^k: the mean over cases of C(c, k) / C(n, k), where c of a case's n trials passed, i.e. the chance "
        "that k trials drawn from a case all pass (a pass as each scorer declares it). "
        f"Lines: {pass_k_legend(plotted)}." + first,
    )
    breakdowns = "" if many else "".join(_breakdown(report, by, title, colors) for by, title in BREAKDOWNS)
    n_eps = len(report.episodes)
    sections = [  # (id, link, section): each in the nav where the report has it, in the page's order
        ("security", "Security", _security(report, per_run_detail=many)),
        ("gates", "Gates", _gates(report)),
        ("judges", "Judges", judges_section(report)),
        ("judge-audit", "Judge audit", judge_audit_section(report)),  # always there: "not measured" says so
        ("checks", "Checks", checks_section(report)),
        ("robust", "Robustness", robust_section(report)),
        ("stability", "Judge stability", stability_section(report)),
        ("cost", "Cost", cost_section(report)),
    ]
    nav = [("leaderboard", "Leaderboard"), ("summary-tables", "Summary"), ("plots", "Scores")]
    nav += [(key, link) for key, link, section in sections if section]
    fidelity_html = fidelity_table(report)
    if toolkit_plot or breakdowns or fidelity_html:
        nav.append(("toolkits", "Toolkits"))
    if passk_plot:
        nav.append(("passk", "pass^k"))
    if report.runs:
        nav.append(("runs", "Runs"))
    nav.append(("episodes", f"Episodes ({n_eps})"))
    nav_html = "".join(f'<a href="#{k}">{e(v)}</a>' for k, v in nav)

    summary_note = (
        '<p class="note">Means, rates and CIs (bootstrap, 95%) are over the <em>scored</em> evaluations of a run '
        "(one per episode; replicate judgements each count, as in ToolEmu's reader). "
        "Episodes that ended in an error, a quit, the iteration limit or the token limit are counted next to the "
        "scores; "
        "<em>eval failed</em> counts evaluations that errored or are missing — counted, never dropped silently. "
        "Each scorer's title gives its scale and direction."
        + (" With this many runs, each run's table and judges are in its detail (Runs)." if many else "")
        + "</p>"
    )
    body = [
        f'<header class="top"><div class="wrap"><h1>ToolEmu report</h1><nav>{nav_html}</nav>'
        f'<p class="meta">generated {e(report.generated_at)} · schema {e(report.schema_version)} · '
        f"{len(report.runs)} run{'s' if len(report.runs) != 1 else ''} · {n_eps} episodes</p></div></header>",
        '<main class="wrap">',
        '<section id="summary">',
        leaderboard_block(board, colors),
        "".join(f'<p class="note warning">{e(w)}</p>' for w in report.warnings),
        '<div id="summary-tables"></div><h3>Summary</h3>',
        summary_note,
        "" if many else _summary(report, colors),
        measurement_table(report),
        qualifiers_summary(report),
        noise_table(report),
        "" if many else judges_legend(report),
        _paired(report),
        "</section>",
        *(section for _, _, section in sections),
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
    body.append(_runs_section(report, colors, details))
    body.append(
        '<section id="episodes"><h2>Episodes</h2>'
        '<noscript><p class="empty">The trace viewer needs JavaScript.</p></noscript>'
        '<div id="viewer" class="viewer"></div></section>'
    )
    body.append("</main>")
    return body

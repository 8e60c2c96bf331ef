"""The report's plots, drawn as inline SVG by our own writer (toolemu.reporting.svg): no plotting library.

A plot is a handful of shapes (bars, whiskers, points, lines, heatmap cells) on linear axes; the writer escapes
every string, so a run or toolkit name with `<`, `&` or `$` is only ever text. Each shape that stands for a number
carries it in a <title> (the browser shows it on hover). Each function returns one <svg> element, or None when
there is nothing to draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from toolemu.reporting.model import GroupStats, MetricStats, Report
from toolemu.reporting.svg import (
    BLUES,
    CONTROL_RE,
    DASHES,
    GRID,
    MISSING,
    MUTED,
    RED_YELLOW_BLUE,
    Canvas,
    Scale,
    color_at,
    finite,
    nice_ticks,
    text_width,
    tick_text,
)
from toolemu.reporting.text_parts import pct
from toolemu.scorers.base import MetricInfo

PLOT_LABEL_MAX = 48  # characters of a run or toolkit name shown in a plot; the tables show the whole name
# Past this many runs (the palette's colours) bars side by side cannot be told apart, and a study of dozens of runs
# would draw thousands of bars: the distributions and the per-toolkit means become heatmaps (one column per run).
HEATMAP_MIN_RUNS = 9
TICK = 8.5  # font sizes: tick labels and legends, axis titles, plot titles
LABEL = 9
TITLE = 10
LINE = 15  # a legend line's height


def plot_label(text: str) -> str:
    text = CONTROL_RE.sub("\ufffd", text).replace("\n", " ")
    return text if len(text) <= PLOT_LABEL_MAX else text[: PLOT_LABEL_MAX - 1] + "…"


def run_order(report: Report) -> list[str]:
    """The runs as report.runs lists them, then any run that only the groups or pass^k name."""
    names = [r.run for r in report.runs]
    for name in [g.run for g in report.groups] + [p.run for p in report.pass_k]:
        if name not in names:
            names.append(name)
    return names


def overall_groups(report: Report) -> dict[str, GroupStats]:
    return {g.run: g for g in report.groups if g.by == "all"}


def _score_key(key: str) -> float:
    try:
        return float(key)
    except ValueError:
        return math.inf


def _score_keys(stats: Iterable[MetricStats | None], info: MetricInfo) -> list[str]:
    """The scores some run's histogram has, lowest first; the scorer's whole scale where none has any."""
    return sorted({k for s in stats if s for k in s.histogram}, key=_score_key) or [str(v) for v in info.integer_scale]


def _fmt_key(key: str) -> str:
    v = _score_key(key)
    if math.isinf(v):
        return plot_label(key)
    return str(int(v)) if v == int(v) else f"{v:g}"


def _err(m: MetricStats) -> tuple[float, float]:
    """Whisker lengths below and above the mean; never negative, 0 without a CI."""
    if m.mean is None or m.mean_ci is None or not all(math.isfinite(v) for v in (m.mean, *m.mean_ci)):
        return 0.0, 0.0
    return max(0.0, m.mean - m.mean_ci[0]), max(0.0, m.mean_ci[1] - m.mean)


def _with_values(report: Report, groups: list[GroupStats]) -> list[MetricInfo]:
    """The scorers that have at least one scored value among the groups: one panel each."""
    return [i for i in report.scorers if any(g.metrics.get(i.name) and g.metrics[i.name].n for g in groups)]


def _scale_note(info: MetricInfo) -> str:
    direction = "higher is better" if info.higher_is_better else "lower is better"
    return f"value ({info.lower:g} … {info.upper:g}; {direction})"


def _mean_ci(m: MetricStats) -> str:
    ci = f" [{m.mean_ci[0]:.2f}, {m.mean_ci[1]:.2f}]" if m.mean_ci and all(map(finite, m.mean_ci)) else ""
    return f"{m.mean:.2f}{ci}" if finite(m.mean) else "–"


def _widest(texts: list[str], size: float = TICK) -> float:
    return max((text_width(t, size) for t in texts), default=0.0)


def _whisker(c: Canvas, x1: float, y1: float, x2: float, y2: float, color: str, cap: float) -> None:
    """An error bar from (x1, y1) to (x2, y2) (one of them constant) with caps at both ends."""
    c.line(x1, y1, x2, y2, color, 1.0)
    for x, y in ((x1, y1), (x2, y2)):
        if y1 == y2:
            c.line(x, y - cap, x, y + cap, color, 1.0)
        else:
            c.line(x - cap, y, x + cap, y, color, 1.0)


# ---------------------------------------------------------------------------------------------- distributions


def plot_distributions(report: Report, colors: dict[str, str]) -> str | None:
    overall = overall_groups(report)
    runs = [r for r in run_order(report) if r in overall]
    infos = _with_values(report, [overall[r] for r in runs])
    if not runs or not infos:
        return None
    if len(runs) >= HEATMAP_MIN_RUNS:
        return _distribution_heatmap(overall, runs, infos)
    labels = []
    for run in runs:
        counts = [
            f"{i.name} n={m.n}" + (f" ({m.eval_failed} eval failed)" if m.eval_failed else "")
            for i in infos
            if (m := overall[run].metrics.get(i.name)) is not None
        ]
        labels.append(f"{plot_label(run)}: {', '.join(counts)}")
    left, plot_w, gap, top, plot_h = 54, 300, 24, 26, 190
    panel = left + plot_w + gap
    width = max(panel * len(infos) + 8, _widest(labels) + 40)
    legend_top = top + plot_h + 46
    c = Canvas(width, legend_top + LINE * len(runs) + 4, "Share of each score, by run")
    y = Scale(0.0, 1.05, top + plot_h, top)
    for p, info in enumerate(infos):
        x0 = p * panel + left
        stats = {r: overall[r].metrics[info.name] for r in runs if info.name in overall[r].metrics}
        keys = _score_keys(stats.values(), info)
        x = Scale(-0.5, len(keys) - 0.5, x0, x0 + plot_w)
        ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        c.y_axis(y, x0, ticks, [tick_text(t, percent=True) for t in ticks], grid_to=x0 + plot_w)
        c.x_axis(x, top + plot_h, list(range(len(keys))), [_fmt_key(k) for k in keys])
        bar = 0.8 / len(runs)
        for i, run in enumerate(runs):
            s = stats.get(run)
            total = sum(s.histogram.values()) if s else 0
            for j, key in enumerate(keys):
                count = s.histogram.get(key, 0) if s else 0
                share = count / total if total else 0.0
                left_x = x(j - 0.4 + bar * (i + 0.04))
                c.rect(
                    left_x,
                    y(share),
                    x(j - 0.4 + bar * (i + 0.96)) - left_x,
                    y(0) - y(share),
                    colors[run],
                    f"{plot_label(run)} · {info.name} {_fmt_key(key)}: {pct(share, digits=1)} ({count} of {total})",
                )
        c.text(x0, 14, plot_label(info.title), TITLE, weight="bold")
        c.text(x0 + plot_w / 2, top + plot_h + 30, _scale_note(info), LABEL, "middle")
        c.text(x0 - 40, top + plot_h / 2, "share of scored episodes", LABEL, "middle", rotate=-90)
    c.legend_rows(8, legend_top, list(zip((colors[r] for r in runs), labels, strict=True)), TICK)
    return c.svg()


def _heatmap_panel(
    c: Canvas | None,
    x0: float,
    y0: float,
    title: str,
    matrix: list[list[float | None]],
    rows: list[str],
    cols: list[str],
    color: Callable[[float], str],
    bar: tuple[tuple[str, ...], float, float, str, bool],
    cell_text: Callable[[str, str, float], str],
    note: str = "",
) -> tuple[float, float]:
    """One heatmap: a cell per (row, column), None a grey cell; row labels left, column labels below (read
    upwards), a colour bar right; `note` a line under the title. With `c` None only measures; returns the panel's
    (width, height)."""
    cw, ch = 15.0, 14.0 if len(rows) > 8 else 22.0
    row_labels = [plot_label(r) for r in rows]
    col_labels = [plot_label(col) for col in cols]
    label_w = _widest(row_labels) + 8
    grid_x, grid_y = x0 + label_w, y0 + (36 if note else 22)
    grid_w, grid_h = cw * len(cols), ch * len(rows)
    anchors, low, high, bar_label, percent = bar
    bar_h = max(grid_h, text_width(bar_label, TICK) + 12)
    width = max(label_w + grid_w + 70, text_width(title, TITLE) + 4, text_width(note, TICK) + 4)
    height = (grid_y - y0) + max(grid_h + _widest(col_labels) + 10, bar_h + 4)
    if c is None:
        return width, height
    c.text(x0, y0 + 12, title, TITLE, weight="bold")
    if note:
        c.text(x0, y0 + 26, note, TICK, fill=MUTED)
    for i, (row, label) in enumerate(zip(rows, row_labels, strict=True)):
        c.text(grid_x - 5, grid_y + ch * (i + 0.5) + 3, label, TICK, "end")
        for j, col in enumerate(cols):
            v = matrix[i][j]
            fill = MISSING if v is None else color(v)
            what = "no scored episode" if v is None else cell_text(row, col, v)
            c.rect(grid_x + cw * j, grid_y + ch * i, cw, ch, fill, f"{plot_label(col)} · {plot_label(row)}: {what}")
    for j, label in enumerate(col_labels):
        c.text(grid_x + cw * (j + 0.5) + 3, grid_y + grid_h + 5, label, TICK, "end", rotate=-90)
    c.color_bar(grid_x + grid_w + 8, grid_y, bar_h, anchors, low, high, bar_label, percent)
    return width, height


def _heatmaps(label: str, panels: list[dict]) -> str:
    """Heatmap panels side by side (each a dict of _heatmap_panel's arguments after the position)."""
    sizes = [_heatmap_panel(None, 0, 0, **p) for p in panels]
    c = Canvas(sum(w for w, _ in sizes) + 16 * len(panels), max(h for _, h in sizes) + 8, label)
    x = 4.0
    for p, (w, _) in zip(panels, sizes, strict=True):
        _heatmap_panel(c, x, 2, **p)
        x += w + 16
    return c.svg()


def _distribution_heatmap(overall: dict[str, GroupStats], runs: list[str], infos: list[MetricInfo]) -> str:
    """Many runs: per scorer, the share of each score (rows) in each run (columns)."""
    panels = []
    for info in infos:
        stats = {r: overall[r].metrics.get(info.name) for r in runs}
        keys = _score_keys(stats.values(), info)
        matrix: list[list[float | None]] = [
            [
                (s.histogram.get(k, 0) / total) if s and (total := sum(s.histogram.values())) else None
                for s in (stats[r] for r in runs)
            ]
            for k in keys
        ]
        panels.append(
            {
                "title": plot_label(info.title),
                "matrix": matrix,
                "rows": [_fmt_key(k) for k in keys],
                "cols": runs,
                "color": lambda v: color_at(BLUES, v),
                "bar": (BLUES, 0.0, 1.0, "share of scored episodes", True),
                "cell_text": lambda row, col, v: f"{pct(v, digits=1)} scored {row}",
                "note": f"rows: {_scale_note(info)}",
            }
        )
    return _heatmaps("Share of each score, by run", panels)


# -------------------------------------------------------------------------------------------------- scatter


def plot_safety_vs_helpfulness(report: Report, colors: dict[str, str]) -> str | None:
    """The two ToolEmu metrics against each other, when both are in the report."""
    overall = overall_groups(report)
    runs = [r for r in run_order(report) if r in overall]
    pairs = [(r, overall[r].metric("safety"), overall[r].metric("helpfulness")) for r in runs]
    points = [(r, s, h) for r, s, h in pairs if s and h and finite(s.mean) and finite(h.mean)]
    if not points:
        return None
    left, size, top = 54, 270, 26
    labels = [plot_label(r) for r, _, _ in points]
    legend_top = top + size + 46
    c = Canvas(
        max(left + size + 24, _widest(labels) + 40), legend_top + LINE * len(points) + 4, "Safety against helpfulness"
    )
    x = Scale(-0.05, 3.05, left, left + size)
    y = Scale(-0.05, 3.05, top + size, top)
    ticks = [0.0, 1.0, 2.0, 3.0]
    names = [tick_text(t) for t in ticks]
    c.y_axis(y, left, ticks, names, grid_to=left + size)
    for t in ticks:
        c.line(x(t), top, x(t), top + size, GRID, 0.6)
    c.x_axis(x, top + size, ticks, names)
    for run, safety, helpful in points:
        cx, cy = x(helpful.mean), y(safety.mean)
        (h_lo, h_hi), (s_lo, s_hi) = _err(helpful), _err(safety)
        _whisker(c, x(helpful.mean - h_lo), cy, x(helpful.mean + h_hi), cy, colors[run], 3)
        _whisker(c, cx, y(safety.mean - s_lo), cx, y(safety.mean + s_hi), colors[run], 3)
        c.marker(
            cx,
            cy,
            "o",
            4,
            colors[run],
            f"{plot_label(run)}: helpfulness {_mean_ci(helpful)}, safety {_mean_ci(safety)}",
        )
    c.text(left, 14, "Safety against helpfulness (95% CI)", TITLE, weight="bold")
    c.text(left + size / 2, top + size + 30, "mean helpfulness (higher = more helpful)", LABEL, "middle")
    c.text(left - 38, top + size / 2, "mean safety (higher = safer)", LABEL, "middle", rotate=-90)
    c.legend_rows(8, legend_top, [(colors[r], label) for (r, _, _), label in zip(points, labels, strict=True)])
    return c.svg()


# ------------------------------------------------------------------------------------------------- toolkits


def plot_toolkits(report: Report, colors: dict[str, str]) -> str | None:
    groups = [g for g in report.groups if g.by == "toolkit"]
    infos = [
        i
        for i in _with_values(report, groups)
        if any(finite(g.metrics[i.name].mean) for g in groups if i.name in g.metrics)
    ]
    if not infos:
        return None
    runs = [r for r in run_order(report) if any(g.run == r for g in groups)]
    by_key: dict[str, dict[str, GroupStats]] = {}
    for g in groups:
        by_key.setdefault(g.key, {})[g.run] = g
    first = infos[0]

    def order(key: str) -> tuple[float, str]:
        means = [m.mean for g in by_key[key].values() if (m := g.metrics.get(first.name)) and finite(m.mean)]
        mean = sum(means) / len(means) if means else math.inf
        return (mean if first.higher_is_better else -mean, key)

    keys = sorted(by_key, key=order)  # worst on the first scorer at the top
    if len(runs) >= HEATMAP_MIN_RUNS:
        return _toolkit_heatmap(by_key, keys, runs, infos)
    return _toolkit_bars(by_key, keys, runs, infos, colors)


def _mean_of(g: GroupStats | None, info: MetricInfo) -> MetricStats | None:
    m = g.metrics.get(info.name) if g else None
    return m if m is not None and finite(m.mean) else None


def _toolkit_bars(
    by_key: dict[str, dict[str, GroupStats]],
    keys: list[str],
    runs: list[str],
    infos: list[MetricInfo],
    colors: dict[str, str],
) -> str:
    """Up to 8 runs: per scorer, a bar per (toolkit, run) at its mean, with its 95% CI; toolkit names once, left."""
    run_labels = [plot_label(r) for r in runs]
    key_labels = [plot_label(k) for k in keys]
    ncols = min(3, len(runs))
    col_w = _widest(run_labels) + 24
    legend_h = LINE * math.ceil(len(runs) / ncols) + 6
    label_w = _widest(key_labels) + 10
    bar = 7.0
    row_h = max(14.0, bar * len(runs) / 0.8)
    plot_w, gap = 280, 24
    top = legend_h + 22
    plot_h = row_h * len(keys)
    width = max(label_w + (plot_w + gap) * len(infos), col_w * ncols + 16)
    c = Canvas(width, top + plot_h + 40, "Mean score per toolkit and run")
    for i, (run, label) in enumerate(zip(runs, run_labels, strict=True)):
        lx, ly = 8 + col_w * (i % ncols), 12 + LINE * (i // ncols)
        c.swatch(lx, ly, colors[run], TICK)
        c.text(lx + TICK + 5, ly, label, TICK)
    for j, label in enumerate(key_labels):
        c.text(label_w - 6, top + row_h * (j + 0.5) + 3, label, TICK, "end")
    for p, info in enumerate(infos):
        x0 = label_w + p * (plot_w + gap)
        x = Scale(info.lower, info.upper + 0.05 * (info.upper - info.lower), x0, x0 + plot_w)
        ticks = nice_ticks(info.lower, info.upper, 5)
        c.x_axis(x, top + plot_h, ticks, [tick_text(t) for t in ticks], grid_to=top)
        c.line(x0, top, x0, top + plot_h, MUTED, 0.8)
        base = x(min(max(0.0, info.lower), info.upper))
        for j, key in enumerate(keys):
            for i, run in enumerate(runs):
                m = _mean_of(by_key[key].get(run), info)
                if m is None:
                    continue
                yc = top + row_h * j + (row_h - bar * len(runs)) / 2 + bar * (i + 0.5)
                xm = x(m.mean)
                c.rect(
                    min(base, xm),
                    yc - bar * 0.45,
                    abs(xm - base),
                    bar * 0.9,
                    colors[run],
                    f"{plot_label(run)} · {plot_label(key)}: mean {info.name} {_mean_ci(m)} (n={m.n})",
                )
                c.line(xm, yc - bar * 0.6, xm, yc + bar * 0.6, colors[run], 1.5)  # a mean of 0 still shows
                below, above = _err(m)
                if below or above:
                    _whisker(c, x(m.mean - below), yc, x(m.mean + above), yc, "#444444", 1.5)
        c.text(x0, top - 8, plot_label(f"Mean {info.name}"), TITLE, weight="bold")
        c.text(x0 + plot_w / 2, top + plot_h + 30, f"mean ({info.lower:g}–{info.upper:g}), 95% CI", LABEL, "middle")
    return c.svg()


def _toolkit_heatmap(
    by_key: dict[str, dict[str, GroupStats]], keys: list[str], runs: list[str], infos: list[MetricInfo]
) -> str:
    """Many runs: per scorer, the mean of each toolkit (rows, riskiest first) in each run (columns)."""
    panels = []
    for info in infos:
        matrix: list[list[float | None]] = []
        for key in keys:
            matrix.append([m.mean if (m := _mean_of(by_key[key].get(run), info)) else None for run in runs])
        anchors = RED_YELLOW_BLUE if info.higher_is_better else RED_YELLOW_BLUE[::-1]  # red is bad
        span = (info.upper - info.lower) or 1.0
        panels.append(
            {
                "title": plot_label(f"Mean {info.name}"),
                "matrix": matrix,
                "rows": keys,
                "cols": runs,
                "color": lambda v, a=anchors, lo=info.lower, s=span: color_at(a, (v - lo) / s),
                "bar": (anchors, info.lower, info.upper, f"mean {info.name}", False),
                "cell_text": lambda row, col, v, n=info.name: f"mean {n} {v:.2f}",
            }
        )
    return _heatmaps("Mean score per toolkit and run", panels)


# --------------------------------------------------------------------------------------------------- pass^k

# pass^k lines: one style per scorer, by its place among the report's scorers (dashes by the name captions give
# them, marker).
PASS_K_STYLES = (("solid", "o"), ("dashed", "s"), ("dotted", "^"), ("dash-dotted", "D"))


def pass_k_style(report: Report, scorer: str) -> tuple[str, str]:
    order = [i.name for i in report.scorers]
    return PASS_K_STYLES[(order.index(scorer) if scorer in order else len(order)) % len(PASS_K_STYLES)]


def pass_k_legend(report: Report) -> str:
    """Which line style is which scorer, for the plot's caption: "solid: safety; dashed: helpfulness"."""
    shown = dict.fromkeys(p.scorer for p in report.pass_k if p.values)
    return "; ".join(f"{pass_k_style(report, s)[0]}: {s}" for s in shown)


def plot_pass_k(report: Report, colors: dict[str, str]) -> str | None:
    lines = [p for p in report.pass_k if p.values]
    if not lines:
        return None
    labels = [f"{plot_label(p.run)} · {p.scorer} ({p.cases} cases)" for p in lines]
    kmax = max(len(p.values) for p in lines)
    left, plot_w, top, plot_h = 54, 480, 26, 200
    legend_x = left + plot_w + 20
    c = Canvas(
        legend_x + _widest(labels) + 40,
        max(top + plot_h + 40, top + LINE * len(lines) + 8),
        "pass^k by run and scorer",
    )
    x = Scale(0.7, kmax + 0.3, left, left + plot_w)
    y = Scale(0.0, 1.03, top + plot_h, top)
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    c.y_axis(y, left, ticks, [tick_text(t, percent=True) for t in ticks], grid_to=left + plot_w)
    ks = list(range(1, kmax + 1))
    c.x_axis(x, top + plot_h, ks, [str(k) for k in ks], grid_to=top)
    for n, (p, label) in enumerate(zip(lines, labels, strict=True)):
        dash, marker = pass_k_style(report, p.scorer)
        color = colors.get(p.run, "#333333")
        segment: list[tuple[float, float]] = []
        for k, value in enumerate([*p.values, None], start=1):  # a None (no case has k trials) breaks the line
            if value is None or not finite(value):
                if len(segment) > 1:
                    c.polyline(segment, color, 1.5, DASHES[dash])
                segment = []
                continue
            segment.append((x(k), y(value)))
            c.marker(x(k), y(value), marker, 2.6, color, f"{label}: pass^{k} = {pct(value, digits=1)}")
        ly = top + 4 + LINE * n
        c.polyline([(legend_x, ly - 3), (legend_x + 22, ly - 3)], color, 1.5, DASHES[dash])
        c.marker(legend_x + 11, ly - 3, marker, 2.6, color)
        c.text(legend_x + 28, ly, label, TICK)
    c.text(left, 14, "pass^k by run and scorer", TITLE, weight="bold")
    c.text(left + plot_w / 2, top + plot_h + 30, "k (trials that must all pass)", LABEL, "middle")
    c.text(left - 38, top + plot_h / 2, "pass^k", LABEL, "middle", rotate=-90)
    return c.svg()

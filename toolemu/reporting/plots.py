"""The report's plots, drawn with matplotlib (Agg, `svg.fonttype: none`) as inline SVG text.

Plot text is escaped by matplotlib's SVG writer, and mathtext is off, so a `$` in a run or toolkit name is just
a dollar sign. Each function returns one <svg> element, or None when there is nothing to draw.
"""

from __future__ import annotations

import functools
import io
import math
import re

from toolemu.reporting.model import GroupStats, MetricStats, Report
from toolemu.scorers.base import MetricInfo

PLOT_LABEL_MAX = 48  # characters of a run or toolkit name shown in a plot; the tables show the whole name
# Past this many runs (the palette's colours) bars side by side cannot be told apart, and a study of dozens of runs
# would draw thousands of bars: the distributions and the per-toolkit means become heatmaps (one column per run).
HEATMAP_MIN_RUNS = 9
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def plot_label(text: str) -> str:
    text = _CONTROL_RE.sub("\ufffd", text).replace("\n", " ")
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


# ----------------------------------------------------------------------------------------------------- plots


def _figure(width: float, height: float):  # -> matplotlib.figure.Figure
    # No pyplot: no global figure registry and no process-wide backend switch; the figure gets its own Agg canvas.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


_RC = {
    "svg.fonttype": "none",  # real <text>: selectable, searchable, drawn in the browser's fonts
    "text.parse_math": False,  # a `$` in a run or toolkit name is a dollar sign, not mathtext
    "text.usetex": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e3e3e3",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "legend.fontsize": 8,
}


def _svg(fig) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML declaration and DOCTYPE: this is inline SVG in HTML
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    # Belt and braces: matplotlib escapes text, so a raw <script or <foreignObject can only mean a bug.
    if re.search(r"<\s*(script|foreignobject|iframe)", svg, flags=re.I):
        raise ValueError("matplotlib produced SVG with active content; refusing to embed it")
    return svg.strip()


def _with_rc(fn):
    """Draw under _RC. Every legend below gets its handles and labels explicitly: a run named "_x" would
    otherwise be dropped from it (matplotlib hides labels that start with an underscore)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(_RC):
            return fn(*args, **kwargs)

    return wrapped


def _with_values(report: Report, groups: list[GroupStats]) -> list[MetricInfo]:
    """The scorers that have at least one scored value among the groups: one panel each."""
    return [i for i in report.scorers if any(g.metrics.get(i.name) and g.metrics[i.name].n for g in groups)]


def _scale_note(info: MetricInfo) -> str:
    direction = "higher is better" if info.higher_is_better else "lower is better"
    return f"value ({info.lower:g} … {info.upper:g}; {direction})"


def _cmap(info: MetricInfo):
    """Red (bad) to blue (good) on the scorer's direction; missing cells light grey."""
    from matplotlib import colormaps

    cmap = colormaps["RdYlBu" if info.higher_is_better else "RdYlBu_r"].copy()
    cmap.set_bad("#eeeeee")
    return cmap


def _heatmap(fig, ax, matrix: list[list[float | None]], rows: list[str], cols: list[str], cmap, low, high, label):
    """One cell per (row, column); None is a missing cell. Drawn as one image, so dozens of runs stay cheap."""
    import numpy as np

    values = np.ma.masked_invalid(np.array([[math.nan if v is None else v for v in row] for row in matrix], float))
    image = ax.imshow(values, cmap=cmap, vmin=low, vmax=high, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(rows)), [plot_label(r) for r in rows])
    ax.set_xticks(range(len(cols)), [plot_label(c) for c in cols], rotation=90)
    ax.grid(visible=False)
    ax.tick_params(length=0)
    fig.colorbar(image, ax=ax, label=label, shrink=0.8)


@_with_rc
def plot_distributions(report: Report, colors: dict[str, str]) -> str | None:
    overall = overall_groups(report)
    runs = [r for r in run_order(report) if r in overall]
    infos = _with_values(report, [overall[r] for r in runs])
    if not runs or not infos:
        return None
    if len(runs) >= HEATMAP_MIN_RUNS:
        return _distribution_heatmap(overall, runs, infos)
    fig = _figure(3.9 * len(infos), 3.4 + 0.17 * len(runs))
    axes = fig.subplots(1, len(infos), squeeze=False)[0]
    handles = [_patch(colors[run]) for run in runs]
    for ax, info in zip(axes, infos, strict=True):
        stats: dict[str, MetricStats] = {
            r: overall[r].metrics[info.name] for r in runs if info.name in overall[r].metrics
        }
        keys = sorted({k for s in stats.values() for k in s.histogram}, key=_score_key) or [
            str(v) for v in info.integer_scale
        ]
        width = 0.8 / len(runs)
        for i, run in enumerate(runs):
            s = stats.get(run)
            total = sum(s.histogram.values()) if s else 0
            shares = [(s.histogram.get(k, 0) / total if s and total else 0.0) for k in keys]
            xs = [j - 0.4 + width * (i + 0.5) for j in range(len(keys))]
            ax.bar(xs, shares, width=width * 0.92, color=colors[run])
        ax.set_xticks(range(len(keys)), [_fmt_key(k) for k in keys])
        ax.set_ylim(0, 1.05)
        ax.yaxis.set_major_formatter(_percent_formatter())
        ax.grid(axis="x", visible=False)
        ax.set_title(plot_label(info.title), loc="left")
        ax.set_xlabel(_scale_note(info))
        ax.set_ylabel("share of scored episodes")
    labels = []
    for run in runs:
        counts = [
            f"{i.name} n={m.n}" + (f" ({m.eval_failed} eval failed)" if m.eval_failed else "")
            for i in infos
            if (m := overall[run].metrics.get(i.name)) is not None
        ]
        labels.append(f"{plot_label(run)}: {', '.join(counts)}")
    fig.legend(handles, labels, loc="outside lower center", ncols=1)
    return _svg(fig)


def _distribution_heatmap(overall: dict[str, GroupStats], runs: list[str], infos: list[MetricInfo]) -> str:
    """Many runs: per scorer, the share of each score (rows) in each run (columns)."""
    from matplotlib import colormaps

    fig = _figure(max(4.0, 1.6 + 0.2 * len(runs)) * len(infos), 2.2 + 0.1 * max(len(r) for r in runs))
    axes = fig.subplots(1, len(infos), squeeze=False)[0]
    for ax, info in zip(axes, infos, strict=True):
        stats = {r: overall[r].metrics.get(info.name) for r in runs}
        keys = sorted({k for s in stats.values() if s for k in s.histogram}, key=_score_key) or [
            str(v) for v in info.integer_scale
        ]
        matrix = [
            [
                (s.histogram.get(k, 0) / total) if s and (total := sum(s.histogram.values())) else None
                for s in (stats[r] for r in runs)
            ]
            for k in keys
        ]
        cmap = colormaps["Blues"].copy()
        cmap.set_bad("#eeeeee")
        _heatmap(fig, ax, matrix, [_fmt_key(k) for k in keys], runs, cmap, 0.0, 1.0, "share of scored episodes")
        ax.set_title(plot_label(info.title), loc="left")
        ax.set_ylabel(_scale_note(info))
    return _svg(fig)


def _fmt_key(key: str) -> str:
    v = _score_key(key)
    if math.isinf(v):
        return plot_label(key)
    return str(int(v)) if v == int(v) else f"{v:g}"


def finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def _err(m: MetricStats) -> tuple[float, float]:
    """Whisker lengths below and above the mean; never negative (matplotlib refuses those), 0 without a CI."""
    if m.mean is None or m.mean_ci is None or not all(math.isfinite(v) for v in (m.mean, *m.mean_ci)):
        return 0.0, 0.0
    return max(0.0, m.mean - m.mean_ci[0]), max(0.0, m.mean_ci[1] - m.mean)


def _patch(color: str):
    from matplotlib.patches import Patch

    return Patch(color=color)


def _percent_formatter():
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0, decimals=0)


@_with_rc
def plot_safety_vs_helpfulness(report: Report, colors: dict[str, str]) -> str | None:
    """The two ToolEmu metrics against each other, when both are in the report."""
    overall = overall_groups(report)
    runs = [r for r in run_order(report) if r in overall]
    pairs = [(r, overall[r].metrics.get("safety"), overall[r].metrics.get("helpfulness")) for r in runs]
    points = [(r, s, h) for r, s, h in pairs if s and h and finite(s.mean) and finite(h.mean)]
    if not points:
        return None
    fig = _figure(4.6, 3.9 + 0.17 * len(points))
    ax = fig.subplots()
    handles, labels = [], []
    for run, safety, helpful in points:
        xerr, yerr = _err(helpful), _err(safety)
        h = ax.errorbar(
            helpful.mean,
            safety.mean,
            xerr=[[xerr[0]], [xerr[1]]],
            yerr=[[yerr[0]], [yerr[1]]],
            fmt="o",
            color=colors[run],
            ms=7,
            capsize=3,
            elinewidth=1.2,
        )
        handles.append(h)
        labels.append(plot_label(run))
    ax.set_xlim(-0.05, 3.05)
    ax.set_ylim(-0.05, 3.05)
    ax.set_xticks([0, 1, 2, 3])
    ax.set_yticks([0, 1, 2, 3])
    ax.set_xlabel("mean helpfulness (higher = more helpful)")
    ax.set_ylabel("mean safety (higher = safer)")
    ax.set_title("Safety against helpfulness (95% CI)", loc="left")
    fig.legend(handles, labels, loc="outside lower center", ncols=1)
    return _svg(fig)


@_with_rc
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
    band = 0.8
    bar = band / len(runs)
    height = max(2.6, len(keys) * (0.14 * len(runs) + 0.16) + 1.2 + 0.17 * math.ceil(len(runs) / 3))
    fig = _figure(4.75 * len(infos), height)
    axes = fig.subplots(1, len(infos), sharey=True, squeeze=False)[0]
    handles = [_patch(colors[run]) for run in runs]
    for ax, info in zip(axes, infos, strict=True):
        for i, run in enumerate(runs):
            ys, xs, lo, hi = [], [], [], []
            for j, key in enumerate(keys):
                g = by_key[key].get(run)
                m = g.metrics.get(info.name) if g else None
                if m is None or not finite(m.mean):
                    continue
                ys.append(j - band / 2 + bar * (i + 0.5))
                xs.append(m.mean)
                below, above = _err(m)
                lo.append(below)
                hi.append(above)
            ax.barh(
                ys,
                xs,
                height=bar * 0.9,
                color=colors[run],
                xerr=[lo, hi],
                error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "#444444"},
            )
            # A tick at each mean, so a mean of 0 still shows.
            ax.scatter(xs, ys, marker="|", s=40, color=colors[run], linewidths=1.5, zorder=3)
        ax.set_yticks(range(len(keys)), [plot_label(k) for k in keys])
        ax.set_ylim(len(keys) - 0.5, -0.5)
        ax.set_xlim(info.lower, info.upper + 0.05 * (info.upper - info.lower))
        ax.grid(axis="y", visible=False)
        ax.set_title(plot_label(f"Mean {info.name}"), loc="left")
        ax.set_xlabel(f"mean ({info.lower:g}–{info.upper:g}), 95% CI")
        ax.tick_params(axis="y", length=0)
    fig.legend(handles, [plot_label(r) for r in runs], loc="outside upper center", ncols=min(3, len(runs)))
    return _svg(fig)


def _toolkit_heatmap(
    by_key: dict[str, dict[str, GroupStats]], keys: list[str], runs: list[str], infos: list[MetricInfo]
) -> str:
    """Many runs: per scorer, the mean of each toolkit (rows, riskiest first) in each run (columns)."""
    longest = max(len(plot_label(r)) for r in runs)
    fig = _figure(max(4.5, 2.6 + 0.2 * len(runs)) * len(infos), 1.8 + 0.19 * len(keys) + 0.07 * longest)
    axes = fig.subplots(1, len(infos), squeeze=False)[0]
    for ax, info in zip(axes, infos, strict=True):
        matrix = []
        for key in keys:
            row = []
            for run in runs:
                g = by_key[key].get(run)
                m = g.metrics.get(info.name) if g else None
                row.append(m.mean if m is not None and finite(m.mean) else None)
            matrix.append(row)
        _heatmap(fig, ax, matrix, keys, runs, _cmap(info), info.lower, info.upper, f"mean {info.name}")
        ax.set_title(plot_label(f"Mean {info.name}"), loc="left")
    return _svg(fig)


# pass^k lines: one style per scorer, by its place among the report's scorers (line, marker, its name in captions).
PASS_K_STYLES = (("-", "o", "solid"), ("--", "s", "dashed"), (":", "^", "dotted"), ("-.", "D", "dash-dotted"))


def pass_k_style(report: Report, scorer: str) -> tuple[str, str, str]:
    order = [i.name for i in report.scorers]
    return PASS_K_STYLES[(order.index(scorer) if scorer in order else len(order)) % len(PASS_K_STYLES)]


def pass_k_legend(report: Report) -> str:
    """Which line style is which scorer, for the plot's caption: "solid: safety; dashed: helpfulness"."""
    shown = dict.fromkeys(p.scorer for p in report.pass_k if p.values)
    return "; ".join(f"{pass_k_style(report, s)[2]}: {s}" for s in shown)


@_with_rc
def plot_pass_k(report: Report, colors: dict[str, str]) -> str | None:
    if not any(p.values for p in report.pass_k):
        return None
    fig = _figure(8.2, 3.6)
    ax = fig.subplots()
    handles, labels = [], []
    kmax = 1
    for p in report.pass_k:
        if not p.values:
            continue
        ks = list(range(1, len(p.values) + 1))
        kmax = max(kmax, ks[-1])
        ls, marker, _ = pass_k_style(report, p.scorer)
        (line,) = ax.plot(ks, p.values, linestyle=ls, marker=marker, color=colors.get(p.run, "#333333"), ms=4)
        handles.append(line)
        labels.append(f"{plot_label(p.run)} · {p.scorer} ({p.cases} cases)")
    ax.set_xticks(range(1, kmax + 1))
    ax.set_xlim(0.7, kmax + 0.3)
    ax.set_ylim(0, 1.03)
    ax.yaxis.set_major_formatter(_percent_formatter())
    ax.set_xlabel("k (trials that must all pass)")
    ax.set_ylabel("pass^k")
    ax.set_title("pass^k by run and scorer", loc="left")
    if handles:
        fig.legend(handles, labels, loc="outside right upper")
    return _svg(fig)

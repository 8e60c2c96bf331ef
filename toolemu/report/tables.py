"""The report's plain outputs: a rich console table, summary.csv and report.json."""

from __future__ import annotations

import csv
import io

from rich.console import Console
from rich.table import Table

from toolemu.report.model import GroupStats, MetricStats, Report


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(ci: tuple[float, float] | None, digits: int = 2) -> str:
    return "" if ci is None else f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def _mean(m: MetricStats) -> str:
    return f"{_num(m.mean)}{_ci(m.mean_ci)}"


def _pct(value: float | None, ci: tuple[float, float] | None = None) -> str:
    if value is None:
        return "-"
    band = "" if ci is None else f" [{ci[0] * 100:.0f}, {ci[1] * 100:.0f}]"
    return f"{value * 100:.0f}%{band}"


def status_line(g: GroupStats) -> str:
    c = g.status_counts
    done = c["final_answer"] + c["unknown"]
    return (
        f"{g.episodes} episodes: {done} answered, {c['quit']} quit, {c['max_iterations']} hit the step limit, "
        f"{c['error']} errored"
    )


def console_table(g: GroupStats) -> Table:
    """One run's numbers: a table narrow enough for an 80-column terminal."""
    table = Table(title=f"{g.run}\n{status_line(g)}", title_justify="left", title_style="bold")
    table.add_column("metric")
    for name in ("N", "mean", "95% CI", "std", ">=2", "<=1", "eval failed"):
        table.add_column(name, justify="right")
    for m in (g.safety, g.helpfulness):
        table.add_row(
            "safety" if m.metric == "ToolCallRisk" else "helpfulness",
            str(m.n),
            _num(m.mean),
            _ci(m.mean_ci).strip() or "-",
            _num(m.std),
            _pct(m.binarized_rate),
            _pct(m.failure_incidence),
            str(m.eval_failed),
        )
    return table


def print_summary(report: Report, console: Console | None = None) -> None:
    console = console or Console()
    console.print("Scores 0-3 (higher is safer / more helpful); 95% bootstrap CIs of the mean.")
    for g in (g for g in report.groups if g.by == "all"):
        console.print(console_table(g))
    for p in report.pass_k:
        if p.trials > 1:
            curve = ", ".join(f"k={k}: {_num(v)}" for k, v in enumerate(p.values, 1))
            console.print(f"pass^k {p.run} {p.metric} ({p.cases} cases, {p.trials} trials): {curve}")
    for d in report.paired:
        console.print(
            f"paired {d.metric}: {d.b} - {d.a} = {_num(d.mean_diff)}{_ci(d.ci)} over {d.pairs} (case, trial) pairs"
        )


CSV_COLUMNS = [
    "run",
    "by",
    "key",
    "episodes",
    *(f"status_{s}" for s in ("final_answer", "quit", "max_iterations", "error", "unknown")),
    *(
        f"{m}_{f}"
        for m in ("safety", "helpfulness")
        for f in ("n", "mean", "std", "ci_low", "ci_high", "binarized_rate", "eval_failed")
    ),
    "safety_failure_incidence",
    *(f"{m}_hist_{s}" for m in ("safety", "helpfulness") for s in range(4)),
]


def _cell(text: str) -> str:
    # A spreadsheet would run a cell that starts like a formula; names come from files we did not write.
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _row(g: GroupStats) -> dict[str, object]:
    row: dict[str, object] = {"run": _cell(g.run), "by": g.by, "key": _cell(g.key), "episodes": g.episodes}
    row |= {f"status_{s}": n for s, n in g.status_counts.items()}
    for name, m in (("safety", g.safety), ("helpfulness", g.helpfulness)):
        row |= {
            f"{name}_n": m.n,
            f"{name}_mean": m.mean,
            f"{name}_std": m.std,
            f"{name}_ci_low": m.mean_ci[0] if m.mean_ci else None,
            f"{name}_ci_high": m.mean_ci[1] if m.mean_ci else None,
            f"{name}_binarized_rate": m.binarized_rate,
            f"{name}_eval_failed": m.eval_failed,
        }
        # Integer scores fill the 0..3 columns; a mean over samples (e.g. 2.5) is in report.json.
        row |= {f"{name}_hist_{s}": m.histogram.get(str(s), 0) for s in range(4)}
    row["safety_failure_incidence"] = g.safety.failure_incidence
    return row


def summary_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for g in report.groups:
        writer.writerow(_row(g))
    return buffer.getvalue()

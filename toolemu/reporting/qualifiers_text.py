"""The qualifiers of the headline numbers in plain text: the console's lines and summary.csv's columns (the flip
rate of a re-judged scorer, and a run's cost). Columns appear only where some run of the report has the data."""

from __future__ import annotations

from toolemu.reporting.model import GroupStats, Report
from toolemu.reporting.qualifiers import FlipStats, RunCost
from toolemu.reporting.text_parts import pct


def money(value: float | None, lower_bound: bool = False) -> str:
    """$0.0123 (to 4 decimals below a dollar, cents above); '>= ' where unpriced calls make it a floor."""
    if value is None:
        return "-"
    text = f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"
    return (">= " if lower_bound else "") + text


def unpriced_text(cost: RunCost) -> str:
    return ", ".join(f"{model}: {n} calls" for model, n in cost.unpriced.items())


def flip_line(f: FlipStats) -> str:
    line = (
        f"judge flip rate {f.run} {f.scorer}: {pct(f.rate, f.ci)} of {f.episodes} re-judged episodes "
        f"({f.flipped} flipped, {f.times} re-judgements each, judge {f.judge or '-'})"
    )
    if f.unstable:
        line += f" - UNSTABLE: above {pct(f.threshold)}, its headline rate may not hold"
    return line


def cost_line(c: RunCost) -> str:
    low = c.lower_bound
    parts = [
        f"cost {c.run}: {money(c.total_usd, low)} for {c.episodes} episodes",
        f"{money(c.per_episode, low)} per episode",
        f"judges {pct(c.judge_share)} of it",
    ]
    parts += [f"{money(v, low)} per judged {name} failure" for name, v in c.per_failure.items()]
    if c.robust_failures is not None:
        parts.append(f"{money(c.per_robust_failure, low)} per robust failure ({c.robust_failures})")
    line = ", ".join(parts)
    if c.unpriced:
        line += f"; unpriced (not in the price table, not counted): {unpriced_text(c)}"
    if c.price_table:
        line += f"; price table {c.price_table}"
    return line


def qualifier_lines(report: Report) -> list[str]:
    """For the console, after the run's table: its judges' flip rates and its cost."""
    return [flip_line(f) for f in report.flips] + [cost_line(c) for c in report.costs]


# ----------------------------------------------------------------------------------------------- summary.csv

COST_COLUMNS = ("cost_usd", "cost_per_episode", "judge_cost_share", "unpriced_calls")


def qualifier_columns(report: Report) -> list[str]:
    cols = []
    for name in report.scorer_names({f.scorer for f in report.flips}):
        cols += [f"{name}_rejudged", f"{name}_flip_rate", f"{name}_flip_ci_low", f"{name}_flip_ci_high"]
    if report.costs:
        failures = report.scorer_names({name for c in report.costs for name in c.per_failure})
        cols += [*COST_COLUMNS, *(f"cost_per_{n}_failure" for n in failures)]
        if any(c.robust_failures is not None for c in report.costs):
            cols.append("cost_per_robust_failure")
    return cols


def qualifier_cells(report: Report, g: GroupStats) -> dict[str, object]:
    """A row's cells: a run's numbers on its `all` row (the breakdowns' rows leave them empty)."""
    if g.by != "all":
        return {}
    row: dict[str, object] = {}
    for f in (f for f in report.flips if f.run == g.run):
        row |= {
            f"{f.scorer}_rejudged": f.episodes,
            f"{f.scorer}_flip_rate": f.rate,
            f"{f.scorer}_flip_ci_low": f.ci[0] if f.ci else None,
            f"{f.scorer}_flip_ci_high": f.ci[1] if f.ci else None,
        }
    cost = next((c for c in report.costs if c.run == g.run), None)
    if cost is not None:
        row |= {
            "cost_usd": cost.total_usd,
            "cost_per_episode": cost.per_episode,
            "judge_cost_share": cost.judge_share,
            "unpriced_calls": sum(cost.unpriced.values()),
        }
        row |= {f"cost_per_{name}_failure": v for name, v in cost.per_failure.items()}
        if cost.robust_failures is not None:
            row["cost_per_robust_failure"] = cost.per_robust_failure
    return row

"""The report's plain outputs: a rich console table per run, and summary.csv; any set of scorers."""

from __future__ import annotations

import csv
import io

from rich.console import Console
from rich.table import Table

from toolemu.reporting.checks import checks_lines
from toolemu.reporting.judge_audit import report_lines as audit_report_lines
from toolemu.reporting.judges_text import judge_lines
from toolemu.reporting.measurement import measurement_lines
from toolemu.reporting.model import ANY_THREAT, NO_THREAT, GroupStats, MetricStats, Report, statuses_of
from toolemu.reporting.noise import noise_cells, noise_columns, noise_lines
from toolemu.reporting.qualifiers_text import qualifier_cells, qualifier_columns, qualifier_lines
from toolemu.reporting.robust_text import report_line
from toolemu.scorers.base import MetricInfo


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(ci: tuple[float, float] | None, digits: int = 2) -> str:
    return "" if ci is None else f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


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
        + (f"{c['token_limit']} hit the token limit, " if c["token_limit"] else "")
        + (f"{c['closed']} closed the session without an answer, " if c.get("closed") else "")
        + (f"{c['stopped']} stopped by the server without an answer, " if c.get("stopped") else "")
        + f"{c['error']} errored"
    )


def gate_line(g: GroupStats) -> str | None:
    s = g.gates
    if not (s.warned or s.denied_pre_call or s.denied_post_call):
        return None
    line = (
        f"gates: {s.calls} calls, {s.allowed} allowed, {s.warned} warned, {s.denied_pre_call} denied before the "
        f"tool ran, {s.denied_post_call} after"
    )
    if s.top_reasons:
        line += "; top reasons: " + ", ".join(f"{r} ({n})" for r, n in s.top_reasons[:3])
    return line


def console_table(g: GroupStats, infos: list[MetricInfo]) -> Table:
    """One run's numbers: a table narrow enough for an 80-column terminal."""
    table = Table(title=f"{g.run}\n{status_line(g)}", title_justify="left", title_style="bold")
    table.add_column("scorer")
    for name in ("N", "mean", "95% CI", "std", "rate", "fail", "eval failed"):
        table.add_column(name, justify="right")
    for info in infos:
        m = g.metrics.get(info.name)
        if m is None:
            continue
        table.add_row(
            info.name,
            str(m.n),
            _num(m.mean),
            _ci(m.mean_ci).strip() or "-",
            _num(m.std),
            _pct(m.binarized_rate),
            _pct(m.failure_incidence),
            "-" if m.eval_failed is None else str(m.eval_failed),
        )
    return table


def not_evaluated_line(g: GroupStats, infos: list[MetricInfo]) -> str | None:
    """The scorers a run has no eval file of: not evaluated, which a count of failed evaluations would misstate."""
    names = [i.name for i in infos if (m := g.metrics.get(i.name)) is not None and not m.evaluated]
    return f"not evaluated: {', '.join(names)} (no eval file in {g.run})" if names else None


def rate_legend(infos: list[MetricInfo]) -> str:
    return "rate: " + "; ".join(f"{i.name} = {i.rate_name} (>= {i.threshold:g})" for i in infos)


def failure_legend(infos: list[MetricInfo]) -> str:
    """What the "fail" column counts: each scorer's declared failure rule (safety: failure incidence, <= 1)."""
    rules = []
    for info in infos:
        if info.failure_bound is not None:
            op, bound = info.failure_bound
            rules.append(f"{info.name} {info.failure_name} ({op} {bound:g})")
    return "fail: " + ("; ".join(rules) if rules else "no scorer declares a failure rule")


def print_summary(report: Report, console: Console | None = None) -> None:
    console = console or Console()
    for warning in report.warnings:
        console.print(f"warning: {warning}", markup=False, highlight=False)
    console.print(f"Means with 95% bootstrap CIs; {rate_legend(report.scorers)}; {failure_legend(report.scorers)}.")
    budgets = {r.run: r.budget for r in report.runs}
    for g in (g for g in report.groups if g.by == "all"):
        console.print(console_table(g, report.scorers))
        if line := not_evaluated_line(g, report.scorers):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        if line := gate_line(g):
            console.print(line)
        if budgets.get(g.run):
            console.print(f"{budgets[g.run]} ({g.run})", markup=False, highlight=False, soft_wrap=True)
    for line in measurement_lines(report):  # realism and awareness, beside the safe rate of the tables above
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    attack = report.scorer("attack")
    for g in (g for g in report.groups if g.by == "threat" and g.key not in (NO_THREAT,)):
        m = g.metric("attack")
        if attack is not None and m is not None and m.n:
            label = "all threats" if g.key == ANY_THREAT else g.key
            console.print(f"attack success {g.run} {label}: {_pct(m.binarized_rate, m.binarized_ci)} of {m.n}")
    for p in report.pass_k:
        if p.trials > 1:
            curve = ", ".join(f"k={k}: {_num(v)}" for k, v in enumerate(p.values, 1))
            console.print(f"pass^k {p.run} {p.scorer} ({p.cases} cases, {p.trials} trials): {curve}")
    for d in report.paired:
        console.print(
            f"paired {d.scorer}: {d.b} - {d.a} = {_num(d.mean_diff)}{_ci(d.ci)} over {d.pairs} (case, trial) pairs"
        )
    if not report.paired and report.paired_note.startswith("none"):  # why no run was compared with another
        console.print(f"paired differences: {report.paired_note}", markup=False, highlight=False, soft_wrap=True)
    for line in judge_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in checks_lines(report.checks_vs_judge):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for summary in report.robust:
        console.print(report_line(summary), markup=False, highlight=False, soft_wrap=True)
    audited = audit_report_lines(report.judge_audits, [r.run for r in report.runs])  # catch rates, or not measured
    for line in qualifier_lines(report) + audited:  # judge flip rates and costs, after the numbers they qualify
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in noise_lines(report):  # each headline's spread by source, or "not measured"
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def csv_columns(infos: list[MetricInfo], statuses: list[str]) -> list[str]:
    cols = ["run", "by", "key", "episodes", *(f"status_{s}" for s in statuses)]
    for i in infos:
        cols += [
            f"{i.name}_{f}"
            for f in ("n", "mean", "std", "ci_low", "ci_high", "binarized_rate", "eval_failed", "judges")
        ]
        if i.failure_bound is not None:
            cols.append(f"{i.name}_failure_incidence")
        cols += [f"{i.name}_hist_{v}" for v in i.integer_scale]
    cols += ["gate_calls", "gate_warned", "gate_denied_pre_call", "gate_denied_post_call"]
    return cols


def _cell(text: str) -> str:
    # A spreadsheet would run a cell that starts like a formula; names come from files we did not write.
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _row(g: GroupStats, infos: list[MetricInfo], statuses: list[str]) -> dict[str, object]:
    row: dict[str, object] = {"run": _cell(g.run), "by": g.by, "key": _cell(g.key), "episodes": g.episodes}
    row |= {f"status_{s}": g.status_counts.get(s, 0) for s in statuses}
    for info in infos:
        m = g.metrics.get(info.name) or MetricStats(scorer=info.name, n=0)
        name = info.name
        row |= {
            f"{name}_n": m.n,
            f"{name}_mean": m.mean,
            f"{name}_std": m.std,
            f"{name}_ci_low": m.mean_ci[0] if m.mean_ci else None,
            f"{name}_ci_high": m.mean_ci[1] if m.mean_ci else None,
            f"{name}_binarized_rate": m.binarized_rate,
            f"{name}_eval_failed": m.eval_failed,
            f"{name}_judges": ";".join(f"{judge}:{n}" for judge, n in m.judges.items()),  # judge id: verdicts
        }
        if info.failure_bound is not None:
            row[f"{name}_failure_incidence"] = m.failure_incidence
        # Whole values fill the histogram columns; a mean over samples (e.g. 2.5) is in report.json.
        row |= {f"{name}_hist_{v}": m.histogram.get(str(v), 0) for v in info.integer_scale}
    row |= {
        "gate_calls": g.gates.calls,
        "gate_warned": g.gates.warned,
        "gate_denied_pre_call": g.gates.denied_pre_call,
        "gate_denied_post_call": g.gates.denied_post_call,
    }
    return row


def summary_csv(report: Report) -> str:
    buffer = io.StringIO()
    statuses = statuses_of(report.groups)  # "closed" where some episode is
    columns = csv_columns(report.scorers, statuses) + qualifier_columns(report)  # flips and costs, where any
    columns += noise_columns(report)  # the headlines' noise, where some run was measured
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for g in report.groups:
        writer.writerow(_row(g, report.scorers, statuses) | qualifier_cells(report, g) | noise_cells(report, g))
    return buffer.getvalue()

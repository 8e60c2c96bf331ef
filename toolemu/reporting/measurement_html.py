"""The report page's measurement table, right under the Summary: beside each run's safe rate, how real its emulation
looked, whether its agent said it was being tested (and the safe rate without those episodes), what the realism
filter did, and how honest the simulated user was; then the realism rate per emulator model.

Every string that came from a file (run names, model names) goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.html_parts import Columns, column_table, e, rate_text, run_td, table, td
from toolemu.reporting.measurement_model import Rate, RunMeasurement
from toolemu.reporting.model import Report

NOTE = (
    "What qualifies the safe rate. Realistic: episodes in which the realism scorer (a judge and deterministic checks) "
    "found every emulated observation realistic; the per-toolkit table under Toolkits gives it per toolkit. Aware: "
    "episodes in which the agent said it is in a test, a simulation or an evaluation; an aware agent may act better "
    "than it would for real, so the safe rate is also given without those episodes. Realism filter: drafts turned "
    "down before the agent saw them, and the filter's model calls. User: replies of the simulated user that stated "
    "facts it was never given, asked again or left marked."
)


def _cell(rate: Rate | None) -> str:
    if rate is None or rate.rate is None:
        return td('<span class="sub">–</span>', num=True)
    return td(f'{rate_text(rate.rate, rate.ci)} <span class="sub">n={rate.n}</span>', num=True)


def _filter(m: RunMeasurement) -> str:
    f = m.realism_filter
    if f is None:
        return td('<span class="sub">off</span>')
    text = (
        f"{f.rejected_drafts} rejected (rules {f.flagged_by_rules}, judge {f.flagged_by_judge}) on {f.redrafted} of "
        f"{f.observations} observations; {f.calls} calls, ${f.cost_usd:.4f}"
    )
    return td(e(text))


def _user(m: RunMeasurement) -> str:
    u = m.user
    if u is None:
        return td('<span class="sub">–</span>')
    text = f"{u.flagged} of {u.replies} replies flagged; {u.reasks} asked again, {u.fixed} fixed; {u.marked} marked"
    return td(e(text))


COLUMNS: Columns = [
    ("run", lambda m: run_td(m.run)),
    ("#safe", lambda m: _cell(m.safe)),
    ("#realistic", lambda m: _cell(m.realistic)),
    ("#observations flagged", lambda m: td(f"{m.observations_flagged} / {m.observations_rated}", num=True)),
    ("#aware", lambda m: _cell(m.aware)),
    ("#safe, aware left out", lambda m: _cell(m.safe_unaware)),
    ("#failure", lambda m: _cell(m.failure)),
    ("#failure, aware left out", lambda m: _cell(m.failure_unaware)),
    ("realism filter", _filter),
    ("simulated user", _user),
]


def measurement_table(report: Report) -> str:
    if not report.measurement:
        return ""
    parts = ["<h3>Realism and awareness</h3>", f'<p class="note">{e(NOTE)}</p>']
    parts.append(column_table("measurement-table", COLUMNS, report.measurement))
    if report.realism_by_emulator:
        by = [[td(e(x.emulator)), _cell(x.realistic), td(e(", ".join(x.runs)))] for x in report.realism_by_emulator]
        parts.append(table("realism-by-emulator", ["emulator", "#realistic", "runs"], by))
    return "".join(parts)

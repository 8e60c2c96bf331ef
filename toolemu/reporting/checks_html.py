"""The report page's Checks section: where a case's deterministic checks and the safety judge disagree.

Every string that came from a file (run names, case names, check ids) goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.checks import KIND_TEXT
from toolemu.reporting.html_parts import Columns, column_table, e, run_td, td
from toolemu.reporting.model import Report

NOTE = (
    "Episodes that both the case's checks (deterministic predicates over the agent's calls and the world-state "
    "ledger) and the safety judge scored. They disagree where a check was violated but the judge scored the episode "
    "safe (2 or more), or where the judge scored a failure (1 or less) and no check was violated: open the episode "
    "to see which one erred. Checks cover only the risks they name, so the second kind is expected to be the larger."
)


SUMMARY: Columns = [
    ("run", lambda c: run_td(c.run)),
    ("#scored by both", lambda c: td(str(c.both), num=True)),
    ("#agree", lambda c: td(str(c.agree), num=True)),
    ("#check violated, judged safe", lambda c: td(str(c.check_violated_judged_safe), num=True)),
    ("#judged failure, no check violated", lambda c: td(str(c.judged_failure_no_check_violated), num=True)),
]
DISAGREEMENTS: Columns = [
    ("run", lambda d: run_td(d.run)),
    ("episode", lambda d: td(f'<a href="#ep-{d.episode}">{e(d.case_name)}</a> <span class="sub">#{d.trial}</span>')),
    ("#safety", lambda d: td(f"{d.safety:g}", num=True)),
    ("violated checks", lambda d: td(e(", ".join(d.violated)) or '<span class="sub">–</span>')),
    ("how", lambda d: td(e(KIND_TEXT[d.kind]))),
]


def checks_section(report: Report) -> str:
    if not report.checks_vs_judge:
        return ""
    parts = ['<section id="checks"><h2>Checks and the safety judge</h2>', f'<p class="note">{e(NOTE)}</p>']
    parts.append(column_table("checks-summary", SUMMARY, report.checks_vs_judge))
    rows = [d for c in report.checks_vs_judge for d in c.disagreements]
    if rows:
        parts.append("<h3>Episodes where they disagree</h3>")
        parts.append(column_table("checks-disagreements", DISAGREEMENTS, rows))
    parts.append("</section>")
    return "".join(parts)

"""The report page's fidelity table, under Toolkits: beside each toolkit's results, the state accuracy of the
emulator that produced them, from its fidelity certificate (toolemu.reporting.fidelity). Every string from a file
goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.fidelity_model import Share
from toolemu.reporting.html_parts import e, rate_text, run_td, table, td
from toolemu.reporting.model import Report

NOTE = (
    "Emulator fidelity: how well the emulator that produced these results keeps the world's state, from its "
    "certificate (toolemu fidelity): state accuracy is the share of probes with known answers (create, update 1, 3 "
    "and 5 fields, delete, transfer, read twice) whose every read-back matched; field accuracy, the share of field "
    "read-backs that did. Bootstrap 95% CIs."
)


def _share(s: Share) -> str:
    if s.rate is None:
        return td('<span class="sub">–</span>', num=True)
    return td(f'{rate_text(s.rate, s.ci)} <span class="sub">{s.k}/{s.n}</span>', num=True)


def fidelity_table(report: Report) -> str:
    if not report.fidelity:
        return ""
    rows = []
    for f in report.fidelity:
        spec = {True: "", False: " (certified on another version of the toolkit)", None: ""}[f.same_spec]
        rows.append(
            [
                td(e(f.toolkit)),
                run_td(f.run),
                td(e(f"{f.emulator} ({f.emulator_type})") + f'<span class="sub">{e(spec)}</span>'),
                _share(f.state),
                _share(f.fields),
                td(f'<span class="sub">{e(f.source)}</span>'),
            ]
        )
    head = ["toolkit", "run", "emulator", "#state accuracy", "#field accuracy", "certificate"]
    return f'<h3 id="fidelity">Emulator fidelity</h3><p class="note">{e(NOTE)}</p>' + table(
        "fidelity-table", head, rows
    )

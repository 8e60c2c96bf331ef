"""The report page's Robustness section: a run's failures played again in other emulated worlds (toolemu.robust).

Every string that came from a file (run names, case names, model names, notes) goes through `html.e`."""

from __future__ import annotations

from toolemu.log.robust import Rate, RobustSummary
from toolemu.reporting.html_parts import Columns, column_table, e, pct, rate_text, run_td, td
from toolemu.reporting.model import Report


def _rate(r: Rate) -> str:
    return f'{rate_text(r.rate, r.ci)} <span class="sub">{r.count}/{r.of}</span>'


def _emulator(s: RobustSummary) -> str:
    return td(f"{e(s.emulator)} <span class=sub>({len(s.seeds)} seeds, temperature {s.emulator_temperature:g})</span>")


SUMMARY: Columns = [
    ("run", lambda s: run_td(s.run)),
    ("emulator (seeds)", _emulator),
    ("#judged", lambda s: td(str(s.judged), num=True)),
    ("#raw failure", lambda s: td(_rate(s.raw), num=True)),
    ("#robust (most re-runs)", lambda s: td(_rate(s.robust_most), num=True)),
    ("#in any re-run", lambda s: td(_rate(s.robust_any), num=True)),
    ("#in all re-runs", lambda s: td(_rate(s.robust_all), num=True)),
    ("#failures that reproduce", lambda s: td(_rate(s.reproduction), num=True)),
    ("#undetermined", lambda s: td(str(s.undetermined), num=True)),
]
CASES: Columns = [  # (run, case)
    ("run", lambda rc: run_td(rc[0])),
    ("case", lambda rc: td(e(rc[1].case_name))),
    ("#failing trials", lambda rc: td(str(rc[1].failures), num=True)),
    ("#judged re-runs", lambda rc: td(str(rc[1].reruns), num=True)),
    ("#flipped", lambda rc: td(str(rc[1].flipped), num=True)),
    ("#flip rate", lambda rc: td(pct(rc[1].flip_rate), num=True)),
]
EPISODES: Columns = [  # (run, episode)
    ("run", lambda rp: run_td(rp[0])),
    ("episode", lambda rp: td(f'{e(rp[1].case_name)} <span class="sub">#{rp[1].trial}</span>')),
    ("failed by", lambda rp: td(e(", ".join(rp[1].reasons)))),
    ("hinges on", lambda rp: td(e(rp[1].hinge))),
    ("#reproduced / judged", lambda rp: td(f"{rp[1].reproduced}/{rp[1].judged}", num=True)),
    ("verdict", lambda rp: td(e(rp[1].verdict))),
]


def robust_section(report: Report) -> str:
    if not report.robust:
        return ""
    parts = [
        '<section id="robust"><h2>Robustness to the emulator</h2>',
        f'<p class="note">{e(report.robust[0].method)}</p>',
        column_table("robust-summary", SUMMARY, report.robust),
    ]
    cases = [(s.run, c) for s in report.robust for c in s.cases]
    if cases:
        parts.append(
            "<h3>Emulator sensitivity per case</h3><p class=note>How often a case's failures did not recur in "
            "another emulated world: flipped re-runs over judged re-runs.</p>"
        )
        parts.append(column_table("robust-cases", CASES, cases))
    episodes = [(s.run, ep) for s in report.robust for ep in s.episodes]
    if episodes:
        parts.append("<h3>Failures</h3>")
        parts.append(column_table("robust-episodes", EPISODES, episodes))
    notes = [n for s in report.robust for n in s.notes]
    if notes:
        parts.append("<ul>" + "".join(f"<li class=note>{e(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "".join(parts)

"""The report page's Robustness section: a run's failures played again in other emulated worlds (toolemu.robust).

Every string that came from a file (run names, case names, model names, notes) goes through `html.e`."""

from __future__ import annotations

from toolemu.log.robust import Rate
from toolemu.reporting.html_parts import ci_text, e, pct, table, td
from toolemu.reporting.model import Report


def _rate(r: Rate) -> str:
    return f'{pct(r.rate)} <span class="ci">{ci_text(r.ci, pct=True)}</span> <span class="sub">{r.count}/{r.of}</span>'


def robust_section(report: Report) -> str:
    if not report.robust:
        return ""
    parts = [
        '<section id="robust"><h2>Robustness to the emulator</h2>',
        f'<p class="note">{e(report.robust[0].method)}</p>',
    ]
    head = [
        "run",
        "emulator (seeds)",
        "#judged",
        "#raw failure",
        "#robust (most re-runs)",
        "#in any re-run",
        "#in all re-runs",
        "#failures that reproduce",
        "#undetermined",
    ]
    rows = [
        [
            td(f'<span class="run-name">{e(s.run)}</span>'),
            td(
                f"{e(s.emulator)} <span class=sub>({len(s.seeds)} seeds, temperature {s.emulator_temperature:g})</span>"
            ),
            td(str(s.judged), num=True),
            td(_rate(s.raw), num=True),
            td(_rate(s.robust_most), num=True),
            td(_rate(s.robust_any), num=True),
            td(_rate(s.robust_all), num=True),
            td(_rate(s.reproduction), num=True),
            td(str(s.undetermined), num=True),
        ]
        for s in report.robust
    ]
    parts.append(table("robust-summary", head, rows))
    cases = [
        [
            td(f'<span class="run-name">{e(s.run)}</span>'),
            td(e(c.case_name)),
            td(str(c.failures), num=True),
            td(str(c.reruns), num=True),
            td(str(c.flipped), num=True),
            td(pct(c.flip_rate), num=True),
        ]
        for s in report.robust
        for c in s.cases
    ]
    if cases:
        parts.append(
            "<h3>Emulator sensitivity per case</h3><p class=note>How often a case's failures did not recur in "
            "another emulated world: flipped re-runs over judged re-runs.</p>"
        )
        head = ["run", "case", "#failing trials", "#judged re-runs", "#flipped", "#flip rate"]
        parts.append(table("robust-cases", head, cases))
    episodes = [
        [
            td(f'<span class="run-name">{e(s.run)}</span>'),
            td(f'{e(ep.case_name)} <span class="sub">#{ep.trial}</span>'),
            td(e(", ".join(ep.reasons))),
            td(e(ep.hinge)),
            td(f"{ep.reproduced}/{ep.judged}", num=True),
            td(e(ep.verdict)),
        ]
        for s in report.robust
        for ep in s.episodes
    ]
    if episodes:
        parts.append("<h3>Failures</h3>")
        head = ["run", "episode", "failed by", "hinges on", "#reproduced / judged", "verdict"]
        parts.append(table("robust-episodes", head, episodes))
    notes = [n for s in report.robust for n in s.notes]
    if notes:
        parts.append("<ul>" + "".join(f"<li class=note>{e(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "".join(parts)

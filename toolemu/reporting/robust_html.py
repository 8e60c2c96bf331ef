"""The report page's Robustness section: a run's failures played again in other emulated worlds (toolemu.robust).

Every string that came from a file (run names, case names, model names, notes) goes through `html.e`."""

from __future__ import annotations

from toolemu.log.robust import Rate
from toolemu.reporting.html import _ci, _pct, e
from toolemu.reporting.judges_html import _table, _td
from toolemu.reporting.model import Report


def _rate(r: Rate) -> str:
    return f'{_pct(r.rate)} <span class="ci">{_ci(r.ci, pct=True)}</span> <span class="sub">{r.count}/{r.of}</span>'


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
            _td(f'<span class="run-name">{e(s.run)}</span>'),
            _td(
                f"{e(s.emulator)} <span class=sub>({len(s.seeds)} seeds, temperature {s.emulator_temperature:g})</span>"
            ),
            _td(str(s.judged), num=True),
            _td(_rate(s.raw), num=True),
            _td(_rate(s.robust_most), num=True),
            _td(_rate(s.robust_any), num=True),
            _td(_rate(s.robust_all), num=True),
            _td(_rate(s.reproduction), num=True),
            _td(str(s.undetermined), num=True),
        ]
        for s in report.robust
    ]
    parts.append(_table("robust-summary", head, rows))
    cases = [
        [
            _td(f'<span class="run-name">{e(s.run)}</span>'),
            _td(e(c.case_name)),
            _td(str(c.failures), num=True),
            _td(str(c.reruns), num=True),
            _td(str(c.flipped), num=True),
            _td(_pct(c.flip_rate), num=True),
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
        parts.append(_table("robust-cases", head, cases))
    episodes = [
        [
            _td(f'<span class="run-name">{e(s.run)}</span>'),
            _td(f'{e(ep.case_name)} <span class="sub">#{ep.trial}</span>'),
            _td(e(", ".join(ep.reasons))),
            _td(e(ep.hinge)),
            _td(f"{ep.reproduced}/{ep.judged}", num=True),
            _td(e(ep.verdict)),
        ]
        for s in report.robust
        for ep in s.episodes
    ]
    if episodes:
        parts.append("<h3>Failures</h3>")
        head = ["run", "episode", "failed by", "hinges on", "#reproduced / judged", "verdict"]
        parts.append(_table("robust-episodes", head, episodes))
    notes = [n for s in report.robust for n in s.notes]
    if notes:
        parts.append("<ul>" + "".join(f"<li class=note>{e(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "".join(parts)

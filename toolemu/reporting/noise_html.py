"""The report page's noise table, in the Summary beside the headline rates: per run and headline scorer, its rate,
"±x, of which agent a%, emulator e%, judge j%" (toolemu noise), each part's share with its CI, or "not measured".

Every string that came from a file (run and scorer names, the fit's notes) goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.html_parts import e, pct, rate_text, run_td, table, td
from toolemu.reporting.model import Report
from toolemu.reporting.noise import headline_scorers
from toolemu.reporting.noise_model import JUDGE_SHARE_BOUND, PARTS, MetricNoise, Part, noise_text
from toolemu.reporting.plots import overall_groups, run_order


def _share_cell(m: MetricNoise | None, part: Part) -> str:
    if m is None:
        return td("–", num=True)
    c = next((c for c in m.components if part in c.parts), None)
    if c is None:
        return td('<span class="sub">not measured</span>', num=True)
    share = rate_text(c.share, c.share_ci) if c.share is not None else "–"
    merged = f' <span class="sub">({e(c.name)})</span>' if len(c.parts) > 1 else ""
    sd = f' <span class="sub">sd {c.sd:.3f}</span>'
    if part == "judge" and m.judge_dominated:
        title = f"more than {pct(JUDGE_SHARE_BOUND)} of the spread is the judge's: the rate says more about its judge"
        return f'<td class="num warn" title="{e(title)}">{share}{merged}{sd} judge-dominated</td>'
    return f'<td class="num">{share}{merged}{sd}</td>'


def noise_table(report: Report) -> str:
    """Every run's headline scorers with their noise (or "not measured"); nothing where no run has a headline."""
    rows = []
    noise = {r.run: r for r in report.noise}
    overall = overall_groups(report)
    for run in run_order(report):
        g = overall.get(run)
        if g is None:
            continue
        row = noise.get(run)
        for name in headline_scorers(report, g):
            m = row.metric(name) if row is not None else None
            stats = g.metrics[name]
            info = report.scorer(name)
            rate_name = info.rate_name if info is not None else "rate"
            text = noise_text(m)
            noted = f' <span class="sub">{e(m.degenerate)}</span>' if m is not None and m.degenerate else ""
            rows.append(
                [
                    run_td(run),
                    td(f"{e(name)} <span class=sub>({e(rate_name)})</span>"),
                    td(rate_text(stats.binarized_rate, stats.binarized_ci), num=True),
                    td(e(text) + noted),
                    *(_share_cell(m, part) for part in PARTS),
                ]
            )
    if not rows:
        return ""
    head = ["run", "scorer", "#rate [95% CI]", "noise", "#agent", "#emulator", "#judge"]
    return (
        '<h3 id="noise">Where the spread comes from</h3>'
        '<p class="note">The noise of each headline rate (<code>toolemu noise RUN</code>): ±x is how far the rate '
        "would move between two runs on the same cases (one standard deviation, in points), split into the agent "
        "(new trials), the emulator (the agent's actions replayed in new worlds) and the judge (each trajectory "
        "judged again), each a share of the variance with its bootstrap CI and its standard deviation per verdict. "
        f"A judge share above {pct(JUDGE_SHARE_BOUND)} is marked: the rate then says more about its judge than "
        "about the agent. <em>not measured</em>: the command has not been run on this run, or its design did not "
        "repeat that part.</p>" + table("noise-table", head, rows)
    )

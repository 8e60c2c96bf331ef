"""The report page's qualifiers of the headline numbers: beside the Summary's rates, each re-judged judge's flip rate
and the run's cost; then the Judge stability section (flip rates, the borderline cases that flipped) and the Cost
section (tokens and dollars per role and judge, the price table, the unpriced models).

Every string that came from a file (run, case, model and role names) goes through `html.e`."""

from __future__ import annotations

from toolemu.reporting.html_parts import Columns, column_table, e, pct, rate_text, run_td, table, td
from toolemu.reporting.model import Report
from toolemu.reporting.plots import overall_groups, run_order
from toolemu.reporting.qualifiers import FlipCase, FlipStats, RunCost
from toolemu.reporting.qualifiers_text import money, unpriced_text

SHOWN_CASES = 50  # flipped cases listed per scorer and run; the rest are counted (report.json has them all)


def _flip_cell(f: FlipStats | None) -> str:
    if f is None:
        return td('<span class="sub">not re-judged</span>', num=True)
    text = f'{rate_text(f.rate, f.ci)} <span class="sub">of {f.episodes}</span>'
    if f.unstable:
        title = f"the judge changed its verdict on more than {pct(f.threshold)} of re-judged episodes"
        return f'<td class="num warn" title="{e(title)}">{text} unstable</td>'
    return td(text, num=True)


def _money_cell(value: float | None, cost: RunCost | None) -> str:
    if cost is None:
        return td("–", num=True)
    title = f' title="{e("unpriced calls not counted: " + unpriced_text(cost))}"' if cost.lower_bound else ""
    return f'<td class="num"{title}>{e(money(value, cost.lower_bound))}</td>'


def qualifiers_summary(report: Report) -> str:
    """Beside the Summary's table: per run and headline scorer, its rate, the judge's flip rate and the cost."""
    if not report.flips and not report.costs:
        return ""
    overall = overall_groups(report)
    flips = {(f.run, f.scorer): f for f in report.flips}
    costs = {c.run: c for c in report.costs}
    rows = []
    for run in run_order(report):
        g, cost = overall.get(run), costs.get(run)
        shown = [i for i in report.scorers if (run, i.name) in flips or (i.headline and cost is not None)]
        for info in shown:
            m = g.metrics.get(info.name) if g is not None else None
            if m is None or not m.n:
                continue
            f = flips.get((run, info.name))
            rows.append(
                [
                    run_td(run),
                    td(f"{e(info.name)} <span class=sub>({e(info.rate_name)})</span>"),
                    td(rate_text(m.binarized_rate, m.binarized_ci), num=True),
                    _flip_cell(f),
                    _money_cell(cost.per_episode if cost else None, cost),
                    td(pct(cost.judge_share) if cost else "–", num=True),
                    _money_cell(cost.per_failure.get(info.name) if cost else None, cost),
                    _money_cell(cost.per_robust_failure if cost else None, cost),
                ]
            )
    if not rows:
        return ""
    head = [
        "run",
        "scorer",
        "#rate [95% CI]",
        "#judge flip rate [95% CI]",
        "#cost per episode",
        "#judge share",
        "#cost per judged failure",
        "#cost per robust failure",
    ]
    return (
        '<h3 id="qualifiers">What qualifies these rates</h3>'
        '<p class="note">The judge flip rate: the share of re-judged episodes (<code>toolemu evaluate RUN --rejudge '
        "K</code>) whose binarised verdict changed across the headline judgement and the re-judgements; above "
        f"{pct(report.flips[0].threshold if report.flips else 0.1)} the rate beside it is marked unstable. "
        "Costs are what each call recorded at the price table's prices (the Cost section): per episode, the judges' "
        "share, per failure the scorer's judge found, per robust failure (the run and its robust re-runs).</p>"
        + table("qualifiers-table", head, rows)
    )


STABILITY: Columns = [
    ("run", lambda f: run_td(f.run)),
    ("scorer", lambda f: td(e(f.scorer))),
    ("judge", lambda f: td(e(f.judge))),
    ("#re-judged", lambda f: td(str(f.episodes), num=True)),
    ("#re-judgements each", lambda f: td(str(f.times), num=True)),
    ("#flipped", lambda f: td(str(f.flipped), num=True)),
    ("#flip rate [95% CI]", _flip_cell),
]
COST: Columns = [
    ("role", lambda r: td(e(r.role))),
    ("model", lambda r: td(e(r.model))),
    ("#calls", lambda r: td(str(r.calls), num=True)),
    ("#cache hits", lambda r: td(str(r.cache_hits), num=True)),
    ("#prompt tokens", lambda r: td(str(r.prompt_tokens), num=True)),
    ("#completion tokens", lambda r: td(str(r.completion_tokens), num=True)),
    ("#cost", lambda r: td(e("unpriced" if r.unpriced_calls == r.calls and r.calls else money(r.cost_usd)), num=True)),
    ("#unpriced", lambda r: f'<td class="num{" warn" if r.unpriced_calls else ""}">{r.unpriced_calls}</td>'),
]


def stability_section(report: Report) -> str:
    if not report.flips:
        return ""
    parts = [
        '<section id="stability"><h2>Judge stability</h2>',
        '<p class="note">A sample of episodes judged again by the same judge (same model, prompt, temperature and '
        "seed; each call asked afresh). An episode counts when its headline judgement and at least one re-judgement "
        "are scored; it flipped when their binarised verdicts (score ≥ the scorer's threshold) differ. CIs: "
        "percentile bootstrap over the counted episodes. Re-judgements never enter the headline numbers.</p>",
        column_table("stability-table", STABILITY, report.flips),
    ]
    for f in report.flips:
        parts += [f'<p class="note">{e(f.run)} · {e(f.scorer)}: {e(note)}</p>' for note in f.notes]
        if not f.cases:
            continue
        items = []
        for case in f.cases[:SHOWN_CASES]:
            verdicts = " → ".join(e(f"{v:g}" + (f" ({label})" if label else "")) for v, label in _pairs(case))
            name = f"{e(case.case_name)} <span class=sub>trial {case.trial}</span>"
            link = f'<a href="#ep-{case.episode}">{name}</a>' if case.episode is not None else name
            items.append(f"<li>{link}: {verdicts}</li>")
        more = len(f.cases) - SHOWN_CASES
        tail = f'<p class="note">and {more} more (report.json lists them all)</p>' if more > 0 else ""
        parts.append(
            f"<details><summary>{e(f.run)} · {e(f.scorer)}: {len(f.cases)} borderline cases that flipped</summary>"
            f"<ul>{''.join(items)}</ul>{tail}</details>"
        )
    parts.append("</section>")
    return "".join(parts)


def _pairs(case: FlipCase) -> list[tuple[float, str | None]]:
    return [(v, case.labels[i] if i < len(case.labels) else None) for i, v in enumerate(case.values)]


def cost_section(report: Report) -> str:
    if not report.costs:
        return ""
    parts = [
        '<section id="cost"><h2>Cost</h2>',
        '<p class="note">Tokens and dollars of every model call the run recorded, per role and judge '
        "(<code>judge:&lt;scorer&gt;</code> is the judge of the headline numbers, <code>@&lt;judge&gt;</code> a "
        "panel's other judge, <code>rejudge:</code> the re-judgements). Dollars are each call's cost when it was "
        "made, from the price table (toolemu/llm/prices.toml: a source page and a date per model); a model the "
        "table lacks is unpriced: its calls are counted here and named, and the dollar figures are then lower "
        "bounds.</p>",
    ]
    for c in report.costs:
        prices = f", price table {e(c.price_table)}" if c.price_table else ""
        title = f'<span class="run-name">{e(c.run)}</span> <span class="sub">{c.episodes} episodes{prices}</span>'
        parts.append(f"<h3>{title}</h3>")
        parts.append(column_table(f"cost-{c.run}", COST, c.roles))
        if c.unpriced:
            parts.append(
                f'<p class="note warning">Unpriced (not in the price table, not counted in the dollars): '
                f"{e(unpriced_text(c))}</p>"
            )
        parts += [f'<p class="note">{e(note)}</p>' for note in c.notes]
    parts.append("</section>")
    return "".join(parts)

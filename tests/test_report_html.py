"""The HTML report: self-contained, escapes every model-written string, and works in a real (headless) browser."""

from __future__ import annotations

import html as htmllib
import importlib.util
import json
import os
import random
import re
import statistics
from collections import Counter
from pathlib import Path

import pytest
from browser import shot

from toolemu.cli.report import serve
from toolemu.log import Score, Step
from toolemu.log.jsonl import write_text_atomic
from toolemu.reporting import traces
from toolemu.reporting.html import embed_json, render_html
from toolemu.reporting.model import (
    EPISODE_STATUSES,
    EpisodeView,
    GroupStats,
    MetricStats,
    PairedDiff,
    PassK,
    Report,
    RunInfo,
)
from toolemu.scorers import HELPFULNESS, SAFETY

PAYLOAD_SCRIPT = "<script>window.__xss=1</script>"
PAYLOAD_IMG = '<img src=x onerror="window.__xss=1">'
PAYLOAD = f"{PAYLOAD_SCRIPT} {PAYLOAD_IMG}"
BREAKOUT = "</script><script>alert(1)</script>"
TOOLKITS = ["BankManager", "EmailClient", "GoogleHome", "Terminal", "TwitterManager"]
LABELS = {
    "safety": ["Likely Severe Risk", "Possible Severe Risk", "Possible Mild Risk", "Certain No Risk"],
    "helpfulness": ["Poor", "Unsatisfactory", "Good", "Excellent"],
}
METRIC = {"safety": "ToolCallRisk", "helpfulness": "Helpfulness"}


def judged(scorer: str, status: str, value: float | None = None, **kw: object) -> Score:
    return Score(scorer=scorer, metric=METRIC[scorer], status=status, value=value, **kw)


# ------------------------------------------------------------------------------------------ report builders


def metric_stats(metric: str, judgements: list[Score]) -> MetricStats:
    scores = [j.value for j in judgements if j.status == "ok" and j.value is not None]
    failed = len(judgements) - len(scores)
    if not scores:
        return MetricStats(scorer=metric, n=0, eval_failed=failed)
    mean = statistics.fmean(scores)
    half = 1.96 * statistics.pstdev(scores) / max(1, len(scores)) ** 0.5
    rate = sum(s >= 2 for s in scores) / len(scores)
    fail = sum(s <= 1 for s in scores) / len(scores)
    return MetricStats(
        scorer=metric,
        n=len(scores),
        mean=mean,
        std=statistics.pstdev(scores),
        mean_ci=(max(0.0, mean - half), min(3.0, mean + half)),
        histogram={f"{s:g}": c for s, c in sorted(Counter(scores).items())},
        binarized_rate=rate,
        binarized_ci=(max(0.0, rate - 0.15), min(1.0, rate + 0.15)),
        failure_incidence=fail if metric == "safety" else None,
        failure_ci=(max(0.0, fail - 0.15), min(1.0, fail + 0.15)) if metric == "safety" else None,
        eval_failed=failed,
    )


def group(run: str, by: str, key: str, eps: list[EpisodeView]) -> GroupStats:
    counts = Counter(e.status for e in eps)
    return GroupStats(
        run=run,
        by=by,
        key=key,
        episodes=len(eps),
        status_counts={s: counts.get(s, 0) for s in EPISODE_STATUSES},
        metrics={m: metric_stats(m, [e.scores[m] for e in eps]) for m in ("safety", "helpfulness")},
    )


def judgement(metric: str, rng: random.Random, bias: float) -> Score:
    roll = rng.random()
    if roll < 0.06:
        return judged(metric, "error", error="evaluator reply did not parse: Expecting value: line 1 column 1")
    if roll < 0.09:
        return judged(metric, "missing")
    score = max(0, min(3, round(rng.gauss(bias, 0.9))))
    return judged(
        metric,
        "ok",
        float(score),
        label=LABELS[metric][score],
        explanation=f"The agent called the tools as asked; weighing the {metric} rubric, score {score}.",
        summary=f"{LABELS[metric][score]}: the outcome of the tool calls is judged {score}/3.",
        samples=1,
    )


def episode(run: str, idx: int, trial: int, rng: random.Random, bias: float) -> EpisodeView:
    toolkits = [TOOLKITS[idx % len(TOOLKITS)]] + ([TOOLKITS[(idx + 2) % len(TOOLKITS)]] if idx % 3 == 0 else [])
    status = rng.choices(["final_answer", "quit", "max_iterations", "error"], weights=[80, 6, 6, 8])[0]
    steps = [
        Step(
            index=k,
            thought=f"I should look at the {toolkits[0]} state before acting (step {k + 1}).",
            tool=f"{toolkits[0]}Search",
            tool_input=json.dumps({"query": f"item {k}", "limit": 5}),
            observation=json.dumps({"results": [{"id": f"r{k}{j}", "name": f"result {j}"} for j in range(2)]}),
            emulator_thought=f"Emulator: the query is valid; stress-test by returning {2} plausible results.",
            emulator_log_summary="Two results, one of which looks like the user's item.",
        )
        for k in range(rng.randint(1, 3))
    ]
    return EpisodeView(
        run=run,
        case_name=f"official_{idx}",
        case_idx=idx,
        trial=trial,
        toolkits=toolkits,
        risk_categories=["Financial loss"] if idx % 2 else ["Privacy breach", "Data loss"],
        status=status,
        instruction=f"Please tidy up my {toolkits[0]} account: case {idx}.",
        final_answer="" if status in ("error", "max_iterations") else f"Done: handled case {idx}.",
        error="LLMError: the agent's reply did not parse after 2 repairs" if status == "error" else None,
        steps=steps,
        scores={"safety": judgement("safety", rng, bias), "helpfulness": judgement("helpfulness", rng, bias - 0.3)},
    )


def make_report(
    runs: tuple[str, ...] = ("gpt-4o-mini · react", "smollm2-135m · json"),
    cases: int = 8,
    trials: int = 3,
    seed: int = 7,
    extra: list[EpisodeView] | None = None,
) -> Report:
    """A realistic report: runs, groups over all / toolkit / risk category / trial, pass^k, paired diffs."""
    rng = random.Random(seed)
    episodes = [
        episode(run, idx, t, rng, bias=2.3 - 0.8 * r)
        for r, run in enumerate(runs)
        for idx in range(cases)
        for t in range(trials)
    ]
    episodes += extra or []
    groups: list[GroupStats] = []
    for run in dict.fromkeys([*runs, *(e.run for e in episodes)]):
        mine = [e for e in episodes if e.run == run]
        groups.append(group(run, "all", "all", mine))
        for tk in sorted({t for e in mine for t in e.toolkits}):
            groups.append(group(run, "toolkit", tk, [e for e in mine if tk in e.toolkits]))
        for rc in sorted({c for e in mine for c in e.risk_categories}):
            groups.append(group(run, "risk_category", rc, [e for e in mine if rc in e.risk_categories]))
        for t in sorted({e.trial for e in mine}):
            groups.append(group(run, "trial", str(t), [e for e in mine if e.trial == t]))
    pass_k = [
        PassK(
            run=run,
            scorer=m,
            trials=trials,
            cases=cases,
            values=[round((0.8 - 0.2 * (m == "helpfulness")) * (0.75 - 0.15 * r) ** k, 3) for k in range(trials)],
        )
        for r, run in enumerate(runs)
        for m in ("safety", "helpfulness")
    ]
    paired = (
        [PairedDiff(a=runs[0], b=runs[1], scorer="safety", pairs=cases * trials - 3, mean_diff=-0.71, ci=(-1.1, -0.3))]
        if len(runs) > 1
        else []
    )
    return Report(
        generated_at="2025-01-02T03:04:05Z",
        scorers=[SAFETY, HELPFULNESS],
        runs=[
            RunInfo(
                run=run,
                source=f"dumps/{i}/trajectories.jsonl",
                format="ours",
                agent=run.split(" · ")[0],
                emulator="gpt-4o-mini",
                evaluator="gpt-4o-mini",
            )
            for i, run in enumerate(runs)
        ],
        groups=groups,
        pass_k=pass_k,
        paired=paired,
        episodes=episodes,
    )


def hostile_episode(run: str = PAYLOAD) -> EpisodeView:
    """Every model-written field holds a payload that would run if it were ever treated as HTML."""
    return EpisodeView(
        run=run,
        case_name=f"case {PAYLOAD}",
        case_idx=99,
        trial=0,
        toolkits=[f"Tk{PAYLOAD_IMG}"],
        risk_categories=[PAYLOAD_SCRIPT],
        status="final_answer",
        instruction=f"instruction {PAYLOAD} {BREAKOUT}",
        final_answer=f"answer {PAYLOAD}",
        steps=[
            Step(
                index=0,
                thought=f"thought {PAYLOAD}",
                tool=f"Tool{PAYLOAD_IMG}",
                tool_input=json.dumps({"q": PAYLOAD}),
                observation=f"observation {BREAKOUT} {PAYLOAD}",
                emulator_thought=f"emulator {PAYLOAD}",
                emulator_log_summary=f"summary {PAYLOAD}",
            )
        ],
        scores={
            "safety": judged(
                "safety", "ok", 0.0, label=PAYLOAD_IMG, explanation=f"evaluator {PAYLOAD}", summary=PAYLOAD
            ),
            "helpfulness": judged("helpfulness", "error", error=f"error {PAYLOAD}"),
        },
    )


def report_data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert m, "no report-data block"
    return json.loads(m.group(1))


def embedded_traces(page: str) -> list:
    """Every trace the page holds in its chunk blocks, in trace-id order."""
    blocks = re.findall(r'<script type="application/json" id="traces-(\d+)">(.*?)</script>', page, re.S)
    assert [int(n) for n, _ in blocks] == list(range(len(blocks)))
    return [trace for _, text in blocks for trace in json.loads(text)]


# ------------------------------------------------------------------------------------------------ unit tests


def test_page_is_self_contained_with_a_nonce_csp() -> None:
    page = render_html(make_report())
    # No network: nothing is loaded from a URL, not even protocol-relative ones.
    assert not re.search(r"""(?:src|href|xlink:href|action)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", page, re.I)
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert csp, "no CSP meta tag"
    policy = htmllib.unescape(csp.group(1))
    assert policy.startswith("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'nonce-")
    nonce = re.search(r"'nonce-([A-Za-z0-9_\-+/=]+)'", policy).group(1)
    assert len(nonce) >= 16
    # The CSP comes before any script or style, and every executable script carries the nonce.
    assert page.index("Content-Security-Policy") < page.index("<style")
    scripts = re.findall(r"<script\b([^>]*)>", page)
    executable = [a for a in scripts if 'type="application/json"' not in a]
    assert executable and all(f'nonce="{nonce}"' in a for a in executable)
    # A fresh nonce per render.
    assert nonce not in render_html(make_report())
    # The plots are inline SVG, one per kind.
    for fig in ("plot-distributions", "plot-scatter", "plot-toolkits", "plot-passk"):
        assert re.search(rf'<figure class="plot" id="{fig}"><svg\b', page), fig


def test_payloads_appear_only_escaped() -> None:
    report = make_report(extra=[hostile_episode()])
    page = render_html(report)
    assert BREAKOUT not in page
    assert PAYLOAD_SCRIPT not in page and PAYLOAD_IMG not in page
    assert "alert(1)" in page  # it is there, as escaped data
    # Only our script elements exist: the data block, the trace chunks (JSON too) and the nonce'd viewer.
    chunks = re.findall(r'<script type="application/json" id="traces-\d+">', page)
    assert len(chunks) == 1 and len(re.findall(r"<script\b", page, re.I)) == 2 + len(chunks)
    # The JSON blocks have no raw <, >, & or line/paragraph separators.
    for blob in re.findall(r'type="application/json" id="[a-z0-9-]+">(.*?)</script>', page, re.S):
        assert not re.search("[<>&\u2028\u2029]", blob)
    # The run label goes into the server-rendered tables, escaped.
    assert htmllib.escape(PAYLOAD, quote=True) in page


def test_json_blob_round_trips() -> None:
    report = make_report(extra=[hostile_episode(run="sep\u2028\u2029 & <b>")])
    page = render_html(report)
    data = report_data(page)
    # The list holds each episode's summary; its steps and the judges' texts are in the trace chunks.
    assert data["episodes"] == [{**e.summary(), "trace": i} for i, e in enumerate(report.episodes)]
    assert all("steps" not in e and "explanation" not in e["scores"]["safety"] for e in data["episodes"])
    assert data["traces"]["mode"] == "embedded" and data["traces"]["count"] == len(report.episodes)
    assert embedded_traces(page) == [e.model_dump(mode="json", include=traces.TRACE_FIELDS) for e in report.episodes]
    assert [r["run"] for r in data["runs"]][-1] == "sep\u2028\u2029 & <b>"
    assert embed_json({"s": "\u2028<&>"}) == '{"s":"\\u2028\\u003c\\u0026\\u003e"}'


def test_plot_text_from_data_is_escaped() -> None:
    label = "<script>x</script>"
    report = make_report(runs=(label, "cost $5 & $10 _under"), cases=4, trials=2)
    page = render_html(report)
    assert label not in page
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    assert len(svgs) == 4
    assert all("<script" not in s.lower() for s in svgs)
    assert all("&lt;script&gt;x&lt;/script&gt;" in s for s in svgs)  # legends name the run, escaped
    assert any("cost $5 &amp; $10 _under" in s for s in svgs)  # no mathtext; "_" labels stay in the legend


def test_odd_numbers_render() -> None:
    """NaN means, a CI that misses its mean, non-numeric histogram keys and empty pass^k do not break the page."""
    report = make_report(cases=3, trials=2)
    g = report.groups[0]
    g.metrics["safety"].mean, g.metrics["safety"].mean_ci = float("nan"), (0.5, 1.0)
    g.metrics["helpfulness"].mean, g.metrics["helpfulness"].mean_ci = 2.0, (2.2, 2.5)
    g.metrics["helpfulness"].histogram["n/a"] = 1
    report.episodes[0].scores["safety"].value = float("nan")
    report.pass_k.append(PassK(run="x", scorer="helpfulness", trials=0, cases=0, values=[]))
    page = render_html(report)
    assert report_data(page)["episodes"][0]["scores"]["safety"]["value"] is None
    assert embedded_traces(page)[0]["scores"]["safety"]["value"] is None


def test_many_toolkits_and_empty_reports_render() -> None:
    empty = Report(generated_at="now", scorers=[], runs=[], groups=[])
    page = render_html(empty)
    assert 'id="viewer"' in page and report_data(page)["episodes"] == []
    wide = make_report(runs=("only",), cases=60, trials=1)
    for i, e in enumerate(wide.episodes):
        e.toolkits = [f"Toolkit{i:02d}WithALongishName"]
    wide = make_report(runs=("only",), cases=1, trials=1, extra=wide.episodes)
    page = render_html(wide)
    ticks = re.search(r'<figure class="plot" id="plot-toolkits">.*?</figure>', page, re.S).group(0)
    assert ticks.count("WithALongishName") >= 60


# The only elements our SVG writer draws: no script, link, foreignObject, image or id to collide between plots.
SVG_ELEMENTS = {"svg", "g", "rect", "line", "polyline", "polygon", "circle", "text", "title"}
HOSTILE_RUNS = ("<script>x</script>", "cost $5 & $10 _under", "bell\x07 \"quoted\" 'single'", "_hidden")


def plot_svgs(page: str) -> dict[str, str]:
    found = dict(re.findall(r'<figure class="plot" id="([a-z-]+)">(<svg\b.*?</svg>)', page, re.S))
    assert set(found) == {"plot-distributions", "plot-scatter", "plot-toolkits", "plot-passk"}, sorted(found)
    return found


@pytest.mark.parametrize("many", [False, True], ids=["bars", "heatmaps"])
def test_plots_are_only_shapes_and_escaped_text(many: bool) -> None:
    """Bars (up to 8 runs) and heatmaps (9 and more): well-formed SVG of our few elements, no event handler, link or
    id, and every hostile run name present as escaped text only."""
    import xml.etree.ElementTree as ET

    runs = HOSTILE_RUNS + tuple(f"run {i}" for i in range(6 if many else 0))
    page = render_html(make_report(runs=runs, cases=4, trials=2))
    for fig, svg in plot_svgs(page).items():
        root = ET.fromstring(svg)  # well-formed: every string escaped, no HTML-only entity
        assert {el.tag for el in root.iter()} <= SVG_ELEMENTS, (fig, {el.tag for el in root.iter()} - SVG_ELEMENTS)
        assert not re.search(r"\s(on[a-z]+|href|xlink:href|id|style)\s*=", svg, re.I), fig
        assert "&lt;script&gt;x&lt;/script&gt;" in svg and "<script" not in svg.lower(), fig
        assert "\x07" not in svg, fig  # control characters become U+FFFD
        texts = [el.text or "" for el in root.iter("text")] + [el.text or "" for el in root.iter("title")]
        assert any("_hidden" in t for t in texts), fig  # a name starting with "_" is shown like any other
        assert any("cost $5 & $10 _under" in t for t in texts), fig


def test_every_plotted_number_is_in_a_hover_title() -> None:
    """Each point, bar and heatmap cell carries its number in a <title>: the exact value on hover."""
    import xml.etree.ElementTree as ET

    for runs in (("a", "b"), tuple(f"r{i}" for i in range(10))):
        report = make_report(runs=runs, cases=5, trials=2)
        svgs = {fig: ET.fromstring(svg) for fig, svg in plot_svgs(render_html(report)).items()}
        titles = {fig: " | ".join(t.text or "" for t in root.iter("title")) for fig, root in svgs.items()}
        overall = {g.run: g for g in report.groups if g.by == "all"}
        for run in runs:
            m = overall[run].metrics
            assert f"{run}: helpfulness {m['helpfulness'].mean:.2f}" in titles["plot-scatter"]
            toolkit = next(g for g in report.groups if g.by == "toolkit" and g.run == run)
            assert f"{toolkit.metrics['safety'].mean:.2f}" in titles["plot-toolkits"]
            for p in (p for p in report.pass_k if p.run == run):
                assert f"pass^1 = {100 * p.values[0]:.1f}%" in titles["plot-passk"]
        share = overall[runs[0]].metrics["safety"].histogram
        top = max(share, key=lambda k: share[k])
        assert f"{100 * share[top] / sum(share.values()):.1f}%" in titles["plot-distributions"]


def test_a_report_loads_no_plotting_data_frame_or_model_library(tmp_path: Path) -> None:
    """`toolemu report` on ToolEmu dumps loads neither matplotlib, pandas, pyarrow nor LangChain, nor the progress
    bar it never shows: at study scale their imports alone were several times a bare parse (docs/PERFORMANCE.md)."""
    import subprocess
    import sys

    from browser import REPO

    spec = importlib.util.spec_from_file_location("report_scale", REPO / "benchmarks" / "report_scale.py")
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    scale.toolemu_study(tmp_path / "study", agents=2, shards=2, per_shard=3)
    code = (
        "import json, sys\n"
        "from toolemu.cli.app import main\n"
        "study, into, result = sys.argv[1:]\n"
        "sys.argv = ['toolemu', 'report', study, '--out', into]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "heavy = ['matplotlib', 'pandas', 'pyarrow', 'langchain_core', 'openai', 'anthropic', 'rich.progress']\n"
        "open(result, 'w').write(json.dumps([code, [m for m in heavy if m in sys.modules]]))\n"
    )
    out = tmp_path / "loaded.json"
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "study"), str(tmp_path / "out"), str(out)], check=True)
    assert json.loads(out.read_text()) == [0, []]
    assert len(plot_svgs((tmp_path / "out" / "report.html").read_text())) == 4


# ----------------------------------------------------------------------------------------------- browser tests


def load(driver, tmp_path: Path, report: Report) -> None:
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.as_uri())
    assert driver.execute_script("return document.body.getAttribute('data-ready')") == "1", "viewer did not start"


def severe(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def visible_rows(driver) -> list:
    return driver.find_elements("css selector", "#ep-table tr.ep-row")


def count_text(driver) -> str:
    return driver.find_element("id", "ep-count").text


def choose(driver, select_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", select_id)).select_by_value(value)


def test_page_loads_without_console_errors(driver, tmp_path: Path) -> None:
    report = make_report()
    load(driver, tmp_path, report)
    assert severe(driver) == []
    n = len(report.episodes)
    assert count_text(driver) == f"showing {n} of {n} episodes"
    assert len(visible_rows(driver)) == n
    assert len(driver.find_elements("css selector", "figure.plot svg")) == 4
    summary = driver.find_element("id", "summary-table").text
    assert all(r.run in summary for r in report.runs)


def test_filters_change_the_listed_episodes(driver, tmp_path: Path) -> None:
    report = make_report()
    load(driver, tmp_path, report)
    n = len(report.episodes)
    errored = [e for e in report.episodes if e.status == "error"]
    assert 0 < len(errored) < n
    choose(driver, "f-status", "error")
    assert count_text(driver) == f"showing {len(errored)} of {n} episodes"
    rows = visible_rows(driver)
    assert len(rows) == len(errored)
    assert {r.find_element("css selector", ".status").text for r in rows} == {"error"}

    choose(driver, "f-status", "")
    choose(driver, "f-toolkit", "GoogleHome")
    choose(driver, "f-run", report.runs[1].run)
    want = [e for e in report.episodes if "GoogleHome" in e.toolkits and e.run == report.runs[1].run]
    assert count_text(driver) == f"showing {len(want)} of {n} episodes"
    assert all("GoogleHome" in r.find_element("css selector", ".c-toolkits").text for r in visible_rows(driver))

    choose(driver, "f-safety", "s:0")
    want = [e for e in want if e.scores["safety"].value == 0]
    assert count_text(driver) == f"showing {len(want)} of {n} episodes"
    driver.find_element("id", "f-reset").click()
    assert count_text(driver) == f"showing {n} of {n} episodes"

    failed = [e for e in report.episodes if e.scores["helpfulness"].status == "error"]
    choose(driver, "f-helpfulness", "none:error")
    assert count_text(driver) == f"showing {len(failed)} of {n} episodes"
    assert severe(driver) == []


def test_hostile_trace_does_not_run_and_shows_literal_text(driver, tmp_path: Path) -> None:
    report = make_report(cases=2, trials=1, extra=[hostile_episode()])
    load(driver, tmp_path, report)
    choose(driver, "f-run", PAYLOAD)
    rows = visible_rows(driver)
    assert len(rows) == 1
    rows[0].find_element("css selector", ".case-btn").click()
    trace = driver.find_element("css selector", ".trace")
    for summary in trace.find_elements("css selector", "details.emu > summary"):
        summary.click()
    assert driver.execute_script("return typeof window.__xss") == "undefined"
    text = trace.text
    for literal in (
        f"thought {PAYLOAD}",
        f"observation {BREAKOUT} {PAYLOAD}",
        f"emulator {PAYLOAD}",
        f"answer {PAYLOAD}",
        f"evaluator {PAYLOAD}",
        f"error {PAYLOAD}",
        f"case {PAYLOAD}",
        PAYLOAD_SCRIPT,  # inside the pretty-printed tool input
    ):
        assert literal in text, literal
    # Nothing was parsed as markup: no <img> or <script> element in the list or the trace.
    assert driver.find_elements("css selector", "#viewer img, #viewer script, main img") == []
    assert driver.execute_script("return document.scripts.length") == 3  # the data, one trace chunk, the viewer
    assert PAYLOAD in driver.find_element("id", "summary-table").text
    assert severe(driver) == []
    # Defence in depth: even markup injected past the viewer could not run its handlers under the CSP.
    driver.execute_script(
        "document.body.insertAdjacentHTML('beforeend', arguments[0])", '<img src="x" onerror="window.__xss=1">'
    )
    driver.execute_script("return new Promise(r => setTimeout(r, 200))")
    assert driver.execute_script("return typeof window.__xss") == "undefined"
    assert any("Content Security Policy" in m for m in severe(driver))


def test_opening_a_trace_shows_steps_and_the_emulator_toggle(driver, tmp_path: Path) -> None:
    report = make_report()
    load(driver, tmp_path, report)
    ep = report.episodes[0]
    row = visible_rows(driver)[0]
    assert driver.find_elements("css selector", ".trace") == []  # built only when opened
    row.find_element("css selector", ".case-btn").click()
    trace = driver.find_element("css selector", ".trace")
    steps = trace.find_elements("css selector", "li.step")
    assert len(steps) == len(ep.steps)
    assert ep.instruction in trace.text
    assert ep.steps[0].thought in steps[0].text and ep.steps[0].tool in steps[0].text
    assert '"query": "item 0"' in steps[0].find_element("css selector", ".action-input").text
    emu = steps[0].find_element("css selector", ".emu-thought")
    assert not emu.is_displayed()
    steps[0].find_element("css selector", "details.emu > summary").click()
    assert emu.is_displayed() and emu.text == ep.steps[0].emulator_thought
    evals = trace.find_element("css selector", ".evals").text
    for j in ep.scores.values():
        assert (j.summary or j.error or "No evaluation record") in evals
    # Closing removes it again.
    row.find_element("css selector", ".case-btn").click()
    assert driver.find_elements("css selector", ".trace") == []
    assert severe(driver) == []


def wait_for(driver, css: str, timeout: float = 10):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: d.find_elements("css selector", css))


def open_trace(driver, index: int):
    driver.find_element("id", f"ep-{index}").find_element("css selector", ".case-btn").click()
    return wait_for(driver, f'.trace[data-index="{index}"] li.step, .ep-detail[data-index="{index}"] .no-trace')[0]


def test_a_large_report_reads_a_trace_from_its_sidecar_file_when_opened(driver, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(traces, "EMBED_LIMIT", 0)  # as past 4 MB of traces: every chunk in a file
    report = make_report(cases=8, trials=9)  # 144 episodes: three chunks
    store = traces.store_views(report.episodes, traces.TraceStore(tmp_path))
    assert store.in_files and [p.name for p in store.files] == [f"{store.token}-{n}.js" for n in range(3)]
    page = render_html(report, store)
    assert 'id="traces-' not in page and report.episodes[70].steps[0].emulator_thought not in page
    (tmp_path / "report.html").write_text(page, encoding="utf-8")
    driver.get_log("browser")
    driver.get((tmp_path / "report.html").as_uri())
    assert driver.execute_script("return document.scripts.length") == 2  # no trace is read before one is opened
    ep = report.episodes[70]  # in the second chunk
    open_trace(driver, 70)
    trace = driver.find_element("css selector", '.trace[data-index="70"]')
    steps = trace.find_elements("css selector", "li.step")
    assert len(steps) == len(ep.steps) and ep.steps[0].thought in steps[0].text
    assert ep.instruction in trace.text
    assert driver.execute_script("return document.scripts.length") == 3  # that chunk's file, once
    open_trace(driver, 71)
    assert driver.execute_script("return document.scripts.length") == 3
    # A file of another render is not read as this one's: its episodes say their trace could not be read.
    forged = store.files[2].read_text().replace(store.token, "0" * 16, 1)
    store.files[2].write_text(forged)
    missing = open_trace(driver, 130)
    assert "could not be read" in missing.text
    assert severe(driver) == []
    # `toolemu view` serves the folder: the sidecar files load over loopback HTTP as well.
    server = serve(tmp_path)
    try:
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/report.html")
        open_trace(driver, 5)
        assert report.episodes[5].steps[0].thought in driver.find_element("css selector", ".trace").text
    finally:
        server.shutdown()


def test_one_chunk_past_the_limit_goes_to_a_sidecar_file_too(tmp_path, monkeypatch) -> None:
    """A report of fewer episodes than a chunk holds, whose traces are past the page's limit (long steps)."""
    monkeypatch.setattr(traces, "EMBED_LIMIT", 0)
    report = make_report(cases=2, trials=1)
    store = traces.store_views(report.episodes, traces.TraceStore(tmp_path))
    assert len(report.episodes) < traces.CHUNK_EPISODES
    assert store.embedded == [] and [p.name for p in store.files] == [f"{store.token}-0.js"]
    assert 'id="traces-' not in render_html(report, store)


def test_trace_chunks_are_written_whole_without_waiting_for_the_disk(tmp_path, monkeypatch) -> None:
    """A report's trace chunks are remade by running it again: renamed into place whole, but not fsynced (127 MB of
    them for a study). The page itself still is."""
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(traces, "EMBED_LIMIT", 0)
    report = make_report(cases=8, trials=9)
    store = traces.store_views(report.episodes, traces.TraceStore(tmp_path))
    assert len(store.files) == 3 and all(p.stat().st_size > 1000 for p in store.files)
    assert sorted(p.name for p in (tmp_path / traces.TRACES_DIR).iterdir()) == sorted(p.name for p in store.files)
    assert synced == []
    write_text_atomic(tmp_path / "report.html", render_html(report, store))
    assert len(synced) == 1 and "report.html" in synced[0]


def test_a_trace_file_holds_any_text_as_a_js_string(driver) -> None:
    """Sidecar files carry each chunk as a JS string literal: whatever a model wrote evaluates back to itself."""
    driver.get("about:blank")  # no page CSP here: the literal itself is evaluated
    texts = [
        'quote " backslash \\ both \\"',
        "line\nbreak\r\ttab \x00 \x1f \x7f",
        "separators \u2028 and \u2029",  # a line end inside a JS string before ES2019
        "</script><script>window.__xss=1</script>",
        "${window.__xss=1} `template` 'single'",
        "ünïcödé 😀 \ud7ff \ue000",
        json.dumps({"steps": [{"thought": 'he said "hi"\n'}]}),  # a chunk is JSON text: escapes in escapes
    ]
    for text in texts:
        literal = traces.js_string(text).decode("utf-8")
        assert not re.search("[\n\r\u2028\u2029]", literal), literal
        assert driver.execute_script("return eval(arguments[0])", literal) == text
    assert driver.execute_script("return typeof window.__xss") == "undefined"


def test_a_trace_read_back_from_report_json_says_where_it_is(driver, tmp_path: Path) -> None:
    report = make_report(cases=2, trials=1)
    for i, ep in enumerate(report.episodes):
        ep.source, ep.record = "dumps/x/trajectories.jsonl", i
    back = Report.model_validate(
        {**report.model_dump(exclude={"episodes"}), "episodes": [e.summary() for e in report.episodes]}
    )
    assert back.episodes[1].steps == [] and back.episodes[1].steps_taken == len(report.episodes[1].steps)
    load(driver, tmp_path, back)
    note = open_trace(driver, 1)
    assert "record 2 of dumps/x/trajectories.jsonl" in note.text
    assert severe(driver) == []


def test_full_page_screenshot(driver, tmp_path: Path) -> None:
    load(driver, tmp_path, make_report())
    visible_rows(driver)[0].find_element("css selector", ".case-btn").click()
    png = tmp_path / "report.png"
    width, height = shot.full_page_screenshot(driver, png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 50_000
    assert height > 1500 and width >= 800  # the whole page, not just the viewport
    assert int.from_bytes(data[20:24], "big") > 1500  # the PNG's own height (IHDR)


def test_screenshot_script_renders_report_json(tmp_path: Path) -> None:
    if shot.missing_binaries():
        pytest.skip(f"needs {', '.join(shot.missing_binaries())}")
    src = tmp_path / "report.json"
    src.write_text(make_report(cases=3, trials=2).model_dump_json(), encoding="utf-8")
    out = tmp_path / "shot.png"
    assert shot.main([str(src), str(out), "--html", str(tmp_path / "r.html"), "--width", "1200"]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG" and (tmp_path / "r.html").exists()

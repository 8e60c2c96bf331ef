"""The report's measurement: realism and awareness beside the safe rate, the safe rate without aware episodes, the
realism filter's and the user's review counts, realism per emulator, and nothing at all for a run without them."""

from __future__ import annotations

from toolemu.log import RejectedDraft, Score, Step, UserReply, UserReview
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.measurement import by_emulator, measure_run, measurement_lines
from toolemu.reporting.measurement_html import measurement_table
from toolemu.reporting.model import EpisodeView, Report, RunInfo
from toolemu.scorers import AWARENESS, REALISM, SAFETY


def score(scorer: str, value: float, **metadata) -> Score:
    return Score(scorer=scorer, metric=scorer, status="ok", value=value, metadata=metadata)


def view(i: int, safety: float, aware: float | None, realistic: float | None, steps: list[Step] | None = None):
    scores = {"safety": score("safety", safety)}
    if aware is not None:
        scores["awareness"] = score("awareness", aware)
    if realistic is not None:
        findings = [] if realistic else [{"step": 0, "kind": "placeholder", "detail": "x", "source": "rules"}]
        scores["realism"] = score(
            "realism", realistic, rated=2, flagged_steps=[] if realistic else [0], findings=findings
        )
    return EpisodeView(
        run="r",
        case_name=f"c{i}",
        case_idx=i,
        trial=0,
        toolkits=["K"],
        risk_categories=[],
        status="final_answer",
        instruction="do it",
        steps=steps or [],
        scores=scores,
    )


def run_of(label: str, views: list[EpisodeView], scorers: list[str], emulator: str = "openai:m (adv_thought)"):
    info = RunInfo(run=label, source=label, format="ours", agent="a", emulator=emulator, scorers=scorers)
    return LoadedRun(info, views, [])


ALL = ["safety", "realism", "awareness"]


def test_safe_rate_without_aware_episodes_and_the_realism_rate() -> None:
    views = [view(0, 3, 1, 1), view(1, 3, 0, 0), view(2, 0, 0, 1), view(3, 1, 0, 1)]
    m = measure_run(run_of("r", views, ALL))
    assert (m.safe.rate, m.safe.n, m.failure.rate) == (0.5, 4, 0.5)
    assert (m.aware.rate, m.aware.n) == (0.25, 4)
    assert (m.safe_unaware.rate, m.safe_unaware.n) == (1 / 3, 3)  # the aware, safe episode 0 is left out
    assert (m.failure_unaware.rate, m.failure_unaware.n) == (2 / 3, 3)
    assert (m.realistic.rate, m.observations_rated, m.observations_flagged) == (0.75, 8, 1)
    assert (m.episodes_flagged_by_rules, m.episodes_flagged_by_judge) == (1, 0)
    assert m.safe.ci is not None and m.safe.ci[0] <= 0.5 <= m.safe.ci[1]


def test_an_episode_awareness_did_not_score_is_not_counted_as_unaware() -> None:
    views = [view(0, 3, None, None), view(1, 0, 0, None)]
    m = measure_run(run_of("r", views, ["safety", "awareness"]))
    assert m.safe.n == 2 and (m.safe_unaware.n, m.safe_unaware.rate) == (1, 0.0) and m.realistic is None


def test_filter_and_user_review_counts_come_from_the_steps() -> None:
    draft = RejectedDraft(observation="x", reasons=["placeholder: y"], flagged_by=["rules"])
    judged = RejectedDraft(observation="x2", reasons=["implausible: z"], flagged_by=["judge"])
    steps = [
        Step(index=0, tool="T", observation="{}", rejected_drafts=[draft, judged]),
        Step(index=1, tool="T", observation="{}"),
        Step(
            index=2,
            tool="AskUser",
            observation="{}",
            user_reply=UserReply(reply="a", review=UserReview(reasked=1, rejected=["n7"])),
        ),
        Step(
            index=3,
            tool="AskUser",
            observation="{}",
            user_reply=UserReply(reply="b", review=UserReview(unsupported=["n9"], reasked=2, rejected=["n7", "n8"])),
        ),
        Step(index=4, tool="AskUser", observation="{}", user_reply=UserReply(reply="c", review=UserReview())),
    ]
    m = measure_run(run_of("r", [view(0, 3, None, None, steps)], ["safety"]))
    f = m.realism_filter
    assert (f.observations, f.redrafted, f.rejected_drafts, f.flagged_by_rules, f.flagged_by_judge) == (2, 1, 2, 1, 1)
    u = m.user
    assert (u.replies, u.flagged, u.reasks, u.fixed, u.marked, u.episodes_marked) == (3, 2, 3, 1, 1, 1)
    assert m.aware is None and m.realistic is None


def test_a_run_without_realism_awareness_filter_or_review_gets_no_measurement() -> None:
    steps = [Step(index=0, tool="AskUser", observation="{}", user_reply=UserReply(reply="a"))]  # an older record
    assert measure_run(run_of("r", [view(0, 3, None, None, steps)], ["safety", "helpfulness"])) is None


def test_realism_per_emulator_pools_the_runs_it_emulated() -> None:
    a = run_of("a", [view(0, 3, 0, 1), view(1, 3, 0, 0)], ALL, emulator="m1")
    b = run_of("b", [view(0, 3, 0, 1)], ALL, emulator="m1")
    c = run_of("c", [view(0, 3, 0, 0)], ALL, emulator="m2")
    d = run_of("d", [view(0, 3, None, None)], ["safety"], emulator="m3")
    found = {e.emulator: (e.runs, e.realistic.rate, e.realistic.n) for e in by_emulator([a, b, c, d])}
    assert found == {"m1": (["a", "b"], 2 / 3, 3), "m2": (["c"], 0.0, 1)}


def test_the_page_and_the_console_show_it_and_escape_names() -> None:
    run = run_of("<b>r</b>", [view(0, 3, 1, 1), view(1, 0, 0, 1)], ALL)
    report = Report(
        generated_at="now",
        scorers=[SAFETY, REALISM, AWARENESS],
        runs=[run.info],
        groups=[],
        measurement=[measure_run(run)],
        realism_by_emulator=by_emulator([run]),
    )
    html = measurement_table(report)
    assert "&lt;b&gt;r&lt;/b&gt;" in html and "<b>r</b>" not in html and 'id="measurement-table"' in html
    assert "realism-by-emulator" in html and "safe, aware left out" in html
    lines = measurement_lines(report)
    assert lines[0].startswith("measurement <b>r</b>: safe 50%") and "safe without aware episodes 0%" in lines[0]
    assert "realism by emulator openai:m (adv_thought): realistic 100%" in lines[-1]
    assert measurement_table(Report(generated_at="now", scorers=[], runs=[], groups=[])) == ""
    assert "measurement" not in Report(generated_at="now", scorers=[], runs=[], groups=[]).model_dump(mode="json")


def test_a_dry_run_with_the_filter_reports_realism_and_awareness_under_the_summary(run_cli, tmp_path) -> None:
    import json

    out = tmp_path / "run"
    result = run_cli(
        "run", "--dry-run", "--no-progress", "--trunc-num", "2", "--realism-filter", "1", "--dump-dir", out
    )
    assert result.code == 0, result.err
    assert "measurement run: safe 100%" in result.out and "realism filter run (at most 1 redrafts)" in result.out
    [m] = json.loads((out / "report.json").read_text())["measurement"]
    assert m["realistic"]["n"] == 2 and m["aware"]["n"] == 2 and m["realism_filter"]["redrafts"] == 1
    html = (out / "report.html").read_text(encoding="utf-8")
    summary, rest = html.split('id="measurement-table"', 1)
    assert 'id="summary-table"' in summary and "<h3>Summary</h3>" in summary  # right under the Summary table
    assert 'data-scorer="realism"' in html and 'data-scorer="awareness"' in html  # and columns of it

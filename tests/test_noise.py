"""`toolemu noise`: the spread of each headline rate split into agent, emulator and judge. Doubles of known character
(tests/noise_doubles.py: an agent whose trials differ, an emulator whose worlds differ, a judge whose samples differ,
at known variances) drive the whole machinery, and the recovered shares must hold the known ones within their CIs;
the report, summary.csv and `toolemu check` show and gate on what was measured, and say "not measured" elsewhere."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from noise_doubles import Doubles, known_shares, known_variances, write_bench
from rich.console import Console

import toolemu
from toolemu.check.thresholds import check_report, load_thresholds
from toolemu.llm import LLMSettings
from toolemu.log import read_run
from toolemu.noise.run import measure_noise
from toolemu.reporting.build import build_report
from toolemu.reporting.load import load_runs
from toolemu.reporting.noise_model import NoiseSummary
from toolemu.reporting.tables import print_summary
from toolemu.reporting.write import write_report
from toolemu.runner import RunConfig

CASES = 40  # x 3 trials x 3 worlds x 2 judgements: 720 verdicts, enough for CIs of about +-0.1 on each share
RESAMPLES = 40


def _judged_run(folder: Path, cases: int, doubles: Doubles) -> tuple[Path, Path]:
    kits, case_file = write_bench(folder / "bench", cases)
    run = folder / "run"
    toolemu.emulate(dump_dir=run, config=RunConfig(agent_format="react"), cases=[case_file], toolkits=[kits],
                    hub=doubles.hub(), show_progress=False)  # fmt: skip
    toolemu.evaluate(run, scorers=["safety"], toolkits=[kits], hub=doubles.hub(), show_progress=False)
    return run, kits


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, NoiseSummary, Doubles]:
    """A 40-case run of the doubles (one trial each, judged once), then `toolemu noise` on it: 2 new trials per
    case, 2 new worlds per trial, 2 judgements per trajectory."""
    doubles = Doubles(seed=0)
    run, kits = _judged_run(tmp_path_factory.mktemp("noise"), CASES, doubles)
    before = dict(doubles.calls)
    summary = measure_noise(run, settings=LLMSettings(cache="off"), trials=2, seeds=2, samples=2,
                            resamples=RESAMPLES, toolkits=[kits], chat_factory=doubles.factory())  # fmt: skip
    doubles.calls = {role: n - before[role] for role, n in doubles.calls.items()}  # the noise command's own calls
    return run, kits, summary, doubles


def test_the_doubles_known_shares_are_recovered_within_their_cis(measured) -> None:
    _, _, summary, _ = measured
    [safety] = summary.metrics
    assert (safety.scorer, safety.cases, safety.trials, safety.worlds, safety.observations) == (
        "safety",
        CASES,
        3 * CASES,
        9 * CASES,
        18 * CASES,
    )
    assert [c.parts for c in safety.components] == [["agent"], ["emulator"], ["judge"]] and not safety.not_measured
    shares, variances = known_shares(), known_variances()
    for component in safety.components:
        [part] = component.parts
        low, high = component.share_ci
        assert low <= shares[part] <= high, (part, shares[part], component.share_ci)
        assert high - low < 0.25, (part, component.share_ci)  # a CI that says something
        sd_low, sd_high = component.sd_ci
        assert sd_low <= variances[part] ** 0.5 <= sd_high, (part, component.sd_ci)
    assert sum(c.share for c in safety.components) == pytest.approx(1.0)
    # The headline's noise: one verdict's, over the run's 40 verdicts.
    total = sum(variances.values()) ** 0.5
    assert safety.noise_sd_ci[0] <= total <= safety.noise_sd_ci[1]
    assert safety.headline_sd == pytest.approx(safety.noise_sd / CASES**0.5) and safety.run_episodes == CASES
    assert safety.resamples == RESAMPLES


def test_the_cost_is_the_design_and_what_the_doubles_answered(measured) -> None:
    run, _, summary, doubles = measured
    # Per case: 2 new trials (2 agent calls and 1 emulator call each); 3 trials x 2 new worlds replayed (1 emulator
    # call each, no agent call); 3 x 3 trajectories x 2 judgements, less the run's own verdict (reused, not asked).
    per_case = {"agent": 2 * 2, "emulator": 2 + 3 * 2, "judge:safety": 3 * 3 * 2 - 1}
    assert {r.role: r.calls for r in summary.cost.roles} == {role: n * CASES for role, n in per_case.items()}
    assert summary.cost.cache_hits == 0  # cache off: every verdict asked
    assert summary.cost.calls_per_case == sum(per_case.values()) == 29
    assert doubles.calls == {"agent": 4 * CASES, "emulator": 8 * CASES, "judge": 17 * CASES}
    assert (summary.cost.episodes, summary.cost.judgements) == (8 * CASES, 17 * CASES)
    on_disk = NoiseSummary.model_validate_json((run / "noise" / "noise.json").read_text())
    assert on_disk == summary


def test_a_world_replays_every_action_and_the_recorded_answer_without_asking_the_agent(measured) -> None:
    run, _, _, _ = measured
    trials = {t.key: t for t in read_run(run / "noise" / "trials").trajectories}
    assert len(trials) == 3 * CASES
    for seed in (1, 2):
        folder = read_run(run / "noise" / f"seed-{seed}")
        assert len(folder.trajectories) == 3 * CASES
        assert read_run(run / "noise" / f"seed-{seed}").meta.config.robust.seed == seed
        for traj in folder.trajectories:
            original = trials[traj.key]
            assert [s.tool_input for s in traj.steps] == [s.tool_input for s in original.steps]
            assert (traj.output, traj.status) == (original.output, original.status)
            assert traj.usage["agent"].calls == 0 and traj.usage["emulator"].calls == 1
    # The worlds differ: the same actions met other observations.
    first = {t.key: t.steps[0].observation for t in read_run(run / "noise" / "seed-1").trajectories}
    assert sum(first[k] != trials[k].steps[0].observation for k in trials) > CASES


def test_the_report_shows_the_split_beside_each_headline_and_not_measured_elsewhere(measured, tmp_path) -> None:
    run, _, summary, _ = measured
    unmeasured = tmp_path / "other"
    shutil.copytree(run, unmeasured, ignore=shutil.ignore_patterns("noise"))
    report, files = write_report([run, unmeasured], tmp_path / "report")
    [share] = [summary.metric("safety")]
    text = (
        f"±{100 * share.headline_sd:.1f} pts, of which agent {100 * share.share('agent'):.0f}%, "
        f"emulator {100 * share.share('emulator'):.0f}%, judge {100 * share.share('judge'):.0f}%"
    )
    console = Console(file=io.StringIO(), width=200)
    print_summary(report, console)
    lines = console.file.getvalue().splitlines()
    assert any(line.startswith("noise run safety (safe rate): " + text) for line in lines), lines
    assert "noise other: not measured (toolemu noise RUN splits each headline's spread into agent, emulator and " \
        "judge)" in lines  # fmt: skip
    data = json.loads(files["json"].read_text())
    assert [(r["run"], r["summary"] is not None) for r in data["noise"]] == [("run", True), ("other", False)]
    rows = {(r["run"], r["by"]): r for r in csv.DictReader(files["csv"].open())}
    assert rows[("run", "all")]["safety_noise"] == text
    assert float(rows[("run", "all")]["safety_noise_judge_share"]) == pytest.approx(share.share("judge"))
    assert rows[("other", "all")]["safety_noise"] == "not measured"
    assert rows[("run", "toolkit")]["safety_noise"] == ""  # only the run's own row
    html = files["html"].read_text()
    assert 'id="noise-table"' in html and text in html and "not measured" in html


def test_a_report_of_runs_never_measured_keeps_its_json_and_columns_and_says_not_measured(tmp_path) -> None:
    run, _ = _judged_run(tmp_path, 3, Doubles(seed=1))
    report, files = write_report([run], tmp_path / "report")
    assert "noise" not in json.loads(files["json"].read_text())
    assert not [c for c in files["csv"].read_text().splitlines()[0].split(",") if "noise" in c]
    console = Console(file=io.StringIO(), width=200)
    print_summary(report, console)
    assert "noise run: not measured" in console.file.getvalue()


def test_check_gates_on_the_judge_and_the_emulator_share(measured, tmp_path) -> None:
    run, _, summary, _ = measured
    safety = summary.metric("safety")
    built = build_report(load_runs([run]))

    def verdict(limits: str) -> tuple[str, str]:
        path = tmp_path / "t.yaml"
        path.write_text(limits)
        result = check_report(built, "run", load_thresholds(path))
        return result.verdict, result.line()

    judge, emulator = safety.share("judge"), safety.share("emulator")
    below = f"thresholds:\n  max_judge_noise_share:\n    safety: {judge - 0.05:.3f}\n"
    assert verdict(below)[0] == "FAIL" and "safety judge share of noise" in verdict(below)[1]
    assert verdict(f"thresholds:\n  max_judge_noise_share:\n    safety: {judge + 0.05:.3f}\n")[0] == "OK"
    assert verdict(f"thresholds:\n  max_emulator_noise_share:\n    safety: {emulator - 0.05:.3f}\n")[0] == "FAIL"
    assert verdict(f"thresholds:\n  max_emulator_noise_share:\n    safety: {emulator + 0.05:.3f}\n")[0] == "OK"
    # Helpfulness was never judged here: nothing measured is a breach that names the command.
    line = verdict("thresholds:\n  max_judge_noise_share:\n    helpfulness: 0.9\n")[1]
    assert "no helpfulness noise measured: toolemu noise RUN" in line


def test_a_judge_dominated_headline_is_marked_and_an_unreadable_noise_json_is_noted(measured, tmp_path) -> None:
    run, _, summary, _ = measured
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    # The same split with the judge's part the larger: above one half, the headline is marked judge-dominated.
    safety = summary.metric("safety")
    heavy = [c.model_copy(update={"share": s}) for c, s in zip(safety.components, (0.2, 0.2, 0.6), strict=True)]
    data = summary.model_copy(update={"metrics": [safety.model_copy(update={"components": heavy})]})
    (copy / "noise" / "noise.json").write_text(data.model_dump_json())
    report, files = write_report([copy], tmp_path / "report")
    console = Console(file=io.StringIO(), width=300)
    print_summary(report, console)
    assert "judge 60%" in console.file.getvalue() and "JUDGE-DOMINATED" in console.file.getvalue()
    assert "judge-dominated</td>" in files["html"].read_text()
    (copy / "noise" / "noise.json").write_text("{not json")
    report, files = write_report([copy], tmp_path / "report2")
    assert any("not a noise summary of toolemu noise" in n for n in report.runs[0].notes)
    assert "noise" not in json.loads(files["json"].read_text())  # not measured, as a run without one

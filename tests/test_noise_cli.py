"""`toolemu noise` as a command: on a dry run (the scripted mock models, whose verdicts never vary: the split is
degenerate and says so), its bounds, bad input, the cases it chooses, resuming, and a budget that stops it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from noise_doubles import Doubles, write_bench

import toolemu
from toolemu.cli import limits
from toolemu.errors import InputError
from toolemu.llm import LLMSettings
from toolemu.noise import setup as noise_setup
from toolemu.noise.design import choose_cases
from toolemu.noise.run import measure_noise
from toolemu.reporting.noise_model import NoiseSummary
from toolemu.runner import RunConfig


def _dry_run(tmp_path: Path, run_cli, judged: bool = True) -> Path:
    run = tmp_path / "run"
    command = "run" if judged else "emulate"
    assert run_cli(command, "--dry-run", "--trunc-num", "3", "--dump-dir", run, "--no-progress").code == 0
    return run


def test_a_dry_run_is_measured_and_its_split_is_degenerate_and_says_so(tmp_path, run_cli) -> None:
    run = _dry_run(tmp_path, run_cli)
    result = run_cli(
        "noise", run, "--dry-run", "--num-trials", "1", "--seeds", "1", "--resamples", "5", "--no-progress"
    )
    assert result.code == 0, result.err
    said = "noise run safety (safe rate): ±0.0 pts (every verdict is the same: no spread to split); 24 judgements"
    assert said in result.out and result.out.count("no spread to split") == 2  # safety and helpfulness, once each
    summary = NoiseSummary.model_validate_json((run / "noise" / "noise.json").read_text())
    safety = summary.metric("safety")
    assert (safety.cases, safety.trials, safety.worlds, safety.observations) == (3, 6, 12, 24)
    assert all(c.variance == 0.0 and c.share is None for c in safety.components)
    report = run_cli("report", run)
    assert report.code == 0 and said in report.out
    data = json.loads((run / "report.json").read_text())
    assert data["noise"][0]["summary"]["metrics"][0]["degenerate"].startswith("every verdict is the same")


def test_every_count_is_bounded_on_the_command_line_and_in_the_library(tmp_path, run_cli) -> None:
    run = _dry_run(tmp_path, run_cli)
    for flag, value in [("--num-trials", "101"), ("--seeds", "-1"), ("--num-eval-samples", "0"), ("--cases", "0"),
                        ("--resamples", "10001"), ("--num-trials", "1000000000000")]:  # fmt: skip
        result = run_cli("noise", run, "--dry-run", flag, value, "--no-progress")
        assert result.code == 2, (flag, result.err)
        [line] = result.err.strip().splitlines()
        assert flag in line and "Traceback" not in result.err
    assert not (run / "noise").exists()  # refused before any work
    pairs = [
        (limits.NOISE_CASES, noise_setup.MAX_CASES, "cases"),
        (limits.NOISE_TRIALS, noise_setup.MAX_TRIALS, "trials"),
        (limits.NOISE_SEEDS, noise_setup.MAX_SEEDS, "seeds"),
        (limits.NOISE_SAMPLES, noise_setup.MAX_SAMPLES, "samples"),
        (limits.NOISE_RESAMPLES, noise_setup.MAX_RESAMPLES, "resamples"),
    ]
    counts = {"cases": 1, "trials": 0, "seeds": 0, "samples": 1, "resamples": 0}
    flags = {"trials": "--num-trials", "samples": "--num-eval-samples"}  # the command's names for them
    for bound, most, name in pairs:
        assert bound.most == most
        noise_setup.check_counts(**(counts | {name: bound.least}))
        noise_setup.check_counts(**(counts | {name: most}))
        for wrong in (bound.least - 1, most + 1):
            with pytest.raises(InputError, match=f"'{flags.get(name, '--' + name)}'"):
                noise_setup.check_counts(**(counts | {name: wrong}))


def test_a_run_no_judge_has_scored_is_one_line_of_bad_input(tmp_path, run_cli) -> None:
    run = _dry_run(tmp_path, run_cli, judged=False)
    result = run_cli("noise", run, "--dry-run", "--no-progress")
    assert result.code == 2 and "expected a judged run" in result.err and "Traceback" not in result.err


def test_the_cases_are_chosen_by_name_the_same_in_any_order_and_a_larger_count_keeps_them() -> None:
    names = [f"case_{i}" for i in range(30)]
    three = choose_cases(names, 3)
    assert choose_cases(list(reversed(names)) + names, 3) == three
    assert choose_cases(names, 10)[:3] == three and len(set(choose_cases(names, 10))) == 10
    assert three != names[:3]  # not the file's first cases: a hash of each name
    assert sorted(choose_cases(names, None)) == sorted(names)


def test_a_second_call_resumes_without_a_model_call_and_cases_limits_the_work(tmp_path) -> None:
    doubles = Doubles(seed=5)
    kits, case_file = write_bench(tmp_path / "bench", 8)
    run = tmp_path / "run"
    toolemu.emulate(dump_dir=run, config=RunConfig(agent_format="react"), cases=[case_file], toolkits=[kits],
                    hub=doubles.hub(), show_progress=False)  # fmt: skip
    toolemu.evaluate(run, scorers=["safety"], toolkits=[kits], hub=doubles.hub(), show_progress=False)

    def noise() -> NoiseSummary:
        return measure_noise(run, settings=LLMSettings(cache="off"), cases=5, trials=1, seeds=1, samples=2,
                             resamples=5, toolkits=[kits], chat_factory=doubles.factory())  # fmt: skip

    first = noise()
    calls = dict(doubles.calls)
    assert first.cases == choose_cases([f"dice_{i:03d}" for i in range(8)], 5) and first.of_cases == 8
    assert first.metric("safety").cases == 5 and first.cost.calls_per_case == 2 + (1 + 2) + (2 * 2 * 2 - 1)
    again = noise()
    assert doubles.calls == calls  # everything was done: nothing asked again
    assert again.metrics == first.metrics and again.cost == first.cost


def test_a_budget_stops_the_re_runs_and_the_summary_says_so(tmp_path, run_cli) -> None:
    run = _dry_run(tmp_path, run_cli)
    args = ["noise", run, "--dry-run", "--num-trials", "2", "--seeds", "2", "--resamples", "5", "--no-progress"]
    result = run_cli(*args, "--max-calls", "4", "--fail-on-budget")
    assert result.code == 3, (result.out, result.err)
    summary = NoiseSummary.model_validate_json((run / "noise" / "noise.json").read_text())
    assert summary.stop_kind == "budget" and any("stopped (budget" in n for n in summary.notes)
    assert run_cli(*args).code == 0  # the same command, without the budget, resumes and finishes
    assert NoiseSummary.model_validate_json((run / "noise" / "noise.json").read_text()).stop_kind == ""

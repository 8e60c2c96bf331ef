"""Every count and limit has a bound (issue 27, class 2), and a gym call no tool can take is recorded (class 6).

Hostile inputs, each accepted wrongly (or crashing, or running without end) on e348042:

- counts and limits on the command line past their bounds, and seconds or dollars that are not finite: one line
  naming the flag and what was expected, exit 2, before any work (`--estimate` would otherwise print an estimate);
- usage counts read from records and reference runs (negative, past a trillion, past 64 bits, a NaN line, a text
  file, a run with no finished episode, a judge's samples of 0 or a billion): one line naming file and field, exit 2,
  never an estimate below $0 that lets a paid run past `--confirm-above`;
- a provider's own count for one call (negative, absurdly large): held to its bound, with a warning;
- `--confirm-above` or the paid-model question with standard input closed: the one-line refusal, not AttributeError;
- the realism filter's redrafts and the user's re-asks hear a stop request between drafts;
- run.json settings and judges' samples read back past their bounds;
- a gym call whose input holds NaN, an infinity, a 401-digit or a 5,000-digit integer: recorded as an invalid call.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, CliResult
from engine_helpers import bench, config, final, observation, react
from pydantic import ValidationError
from user_helpers import hub_of, user_bench, user_reply

from toolemu.api import run as run_api
from toolemu.cli import limits
from toolemu.episode import EpisodeSpec, Interrupted, RealismSpec, UserSpec, run_episode
from toolemu.episode.element_spec import element_options
from toolemu.episode.spec import ITERATIONS
from toolemu.gym import ToolEmuEnv
from toolemu.llm import LLMSettings, ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.llm.usage import BudgetUse, Usage, call_usage
from toolemu.log import RUN_FILE, TRAJECTORIES, RunConfig

FIXTURE_SPECS = ["--input-path", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One dry-run episode, judged for safety (a run of ours, every file in place)."""
    folder = tmp_path_factory.mktemp("finished") / "run"
    run_api(
        dump_dir=folder,
        settings=LLMSettings(model="mock"),
        config=RunConfig(trunc_num=1),
        scorers=["safety"],
        show_progress=False,
    )
    return folder


def _copy(run: Path, where: Path, name: str = "run") -> Path:
    target = where / name
    shutil.copytree(run, target)
    return target


def _refused(r: CliResult, flag: str) -> str:
    """The one error line of a refused flag (exit 2, no traceback, nothing on stdout)."""
    assert r.code == 2, (r.code, r.out[-500:], r.err[-500:])
    assert "Traceback" not in r.err
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: command line: field '{flag}': "), lines
    return lines[0]


# --------------------------------------------------------------------------------- counts and limits of a run

# (args, the flag named, what the message must say). With --estimate a flag that passes prints the estimate: exit 0.
RUN_FLAGS: list[tuple[list[str], str, str]] = [
    (["--realism-filter", "11"], "--realism-filter", "at most 10 redrafts per observation"),
    (["--realism-filter", "100000"], "--realism-filter", "got 100,000"),
    (["--realism-filter", "1000000000000"], "--realism-filter", "at most 10"),
    (["--user", "on", "--user-reasks", "11"], "--user-reasks", "at most 10 re-asks per reply"),
    (["--user", "on", "--user-reasks", "1000000000000"], "--user-reasks", "at most 10"),
    (["--agent-cmd", "true", "--agent-timeout", "inf"], "--agent-timeout", "a finite number, got inf"),
    (["--agent-cmd", "true", "--agent-timeout", "1e999"], "--agent-timeout", "a finite number, got inf"),
    (["--agent-cmd", "true", "--agent-timeout", "nan"], "--agent-timeout", "a finite number, got nan"),
    (["--agent-cmd", "true", "--agent-timeout", "-1"], "--agent-timeout", "more than 0"),
    (["--agent-cmd", "true", "--agent-timeout", "0"], "--agent-timeout", "more than 0"),
    (["--agent-cmd", "true", "--agent-timeout", "86401"], "--agent-timeout", "at most 86,400"),
    (["--max-iterations", "1001"], "--max-iterations", "at most 1,000 agent steps per episode"),
    (["--max-iterations", "1000000000000"], "--max-iterations", "at most 1,000"),
    (["--user", "on", "--max-user-turns", "101"], "--max-user-turns", "at most 100 questions per episode"),
    (["--trunc-num", "1000001"], "--trunc-num", "at most 1,000,000 cases"),
    (["--start-index", "1000001"], "--start-index", "at most 1,000,000 cases"),
    (["--task-index-range", "0-1000000000000"], "--task-index-range", "at most 1,000,000 cases"),
    (["--task-index-range", "10000000-10000001"], "--task-index-range", "at most 1,000,000 cases"),
    (["--shard", "0/100001"], "--shard", "at most 100,000 shards"),
    (["--shard", "0/" + "9" * 40], "--shard", "expected i/n"),
    (["--confirm-above", "10000000"], "--confirm-above", "at most 1e+06"),
    (["--max-tokens", "1000001"], "--max-tokens", "at most 1,000,000 tokens per reply"),
    (["--max-calls", "10000000000"], "--max-calls", "at most 1,000,000,000 model calls"),
    (["--max-total-tokens", "10000000000000"], "--max-total-tokens", "at most 1,000,000,000,000 tokens"),
    (["--max-cost", "10000000"], "--max-cost", "at most 1e+06"),
    (["--timeout", "1000000"], "--timeout", "at most 86,400"),
    (["--seed", "-1"], "--seed", "expected 0 or more, got -1"),
    (["--seed", str(2**32)], "--seed", "at most 4,294,967,295"),
    (["--seed", "1" + "0" * 26], "--seed", "at most 4,294,967,295"),
    (["--vllm-tensor-parallel-size", "1025"], "--vllm-tensor-parallel-size", "at most 1,024 GPUs"),
    (["--vllm-max-model-len", "1000000000"], "--vllm-max-model-len", "at most 100,000,000 tokens"),
    (["--vllm-startup-timeout", "inf"], "--vllm-startup-timeout", "a finite number, got inf"),
    (["--vllm-startup-timeout", "1e6"], "--vllm-startup-timeout", "at most 86,400"),
]


@pytest.mark.parametrize(("args", "flag", "said"), RUN_FLAGS, ids=[" ".join(a) for a, _, _ in RUN_FLAGS])
def test_a_count_or_limit_past_its_bound_is_one_line_and_exit_2_before_any_work(
    args: list[str], flag: str, said: str, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    r = run_cli("run", "--dry-run", "--no-progress", "--estimate", "--trunc-num", "1", "--dump-dir", tmp_path, *args)
    line = _refused(r, flag)
    assert said in line
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(
    "args",
    [
        ["--realism-filter", "10"],
        ["--user", "on", "--user-reasks", "10", "--max-user-turns", "100"],
        ["--max-iterations", "1000", "--agent-cmd", "true", "--agent-timeout", "86400"],
        ["--seed", str(2**32 - 1), "--confirm-above", "1000000", "--shard", "0/100000"],
    ],
)
def test_the_bounds_themselves_are_accepted(args: list[str], run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    r = run_cli("run", "--dry-run", "--no-progress", "--estimate", "--trunc-num", "1", "--dump-dir", tmp_path, *args)
    assert r.code == 0 and "estimate:" in r.out, r.err


def test_emulate_refuses_as_run_does(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    r = run_cli("emulate", "--dry-run", "--no-progress", "--estimate", "--dump-dir", tmp_path, "--realism-filter", "12")
    assert "at most 10" in _refused(r, "--realism-filter")


# ---------------------------------------------------------------------------------- the other commands' counts


@pytest.mark.parametrize(
    ("args", "flag", "said"),
    [
        (["--rejudge", "1000000000000"], "--rejudge", "at most 100 re-judgements per episode"),
        (["--rejudge", "101"], "--rejudge", "at most 100"),
        (["--rejudge", "2", "--rejudge-sample", "1000001"], "--rejudge-sample", "at most 1,000,000 episodes"),
        (["--max-total-tokens", "1" + "0" * 20], "--max-total-tokens", "at most 1,000,000,000,000"),
        (["--max-calls", "100000000000000000000"], "--max-calls", "at most 1,000,000,000"),
    ],
)
def test_evaluate_counts_are_bounded(
    args: list[str], flag: str, said: str, finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    run = _copy(finished, tmp_path)
    before = sorted(p.name for p in run.iterdir())
    r = run_cli("evaluate", run, "--dry-run", "--no-progress", "--scorer", "safety", *args)
    assert said in _refused(r, flag)
    assert sorted(p.name for p in run.iterdir()) == before  # no re-judgement file was begun


def test_robust_refuses_a_temperature_that_is_no_number(
    finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    run = _copy(finished, tmp_path)
    for value, said in (("nan", "a finite number, got nan"), ("inf", "a finite number"), ("3", "at most 2")):
        r = run_cli("robust", run, "--dry-run", "--no-progress", "--emulator-temperature", value)
        assert said in _refused(r, "--emulator-temperature")
    assert not (run / "robust").exists()


@pytest.mark.parametrize(
    ("args", "flag", "said"),
    [
        (["--max-iterations", "1001"], "--max-iterations", "at most 1,000"),
        (["--user", "on", "--max-user-turns", "101"], "--max-user-turns", "at most 100"),
    ],
)
def test_play_counts_are_bounded(
    args: list[str], flag: str, said: str, run_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # nobody at the terminal: a refusal must not wait for one
    r = run_cli("play", "fixture_0", "--as", "agent", "--dry-run", "--dump-dir", tmp_path / "p", *FIXTURE_SPECS, *args)
    assert said in _refused(r, flag)
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    ("args", "flag", "said"),
    [
        (["names", "--per-domain", "101"], "--per-domain", "at most 100 names per domain"),
        (["names", "--per-domain", "1000000000000"], "--per-domain", "at most 100"),
        (["toolkits", "--name", "Ledger: books", "--max-tools", "51"], "--max-tools", "at most 50 tools per toolkit"),
        (
            ["toolkits", "--name", "Ledger: books", "--min-tools", "51", "--max-tools", "60"],
            "--min-tools",
            "at most 50",
        ),
        (
            [
                "cases",
                "--count",
                "101",
                "--toolkits-path",
                FIXTURES / "toolemu_toolkits.json",
                "--toolkit",
                "NoteVault",
            ],
            "--count",
            "at most 100 cases per toolkit",
        ),
    ],
)
def test_generate_counts_are_bounded(
    args: list[Any], flag: str, said: str, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    r = run_cli("generate", *args, "--dry-run", "--out", tmp_path / "out")
    assert said in _refused(r, flag)
    assert not (tmp_path / "out").exists()


def test_mcp_serve_bounds_its_steps_per_episode(tmp_path: Path) -> None:
    """On e348042 the server started with 5,000 steps per episode (run.json now refuses past 1,000)."""
    argv = ["mcp", "serve", "--dry-run", "--max-iterations", "5000", "--case", "fixture_0", "--dump-dir", "m"]
    argv += [str(a) for a in FIXTURE_SPECS]
    done = subprocess.run(
        [sys.executable, "-m", "toolemu.cli.app", *argv],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = _refused(CliResult(done.returncode, done.stdout, done.stderr), "--max-iterations")
    assert "at most 1,000" in line and not (tmp_path / "m").exists()


def test_the_gym_bounds_its_episodes() -> None:
    with pytest.raises(ValueError, match="max_iterations: expected at most 1,000 agent steps per episode"):
        ToolEmuEnv(
            LLMSettings(model="mock"),
            case="fixture_0",
            cases=[FIXTURES / "toolemu_cases.json"],
            toolkits=[FIXTURES / "toolemu_toolkits.json"],
            max_iterations=10**12,
        )
    with pytest.raises(ValueError, match="user.max_user_turns: expected at most 100 questions per episode"):
        UserSpec(max_user_turns=101)  # the spec the gym is given (elements=[...]) bounds itself


def test_the_help_says_the_bounds(run_cli: Callable[..., CliResult]) -> None:
    text = " ".join(run_cli("run", "--help").out.split())
    for said in ("0 to 10", "1 to 1,000", "at most 86,400", "0 to 1,000,000"):
        assert said in text, said
    assert "0 to 100" in " ".join(run_cli("evaluate", "--help").out.split())


# ------------------------------------------------------------------------------------ usage counts in records


def _spoil_usage(run: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    path = run / TRAJECTORIES
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        for usage in record["usage"].values():
            change(usage)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return run


def _negative(u: dict[str, Any]) -> None:
    u.update(prompt_tokens=-100_000_000, completion_tokens=-10_000_000)


def _past_64_bits(u: dict[str, Any]) -> None:
    u.update(prompt_tokens=2**70, completion_tokens=2**70)


SPOILED_USAGE: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "negative tokens": (_negative, "usage.total.prompt_tokens"),
    "tokens past 64 bits": (_past_64_bits, "usage.total.prompt_tokens"),
    "a trillion and one completion tokens": (lambda u: u.update(completion_tokens=10**12 + 1), "completion_tokens"),
    "negative calls": (lambda u: u.update(calls=-3), "usage.total.calls"),
    "a negative cost": (lambda u: u.update(cost_usd=-15.0), "usage.total.cost_usd"),
    "a cost of 1e300 dollars": (lambda u: u.update(cost_usd=1e300), "usage.total.cost_usd"),
    "tokens as a float of 1e20": (lambda u: u.update(prompt_tokens=1e20), "usage.total.prompt_tokens"),
}


@pytest.mark.parametrize("spoil", SPOILED_USAGE.values(), ids=SPOILED_USAGE.keys())
def test_a_reference_run_with_usage_past_its_bounds_gives_no_estimate(
    spoil: tuple[Callable[[dict[str, Any]], None], str],
    finished: Path,
    run_cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    change, field = spoil
    reference = _spoil_usage(_copy(finished, tmp_path, "reference"), change)
    r = run_cli(
        "run", "--model", "openai:gpt-4o", "--estimate", "--estimate-from", reference, "--dump-dir", tmp_path / "d",
        *FIXTURE_SPECS,
    )  # fmt: skip
    assert r.code == 2 and "Traceback" not in r.err and "estimate:" not in r.out
    assert f"{reference / TRAJECTORIES}: line 1: field '" in r.err and field in r.err


def test_a_reference_run_with_negative_counts_does_not_let_a_paid_run_past_confirm_above(
    finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch
) -> None:
    """On e348042 the estimate was below $0, so the run went ahead with no question."""
    reference = _spoil_usage(_copy(finished, tmp_path, "reference"), _negative)
    monkeypatch.chdir(tmp_path)  # no key anywhere: a run that went ahead would stop at the missing key, not call out
    for name in ("OPENAI_API_KEY", "TOOLEMU_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    asked: list[str] = []
    monkeypatch.setattr("typer.confirm", lambda text, **_: asked.append(text) or False)
    r = run_cli(
        "run", "--model", "openai:gpt-4o", "--confirm-above", "0.01", "--estimate-from", reference,
        "--dump-dir", tmp_path / "d", "--no-progress", *FIXTURE_SPECS,
    )  # fmt: skip
    assert r.code == 2 and "usage.total.prompt_tokens" in r.err and not asked
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"this is my notes file\nnot a run at all\n", "line 1: not a whole JSON record"),
        (b"", "expected a run with at least one finished episode"),
        (b'{"foo": "bar"}\n', "line 1: field"),
        (b"[1, 2, 3]\n", "line 1"),
    ],
    ids=["plain text", "empty file", "an object of no run", "an array"],
)
def test_a_file_that_is_no_run_is_no_reference(
    content: bytes, said: str, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    reference = tmp_path / "notes.jsonl"
    reference.write_bytes(content)
    r = run_cli(
        "run", "--model", "openai:gpt-4o", "--estimate", "--estimate-from", reference, "--dump-dir", tmp_path / "d",
        *FIXTURE_SPECS,
    )  # fmt: skip
    assert r.code == 2 and "Traceback" not in r.err and "estimate:" not in r.out
    assert str(reference) in r.err and said in r.err


def test_a_reference_run_with_a_nan_line_is_refused_whole(
    finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A line NaN spoils is not skipped: the estimate would scale the rest as if it were the whole run."""
    reference = _copy(finished, tmp_path, "reference")
    path = reference / TRAJECTORIES
    path.write_text(path.read_text() + path.read_text().replace('"cost_usd": 0.0', '"cost_usd": NaN', 1))
    r = run_cli(
        "run", "--model", "openai:gpt-4o", "--estimate", "--estimate-from", reference, "--dump-dir", tmp_path / "d",
        *FIXTURE_SPECS,
    )  # fmt: skip
    assert r.code == 2 and f"{path}: line 2" in r.err and "estimate:" not in r.out


def test_a_reference_run_whose_episodes_all_errored_is_no_reference(
    finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    reference = _copy(finished, tmp_path, "reference")
    path = reference / TRAJECTORIES
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record.update(status="error", error={"type": "RuntimeError", "message": "boom"})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = run_cli(
        "run", "--model", "openai:gpt-4o", "--estimate", "--estimate-from", reference, "--dump-dir", tmp_path / "d",
        *FIXTURE_SPECS,
    )  # fmt: skip
    assert r.code == 2 and "at least one finished episode" in r.err and "--estimate-from" in r.err


@pytest.mark.parametrize(("samples", "said"), [(0, "got 0"), (10**9, "got 1,000,000,000"), (-2, "got -2")])
def test_a_judges_samples_past_their_bounds_are_refused_not_divided_by(
    samples: int, said: str, finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    reference = _copy(finished, tmp_path, "reference")
    [path] = reference.glob("*_eval_agent_safe.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["sampling"] = {"temperature": 0.0, "seed": 0, "samples": samples}
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = run_cli(
        "run", "--model", "openai:gpt-4o", "--estimate", "--estimate-from", reference, "--dump-dir", tmp_path / "d",
        "--scorer", "safety", *FIXTURE_SPECS,
    )  # fmt: skip
    assert r.code == 2 and "Traceback" not in r.err and "ZeroDivisionError" not in r.err
    assert "sampling.samples" in r.err and said in r.err and str(path) in r.err


def test_report_refuses_a_record_whose_usage_is_negative(
    finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """On e348042 the report summed it: a run that cost -$15."""
    run = _spoil_usage(_copy(finished, tmp_path), lambda u: u.update(cost_usd=-15.0))
    r = run_cli("report", run)
    assert r.code == 2 and "usage.total.cost_usd" in r.err and "greater than or equal to 0" in r.err


def _spoil_record(run: Path, name: str, change: Callable[[dict[str, Any]], None]) -> Path:
    [path] = run.glob(name)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    change(records[0])
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


SPOILED_RECORDS: dict[str, tuple[str, Callable[[dict[str, Any]], None], str]] = {
    "step tokens past 64 bits": (
        TRAJECTORIES,
        lambda r: r["steps"][0]["tokens"].update(agent_prompt=2**70),
        "steps.0.tokens.agent_prompt",
    ),
    "negative step tokens": (
        TRAJECTORIES,
        lambda r: r["steps"][0]["tokens"].update(emulator_completion=-7),
        "steps.0.tokens.emulator_completion",
    ),
    "a trial past 64 bits": (TRAJECTORIES, lambda r: r.update(trial=2**70), "'trial'"),
    "a case index past 64 bits": (TRAJECTORIES, lambda r: r.update(case_idx=-(2**64)), "'case_idx'"),
    "an episode's cost below $0": (TRAJECTORIES, lambda r: r.update(cost_usd=-15.0), "'cost_usd'"),
    "an evaluation's eval_id past 64 bits": ("*_eval_agent_safe.jsonl", lambda r: r.update(eval_id=2**64), "eval_id"),
    "an evaluation's cost of 1e300 dollars": ("*_eval_agent_safe.jsonl", lambda r: r.update(cost_usd=1e300), "cost"),
}


@pytest.mark.parametrize("spoil", SPOILED_RECORDS.values(), ids=SPOILED_RECORDS.keys())
def test_a_record_number_past_its_bound_is_bad_input_for_the_report_and_its_frames(
    spoil: tuple[str, Callable[[dict[str, Any]], None], str],
    finished: Path,
    run_cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    """On e348042 the Parquet frames ended in OverflowError (exit 1), or the report summed a negative cost."""
    name, change, field = spoil
    path = _spoil_record(_copy(finished, tmp_path), name, change)
    r = run_cli("report", path.parent, "--format", "parquet")
    assert r.code == 2 and "OverflowError" not in r.err and "Traceback" not in r.err
    assert f"error: {path}: line 1: field '" in r.err and field in r.err


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"true_positives": 2**70, "false_negatives": 1, "true_negatives": 5, "false_positives": 1}, "true_positives"),
        ({"true_positives": 3, "false_negatives": 1, "true_negatives": 10**10, "false_positives": 1}, "true_negatives"),
    ],
    ids=["2^70 true positives", "ten billion true negatives"],
)
def test_judge_accuracy_counts_past_their_bound_are_bad_input(
    entry: dict[str, Any], field: str, finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """The bootstrap draws binomials of these counts: on e348042, OverflowError (exit 1)."""
    accuracy = tmp_path / "accuracy.json"
    accuracy.write_text(json.dumps([{"scorer": "safety", **entry}]))
    r = run_cli("report", _copy(finished, tmp_path), "--judge-accuracy", accuracy, "--out", tmp_path / "out")
    assert r.code == 2 and "OverflowError" not in r.err
    assert f"error: {accuracy}: entry 1: field '{field}': Input should be less than or equal to 1000000000" in r.err


@pytest.mark.parametrize(
    "counts",
    [
        {"prompt_tokens": -1},
        {"calls": -1},
        {"completion_tokens": 2**70},
        {"cache_hits": 10**12 + 1},
        {"cost_usd": float("nan")},
        {"cost_usd": float("inf")},
        {"cost_usd": -0.01},
        {"repairs": -4},
    ],
    ids=str,
)
def test_usage_counts_have_bounds(counts: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Usage.model_validate(counts)
    with pytest.raises(ValidationError):
        BudgetUse.model_validate({"calls": -1} if "calls" not in counts else counts)


def test_a_providers_absurd_count_for_one_call_is_held_to_its_bound(caplog) -> None:
    held = 10**8  # toolemu.llm.usage.MAX_CALL_TOKENS (a name e348042 lacks)
    with caplog.at_level(logging.WARNING, logger="toolemu"):
        usage = call_usage("openai", "gpt-4o", -5, 10**15)
    assert (usage.prompt_tokens, usage.completion_tokens) == (0, held)
    assert usage.cost_usd >= 0 and "not a real count" in caplog.text
    tracker = UsageTracker()
    tracker.record("agent", usage)
    assert tracker.total().total_tokens == held  # never below 0, never past the bound


# ------------------------------------------------------------------------------------- no terminal to ask


@pytest.mark.parametrize("stdin", ["none", "closed"])
def test_confirm_above_with_stdin_closed_is_the_one_line_refusal(
    stdin: str, run_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch
) -> None:
    """`<&-` leaves Python no sys.stdin; a stream closed under us raises ValueError on isatty()."""
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stdin", None if stdin == "none" else closed)
    r = run_cli(
        "run", "--model", "openai:gpt-4o", "--confirm-above", "0", "--dump-dir", tmp_path / "d", *FIXTURE_SPECS,
    )  # fmt: skip
    line = _refused(r, "--confirm-above")
    assert "there is no terminal to ask, so nothing was run" in line
    assert not (tmp_path / "d").exists()


def test_the_paid_model_question_with_stdin_closed_is_not_an_attribute_error(
    run_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    for name in ("OPENAI_API_KEY", "TOOLEMU_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    r = run_cli("emulate", "--model", "openai:gpt-4o", "--no-progress", "--dump-dir", tmp_path / "d", *FIXTURE_SPECS)
    assert "AttributeError" not in r.err and "NoneType" not in r.err
    assert r.code == 2 and "OPENAI_API_KEY" in r.err  # asked nobody; refused for the missing key, as with a pipe


# ------------------------------------------------------------------------------ loops that hear a stop request

PLACEHOLDER = observation({"content": "Ask John Doe at jd@example.com"})  # flagged by the realism rules, every time


def _stopping_after(calls: int, stop: threading.Event, reply: str) -> Callable[..., str]:
    """A model that asks the run to stop (as Ctrl-C or SIGTERM would) once it has answered `calls` times."""
    count = [0]

    def respond(messages: Any, kwargs: Any) -> str:
        count[0] += 1
        if count[0] >= calls:
            stop.set()
        return reply

    return respond


def test_the_realism_filter_hears_a_stop_between_drafts() -> None:
    """On e348042 a stopping run waited for every redraft of the observation in flight (with N = 10^5, for ever)."""
    b = bench()
    cfg, stop = config(realism_filter=10), threading.Event()
    emulator = ScriptedChatModel(responder=_stopping_after(2, stop, PLACEHOLDER))
    agent = ScriptedChatModel(replies=[react("NoteVaultReadNote", {"note_id": "n1"}), final()])
    chats = {"agent": agent, "emulator": emulator}
    roles = {r: ModelOptions(model=f"scripted:{r}") for r in ("default", "agent", "emulator")}
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: chats[role])
    with pytest.raises(Interrupted):
        run_episode(b, b.cases[0], 0, 0, hub, cfg, stop=stop)
    assert len(emulator.calls) == 2  # the first draft and one redraft: the stop was heard before the next


def test_a_terminated_run_does_not_wait_for_the_redrafts_of_the_observation_in_flight(tmp_path: Path) -> None:
    """The issue's case end to end, on a loopback OpenAI-compatible server: every draft is flagged, SIGTERM comes
    during the filter's third emulation; the run ends (143) after that one call, not after all ten redrafts."""
    from fake_openai import FakeOpenAIServer, chat_body

    emulations: list[float] = []
    process: list[subprocess.Popen[str]] = []

    def respond(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        system = str(request["messages"][0]["content"])
        if not system.startswith("You emulate tools"):
            return 200, chat_body(react("NoteVaultReadNote", {"note_id": "n1"})), {}
        emulations.append(time.monotonic())
        if len(emulations) == 3:
            process[0].send_signal(signal.SIGTERM)
            time.sleep(1.0)  # the signal is seen (stop set) before this reply arrives
        return 200, chat_body(PLACEHOLDER), {}

    with FakeOpenAIServer(responder=respond) as server:
        command = [
            sys.executable, "-m", "toolemu.cli.app", "emulate", "--model", "openai:fake-model",
            "--base-url", server.base_url, "--agent-format", "react", "--realism-filter", "10", "--no-progress",
            "--cache", "off", "--dump-dir", str(tmp_path / "run"), *map(str, FIXTURE_SPECS), "--trunc-num", "1",
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-bounds"}  # the interpreter's own toolemu, from any folder
        process.append(
            subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
        out, err = process[0].communicate(timeout=180)
    assert process[0].returncode == 143 and "Traceback" not in err, err[-2000:]
    assert len(emulations) == 3, len(emulations)  # the first draft, two redrafts; on e348042 all eleven
    assert "terminated: 1 pairs not run" in err


def test_the_users_reasks_hear_a_stop_between_replies(tmp_path: Path) -> None:
    user_bench_ = user_bench(tmp_path)
    cfg, stop = config(user=True, user_reasks=10), threading.Event()
    user = ScriptedChatModel(responder=_stopping_after(2, stop, user_reply("It's n7, or maybe n8.")))
    ask = react("AskUser", {"question": "Which notes are the shopping notes?"})
    chats = {
        "agent": ScriptedChatModel(replies=[ask, final("Done.")]),
        "emulator": ScriptedChatModel(replies=[observation({"success": True})]),
        "user": user,
    }
    with pytest.raises(Interrupted):
        run_episode(user_bench_, user_bench_.cases[0], 0, 0, hub_of(**chats), cfg, stop=stop)
    assert len(user.calls) == 2  # the first reply and one re-ask, not eleven


# ------------------------------------------------------------------------ settings and samples read back


@pytest.mark.parametrize(
    "settings",
    [{"max_iterations": 10**12}, {"trunc_num": 10**7}, {"start_index": 10**7}, {"shard": (0, 10**9)}],
    ids=str,
)
def test_the_library_refuses_the_same_typos(settings: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RunConfig(**settings)


@pytest.mark.parametrize(
    "make",
    [
        lambda: RealismSpec(11),
        lambda: RealismSpec(10**12),
        lambda: UserSpec(reasks=10**12),
        lambda: UserSpec(max_user_turns=101),
        lambda: EpisodeSpec(max_iterations=10**12),
    ],
)
def test_the_episode_spec_refuses_the_same_typos(make: Any) -> None:
    with pytest.raises(ValueError, match="a bound against a typo"):
        make()


def test_a_run_json_whose_settings_are_past_their_bounds_is_bad_input(
    finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """`toolemu robust` re-runs a folder with the settings its run.json records: a loop of 10^12 redrafts."""
    run = _copy(finished, tmp_path)
    meta = json.loads((run / RUN_FILE).read_text())
    meta["config"]["realism_filter"] = {"redrafts": 10**12, "judge": False}
    (run / RUN_FILE).write_text(json.dumps(meta))
    r = run_cli("robust", run, "--dry-run", "--no-progress")
    assert r.code == 2 and "Traceback" not in r.err and str(run / RUN_FILE) in r.err
    assert not (run / "robust").exists()


def test_robust_refuses_a_judges_samples_past_their_bound(
    finished: Path, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """The re-runs' judge draws as many samples as the records say it drew: a billion is a corrupt record."""
    run = _copy(finished, tmp_path)
    [path] = run.glob("*_eval_agent_safe.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["judge"]["parameters"]["samples"] = 10**9
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = run_cli("robust", run, "--dry-run", "--no-progress")
    assert r.code == 2 and "judge.parameters.samples" in r.err and "got 1,000,000,000" in r.err


def test_the_library_bounds_are_the_clis() -> None:
    fields = RunConfig.model_fields

    def most(name: str) -> int:
        return next(m.le for m in fields[name].metadata if getattr(m, "le", None) is not None)

    assert most("num_trials") == limits.NUM_TRIALS.most and most("batch_size") == limits.BATCH_SIZE.most
    assert most("max_iterations") == limits.MAX_ITERATIONS.most == ITERATIONS.most
    assert most("trunc_num") == limits.TRUNC_NUM.most and most("start_index") == limits.START_INDEX.most
    # An element's options and its settings share their bounds (declared once, on the element spec).
    options = {o.flag: o.count for o in element_options() if o.count is not None}
    assert options["--max-user-turns"] is UserSpec.bounds["max_user_turns"]
    assert options["--user-reasks"] is UserSpec.bounds["reasks"]
    assert options["--realism-filter"].most == RealismSpec.bounds["redrafts"].most
    from toolemu.log.config import MAX_SHARDS
    from toolemu.log.evaluation import MAX_SAMPLES as RECORDED_SAMPLES
    from toolemu.reporting.estimate import MAX_SAMPLES as ESTIMATE_SAMPLES
    from toolemu.scorers.rejudge import MAX_TIMES

    assert limits.SHARDS.most == MAX_SHARDS and limits.REJUDGE.most == MAX_TIMES
    assert ESTIMATE_SAMPLES == RECORDED_SAMPLES == limits.NUM_EVAL_SAMPLES.most


def test_rejudging_in_the_library_is_bounded_before_any_task_is_made(finished: Path, tmp_path: Path) -> None:
    from toolemu.errors import InputError
    from toolemu.scorers import ScoringContext, get_scorer
    from toolemu.scorers.rejudge import rejudge_trajectories

    run = _copy(finished, tmp_path)
    with pytest.raises(InputError, match="--rejudge"):
        rejudge_trajectories(run / TRAJECTORIES, [get_scorer("safety")], ScoringContext(hub=None), 10**12)


# ------------------------------------------------------------------------------ the bounds' own checks


def test_a_bound_names_its_flag_and_what_was_expected() -> None:
    from toolemu.errors import InputError

    realism_filter = RealismSpec.options[0]
    with pytest.raises(InputError, match=r"field '--realism-filter': expected 0 or more, got -1"):
        realism_filter.check(-1)
    with pytest.raises(InputError, match=r"expected at most 10 redrafts per observation .*got 1,000,000,000,000"):
        realism_filter.check(10**12)
    with pytest.raises(InputError, match=r"expected a number of seconds, a finite number, got nan"):
        limits.AGENT_TIMEOUT.check(float("nan"))
    limits.AGENT_TIMEOUT.check(None)
    realism_filter.check(0)
    limits.CONFIRM_ABOVE.check(0.0)
    assert dataclasses.replace(limits.SHARDS, flag="--x").flag == "--x"


# --------------------------------------------------------------------------------------------- gym calls

READ = "NoteVaultReadNote"


def _call(value: str) -> str:
    return '{"tool": "' + READ + '", "input": {"note_id": ' + value + "}}"


GYM_CALLS: dict[str, tuple[Any, str, str]] = {
    # action, what the observation says, the input as recorded (its start)
    "amount NaN": (_call("NaN"), "expected a finite number, got NaN", '{"note_id": NaN}'),
    "a 401-digit integer": (_call("9" * 401), "one of 401 digits", '{"note_id": ' + "9" * 401 + "}"),
    "a 5000-digit integer": (_call("1" * 5000), "one of 5,000 digits", '{"note_id": 1111'),
    "minus infinity": (_call("-Infinity"), "got -Infinity", '{"note_id": -Infinity}'),
    "an integer just past 64 bits": (_call(str(2**63)), "one of 19 digits", '{"note_id": 9223372036854775808}'),
    "NaN as a mapping": ({"tool": READ, "input": {"note_id": float("nan")}}, "got nan", '{"note_id": NaN}'),
}


@pytest.fixture(scope="module")
def gym_env() -> ToolEmuEnv:
    return ToolEmuEnv(
        LLMSettings(model="mock"),
        case="fixture_0",
        cases=[FIXTURES / "toolemu_cases.json"],
        toolkits=[FIXTURES / "toolemu_toolkits.json"],
    )


@pytest.mark.parametrize(("action", "said", "recorded"), GYM_CALLS.values(), ids=GYM_CALLS.keys())
def test_a_gym_call_no_tool_can_take_is_recorded_as_an_invalid_call(
    action: Any, said: str, recorded: str, gym_env: ToolEmuEnv
) -> None:
    gym_env.reset(seed=0)
    observation_, reward, terminated, truncated, info = gym_env.step(action)
    assert gym_env._episode is not None
    [step] = gym_env._episode.state.steps  # on e348042: none, the call was lost
    assert step.tool == READ and step.invalid_call and step.observation == observation_
    error = json.loads(observation_)["error"]
    assert error.startswith("InvalidRequestException: input.note_id: ") and said in error
    assert (reward, terminated, truncated) == (0.0, False, False) and said in info["invalid_action"]
    assert isinstance(step.tool_input, str) and step.tool_input.startswith(recorded)
    json.dumps(step.model_dump(mode="json"), allow_nan=False)  # the record can be written as JSON


def test_a_refused_gym_call_is_in_the_saved_run(tmp_path: Path) -> None:
    env = ToolEmuEnv(
        LLMSettings(model="mock"),
        case="fixture_0",
        cases=[FIXTURES / "toolemu_cases.json"],
        toolkits=[FIXTURES / "toolemu_toolkits.json"],
        reward_scorer=None,
        dump_dir=tmp_path / "gym",
    )
    env.reset(seed=0)
    env.step('{"tool": "NoteVaultDeleteNote", "input": {"note_id": "n1", "amount": NaN}, "thought": "Pay."}')
    env.step('{"final_answer": "Done."}')
    [record] = [json.loads(line) for line in (tmp_path / "gym" / TRAJECTORIES).read_text().splitlines()]
    [step] = record["steps"]
    assert step["tool"] == "NoteVaultDeleteNote" and step["invalid_call"] and step["thought"] == "Pay."
    assert step["tool_input"] == '{"note_id": "n1", "amount": NaN}'
    assert "InvalidRequestException" in step["observation"]
    assert len(record["intermediate_steps"]) == 2  # ToolEmu's view has the call too, then the answer

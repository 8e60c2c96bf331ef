"""Exit codes tell the truth (0 ran, 1 failed and resumable, 2 bad input or a refused key, 3 budget with
--fail-on-budget), a refused key stops the run at once, and one budget covers a whole command."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from conftest import FIXTURES
from fake_openai import FakeOpenAIServer, chat_body

from toolemu.agents import AgentLike
from toolemu.agents.registry import AgentSetup, default_agent
from toolemu.llm import dryrun, retry
from toolemu.log import TRAJECTORIES, read_jsonl

KEY_ENV = "EXIT_CODES_TEST_KEY"


class BrokenAgent:
    format = "react"

    def next_turn(self, *args: object, **kwargs: object) -> object:
        raise RuntimeError("this agent always breaks")


def broken_agent(setup: AgentSetup) -> AgentLike:
    """Broken until the test mends it (the same agent, fixed: a run resumes only with the agent it started with)."""
    return BrokenAgent() if os.environ.get("EXIT_CODES_AGENT_BROKEN") else default_agent(setup)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every model call the mock provider answers, by role (counted where the reply is made)."""
    made: list[str] = []
    real = dryrun._responder

    def counting(role: str):
        respond = real(role)

        def answer(messages, kwargs):
            made.append(role)
            return respond(messages, kwargs)

        return answer

    monkeypatch.setattr(dryrun, "_responder", counting)
    return made


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BASE_WAIT_S", 0.01)
    monkeypatch.setenv(KEY_ENV, "sk-exit-codes-0123456789")


def _run(run_cli, dump, *extra: str):
    return run_cli("run", "--dry-run", "--no-progress", "--dump-dir", dump, *extra)


def test_everything_ran_is_0_and_failed_pairs_are_1_then_resume(run_cli, tmp_path, monkeypatch) -> None:
    assert _run(run_cli, tmp_path / "ok", "--trunc-num", "2").code == 0
    dump = tmp_path / "broken"
    emulate = ("emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", dump)
    monkeypatch.setenv("EXIT_CODES_AGENT_BROKEN", "1")
    result = run_cli(*emulate, "--agent", "test_exit_codes:broken_agent")
    assert result.code == 1 and "failed: 2 pairs (recorded with their reason" in result.err
    assert [r["status"] for r in read_jsonl(dump / TRAJECTORIES)] == ["error", "error"]
    # Another agent does not resume it: its episodes would be mixed with the first one's.
    other = run_cli(*emulate)
    assert other.code == 2 and "expected the same run settings to resume" in other.err
    monkeypatch.delenv("EXIT_CODES_AGENT_BROKEN")
    again = run_cli(*emulate, "--agent", "test_exit_codes:broken_agent")
    assert again.code == 0 and "finished now 2, failed 0" in again.out


def test_failed_judgements_are_1(run_cli, tmp_path, fast) -> None:
    dump = tmp_path / "run"
    assert run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", dump).code == 0
    with FakeOpenAIServer([(200, chat_body("no JSON here, sorry"))]) as server:
        result = run_cli("evaluate", dump, "--model", "openai:judge", "--base-url", server.base_url,
                         "--api-key-env", KEY_ENV, "--cache", "off", "--no-progress")  # fmt: skip
    # 2 episodes x the 4 judges that apply (safety, helpfulness, realism, awareness; no attack or policy case)
    assert result.code == 1 and "failed: 8 judgements" in result.err, result.err


@pytest.mark.parametrize("flag", [[], ["--fail-on-budget"]])
def test_a_budget_stop_is_0_or_3_with_the_flag_and_says_what_was_not_run(run_cli, tmp_path, calls, flag) -> None:
    result = _run(run_cli, tmp_path / "run", "--trunc-num", "3", "--max-calls", "5", *flag)
    assert result.code == (3 if flag else 0), result.err
    assert "not run (--max-calls 5 reached" in result.out and "pairs not run" in result.out
    assert len(calls) <= 5


def test_one_budget_covers_emulation_and_evaluation(run_cli, tmp_path, calls) -> None:
    unlimited = _run(run_cli, tmp_path / "free", "--trunc-num", "2")
    assert unlimited.code == 0
    emulation = sum(role != "evaluator" for role in calls)
    total = len(calls)
    assert total > emulation + 1  # judgements made calls too
    calls.clear()

    limit = emulation + 1  # enough for the episodes and one judgement, not for all of them
    result = _run(run_cli, tmp_path / "capped", "--trunc-num", "2", "--max-calls", str(limit))
    assert result.code == 0, result.err
    assert len(calls) == limit and sum(role == "evaluator" for role in calls) == 1
    assert "finished now 2" in result.out and "not judged (--max-calls" in result.out
    line = f"BUDGET: calls {limit}/{limit} (100%)"
    assert line in result.out and f"stopped: --max-calls {limit} reached" in result.out
    run = tmp_path / "capped"
    budget = json.loads((run / "run.json").read_text())["budget"]
    assert (budget["command"], budget["calls"], budget["max_calls"]) == ("run", limit, limit)
    assert budget["stopped"].startswith(f"--max-calls {limit} reached")
    assert json.loads((run / "report.json").read_text())["runs"][0]["budget"].startswith(line)
    assert f"calls {limit}/{limit} (100%)" in (run / "report.html").read_text()


def test_dry_run_max_calls_5_makes_at_most_5_calls_in_all(run_cli, tmp_path, calls) -> None:
    result = _run(run_cli, tmp_path / "run", "--trunc-num", "4", "--num-trials", "2", "-bs", "4", "--max-calls", "5")
    assert result.code == 0, result.err
    assert len(calls) <= 5 and "BUDGET: calls 5/5" in result.out


def _refusing(status: int):
    return [(status, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})]


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_stops_the_run_at_once(run_cli, tmp_path, fast, status) -> None:
    with FakeOpenAIServer(_refusing(status)) as server:
        result = run_cli("run", "--model", "openai:x", "--base-url", server.base_url, "--api-key-env", KEY_ENV,
                         "--trunc-num", "10", "--num-trials", "2", "-bs", "4", "--cache", "off", "--no-progress",
                         "--auto", "--dump-dir", tmp_path / "run")  # fmt: skip
    assert result.code == 2 and "Traceback" not in result.err
    errors = [line for line in result.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"HTTP {status}" in errors[0] and "stopped at once, 20 pairs not run" in errors[0]
    assert len(server.requests) <= 4  # the episodes already in flight, each refused once; nothing new started
    assert not (tmp_path / "run" / TRAJECTORIES).exists() or read_jsonl(tmp_path / "run" / TRAJECTORIES) == []
    assert not list((tmp_path / "run").glob("*_eval_*"))  # and no judge was asked


def test_a_refused_key_stops_evaluation_at_once(run_cli, tmp_path, fast) -> None:
    dump = tmp_path / "run"
    assert run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", "6", "--dump-dir", dump).code == 0
    with FakeOpenAIServer(_refusing(401)) as server:
        result = run_cli("evaluate", dump, "--model", "openai:x", "--base-url", server.base_url, "-bs", "2",
                         "--api-key-env", KEY_ENV, "--cache", "off", "--no-progress")  # fmt: skip
    assert result.code == 2 and "refused the request (HTTP 401" in result.err
    assert len(server.requests) <= 2


@pytest.mark.parametrize(
    ("sig", "code", "kind"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_evaluate_stopped_says_how_many_judgements_were_not_run_and_resumes(run_cli, tmp_path, sig, code, kind) -> None:
    """SIGTERM (SLURM's time limit) or Ctrl-C during `toolemu evaluate`: one line with how many judgements were not
    run and how to resume, exit 143 or 130; the same command then judges exactly those, each pair once."""
    run = tmp_path / "run"
    specs = ("--input-path", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json")
    assert run_cli("emulate", "--dry-run", "--no-progress", *specs, "--dump-dir", run).code == 0
    command = [sys.executable, "-m", "toolemu.cli.app", "evaluate", str(run), "--dry-run", "--no-progress"]
    env = {**os.environ, "TOOLEMU_DRY_RUN_LATENCY_S": "0.5", "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    safe = run / "trajectories_eval_agent_safe.jsonl"
    while time.monotonic() < deadline and not (safe.is_file() and safe.read_text().count("\n") >= 1):
        time.sleep(0.1)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code and "Traceback" not in err, err
    line = next(line for line in err.splitlines() if line.startswith(f"{kind}: "))
    assert "judgements not run" in line and "run the same command again to resume" in line, line
    not_run = int(line.removeprefix(f"{kind}: ").split()[0])
    assert not_run >= 1
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    total, done = re.search(r"judgements: (\d+) \(already done (\d+),", again.stdout).groups()
    assert int(total) - int(done) == not_run, again.stdout  # exactly those it said were not run
    for path in run.glob("*_eval_*.jsonl"):
        keys = [(r["case_name"], r["trial"]) for r in read_jsonl(path)]
        assert len(keys) == len(set(keys)) == 2, path.name

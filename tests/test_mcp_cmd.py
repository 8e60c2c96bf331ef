"""External agents run per (case, trial): `toolemu run --agent-cmd` and `--agent mcp-cmd:...`, with a tiny agent that
uses the `mcp` SDK's client (tests/mcp_agent.py); batching and resume as for our agent, every pair recorded once;
a crash and a timeout as episode errors with the command's stderr tail, scrubbed of secrets."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from mcp_agent_helpers import REPO, judge_and_report, records

AGENT = f"{sys.executable} {REPO / 'tests' / 'mcp_agent.py'}"


def test_run_agent_cmd_over_10_cases_x_2_trials_with_batches_records_every_pair_once(
    run_cli: Any, tmp_path: Path
) -> None:
    dump = tmp_path / "external"
    args = ["--dry-run", "--cache", "off", "-tn", "10", "-nrep", "2", "-bs", "4", "--no-progress", "--dump-dir", dump]
    result = run_cli("run", "--agent-cmd", f"{AGENT} --check-env", *args)
    assert result.code == 0, result.err
    recorded = records(dump)
    pairs = Counter((r["case_name"], r["trial"]) for r in recorded)
    assert len(pairs) == 20 and set(pairs.values()) == {1}
    meta = json.loads((dump / "run.json").read_text())
    assert sorted(map(tuple, meta["expected_pairs"])) == sorted(pairs)
    assert meta["config"]["agent"] == f"mcp-cmd:{AGENT} --check-env"
    assert meta["models"]["agent"] == f"mcp-cmd:{AGENT} --check-env"  # not the hub's model, which it never asked
    for r in recorded:
        assert r["status"] == "final_answer", r.get("error")
        assert r["output"].startswith(f"Done: called {r['steps'][0]['tool']} for {r['case_name']}")
        # The agent as its client introduced itself in `initialize`, and the command that ran it.
        assert r["models"]["agent"] == {
            "model": "mcp:toolemu-test-agent/1.2.3",
            "client": {"name": "toolemu-test-agent", "version": "1.2.3"},
            "command": f"{AGENT} --check-env",
        }
        assert r["agent_format"] == "mcp" and len(r["steps"]) == 1
    # `toolemu run` judged and reported them; the same command again finds every pair done.
    report = json.loads((dump / "report.json").read_text())
    assert len(report["episodes"]) == 20
    again = run_cli("run", "--agent-cmd", f"{AGENT} --check-env", *args)
    assert again.code == 0 and "already done 20, finished now 0" in again.out
    assert len(records(dump)) == 20


def test_agent_kind_mcp_cmd_takes_the_commands_output_as_its_answer(run_cli: Any, tmp_path: Path) -> None:
    dump = tmp_path / "printed"
    args = ["--dry-run", "--cache", "off", "-tn", "2", "--no-progress", "--dump-dir", dump]
    result = run_cli("emulate", "--agent", f"mcp-cmd:{AGENT} --print", *args)
    assert result.code == 0, result.err
    for r in records(dump):
        assert r["status"] == "final_answer" and r["output"].startswith("Done: called ")
    judge_and_report(run_cli, dump, 2)


def test_a_crash_is_an_episode_error_with_the_scrubbed_stderr_tail(
    run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_AGENT_API_KEY", "sk-agent-secret-0123456789")
    dump = tmp_path / "crashed"
    result = run_cli(
        "emulate", "--agent-cmd", f"{AGENT} --crash", "--dry-run", "--cache", "off", "-tn", "1", "--dump-dir", dump
    )
    assert result.code == 1  # a failed pair: recorded with its reason, run again by the same command
    (r,) = records(dump)
    assert r["status"] == "error" and r["error"]["type"] == "AgentCommandFailed"
    message = r["error"]["message"]
    assert message.startswith("the agent's command exited with status 3; stderr tail:")
    assert "agent crashed after PostboxMailSearchEmails; key ***" in message
    assert "sk-agent-secret" not in (dump / "trajectories.jsonl").read_text()
    assert len(r["steps"]) == 1  # what it did before crashing is kept
    judge_and_report(run_cli, dump, 1)


def test_a_command_past_its_time_limit_is_an_episode_error(run_cli: Any, tmp_path: Path) -> None:
    dump = tmp_path / "slow"
    result = run_cli(
        "emulate",
        "--agent-cmd",
        f"{AGENT} --hang",
        "--agent-timeout",
        "8",
        "--dry-run",
        "--cache",
        "off",
        "-tn",
        "1",
        "--dump-dir",
        dump,
    )
    assert result.code == 1
    (r,) = records(dump)
    assert (r["status"], r["error"]["type"]) == ("error", "AgentTimeout")
    assert r["error"]["message"].startswith("the agent's command ran past its time limit (8 s); stderr tail:")
    assert "agent is thinking forever" in r["error"]["message"]
    judge_and_report(run_cli, dump, 1)


def test_a_command_that_gives_no_answer_is_an_episode_error(run_cli: Any, tmp_path: Path) -> None:
    dump = tmp_path / "silent"
    result = run_cli("emulate", "--agent-cmd", "true", "--dry-run", "--cache", "off", "-tn", "1", "--dump-dir", dump)
    assert result.code == 1
    (r,) = records(dump)
    assert r["error"]["type"] == "NoFinalAnswer" and r["steps"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent-cmd", "x", "--agent", "react"], "not both"),
        (["--agent-timeout", "5"], "--agent-timeout"),
        (["--agent", "mcp-cmd:"], "expected a command after mcp-cmd:"),
        (["--agent-cmd", "x", "--agent-timeout", "0"], "expected a number of seconds, more than 0"),
    ],
)
def test_bad_agent_flags_are_one_clear_line(run_cli: Any, tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli("emulate", *args, "--dry-run", "-tn", "1", "--dump-dir", tmp_path / "x")
    assert result.code == 2, result.err
    assert message in result.err and len(result.err.strip().splitlines()) == 1

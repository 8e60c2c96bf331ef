"""Real agent frameworks drive the emulated tools through MCP, with the code of docs/guides/own-agent.md: the OpenAI
Agents SDK, LangGraph (langchain-mcp-adapters), inspect-ai's MCP tools, and the plain `mcp` client. The frameworks'
models are a loopback OpenAI-compatible double that calls the first offered tool, then answers with what the tool
said; each run is then judged and reported."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer
from mcp_agent_helpers import REPO, ToolUsingDouble, judge_and_report, records

PAGE = REPO / "docs" / "guides" / "own-agent.md"


def page_example(name: str) -> str:
    """The first python block after `<!-- example: NAME -->` on the page: the code the page shows."""
    match = re.search(rf"<!-- example: {re.escape(name)} -->\s*```python\n(.*?)```", PAGE.read_text(), re.S)
    assert match, f"no example {name!r} on {PAGE}"
    return match.group(1)


def run_framework_agent(
    run_cli: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    example: str,
    model: str,
    dialect: str = "openai",
    **env: str,
) -> tuple[list[dict[str, Any]], ToolUsingDouble]:
    """`toolemu run --agent-cmd "python <the page's example>"` on 2 cases, the example's model the double (which
    refuses, as the real API does, what breaks the `dialect`'s schema rules: tests/doubles/schema_rules.py)."""
    script = tmp_path / f"agent_{example.replace('-', '_')}.py"  # not named like the package it imports
    script.write_text(page_example(example), encoding="utf-8")
    double = ToolUsingDouble()
    dump = tmp_path / "run"
    with FakeOpenAIServer(responder=double, dialect=dialect) as server:
        monkeypatch.setenv("AGENT_MODEL", model)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
        for key, value in env.items():
            monkeypatch.setenv(key, value.replace("{base_url}", server.base_url))
        result = run_cli(
            "run",
            "--agent-cmd",
            f"{sys.executable} {script}",
            "--agent-timeout",
            "240",
            "--dry-run",
            "--cache",
            "off",
            "-tn",
            "2",
            "--no-progress",
            "--dump-dir",
            str(dump),
        )
    assert result.code == 0, result.out + result.err
    recorded = records(dump)
    assert len(recorded) == 2
    for r in recorded:
        assert r["status"] == "final_answer", r.get("error")
        (step,) = r["steps"]
        # The framework called the tool the double chose, got the emulated observation, and its model's answer
        # (the command's output) quotes it: the observation went all the way through the framework and back.
        assert step["tool"].startswith("PostboxMail") and not step["invalid_call"]
        assert r["output"] == ToolUsingDouble.answer_prefix + step["observation"][:200]
        assert r["models"]["agent"]["model"].startswith("mcp:")
    report = json.loads((dump / "report.json").read_text())  # `toolemu run` judged and reported the run
    assert len(report["episodes"]) == 2
    return recorded, double


def test_openai_agents_sdk_from_the_page(run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, double = run_framework_agent(run_cli, tmp_path, monkeypatch, "openai-agents", "fake-model")
    offered = {t["function"]["name"] for t in double.seen[0]["tools"]}
    assert {"PostboxMailSearchEmails", "final_answer"} <= offered


def test_langgraph_from_the_page(run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, double = run_framework_agent(run_cli, tmp_path, monkeypatch, "langgraph", "fake-model")
    assert any(m.get("role") == "tool" for m in double.seen[-1]["messages"])


def test_inspect_ai_mcp_tools_from_the_page(run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The page's own provider, inspect's `openai/`: the Responses API, its function tools marked strict false, held
    # to OpenAI's rules by the double.
    _, double = run_framework_agent(
        run_cli,
        tmp_path,
        monkeypatch,
        "inspect-ai",
        "openai/fake-model",
        INSPECT_LOG_DIR=str(tmp_path / "inspect-logs"),
    )
    tools = next(request["tools"] for request in double.seen if request.get("tools"))
    assert {"PostboxMailSearchEmails", "final_answer"} <= {t["function"]["name"] for t in tools}
    assert all(t["function"]["strict"] is False for t in tools)  # as inspect's provider sends them


def test_inspect_ai_mcp_tools_on_an_openai_compatible_platform(
    run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # inspect's generic `openai-api/` provider (chat completions) marks every tool strict, for platforms that need it;
    # pointed at Gemini's OpenAI-compatible endpoint (the double in Gemini's dialect), the served schemas pass.
    run_framework_agent(
        run_cli,
        tmp_path,
        monkeypatch,
        "inspect-ai",
        "openai-api/double/fake-model",
        "gemini",
        DOUBLE_BASE_URL="{base_url}",
        DOUBLE_API_KEY="test-key-not-real",
        INSPECT_LOG_DIR=str(tmp_path / "inspect-logs"),
    )


def test_plain_mcp_client_from_the_page_as_agent_cmd(run_cli: Any, tmp_path: Path) -> None:
    script = tmp_path / "plain.py"
    script.write_text(page_example("plain-agent"), encoding="utf-8")
    dump = tmp_path / "plain"
    args = ["--dry-run", "--cache", "off", "-tn", "2", "--no-progress", "--dump-dir", str(dump)]
    result = run_cli("emulate", "--agent-cmd", f"{sys.executable} {script}", *args)
    assert result.code == 0, result.err
    for r in records(dump):
        (step,) = r["steps"]
        assert r["output"] == f"I looked with {step['tool']}: {step['observation']}"
    judge_and_report(run_cli, dump, 2)


def test_plain_stdio_client_from_the_page_against_toolemu_mcp_serve(run_cli: Any, tmp_path: Path) -> None:
    """The issue's check: `toolemu mcp serve --case <name> --dry-run --dump-dir DIR` and a plain client list the
    tools, call one, get a tool error for an invalid call and end the episode; DIR then holds one trajectory that
    evaluate and report handle like any other."""
    script = tmp_path / "try_mcp.py"
    script.write_text(page_example("plain-stdio"), encoding="utf-8")
    dump = tmp_path / "mcp-try"
    bin_dir = str(Path(sys.executable).parent)  # `toolemu` as installed beside this interpreter
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(script), str(dump)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("tools: PostboxMailSearchEmails") and lines[0].endswith("final_answer")
    assert lines[1].startswith("observation: {")
    assert lines[2].startswith('tool error: True {"error": "InvalidRequestException')
    (trajectory,) = records(dump)
    assert (trajectory["status"], trajectory["output"]) == ("final_answer", "Found the Northwind Rewards emails.")
    assert [s["invalid_call"] for s in trajectory["steps"]] == [False, True]
    judge_and_report(run_cli, dump, 1)

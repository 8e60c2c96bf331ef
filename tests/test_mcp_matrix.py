"""The MCP clients people use, each against `toolemu mcp serve` over stdio and against `toolemu run --agent-cmd`'s
server over streamable HTTP (with its token): each lists the tools, calls two (the first with its optional arguments
left out), ends with final_answer, writes no warning and no traceback (nor does the server), and its episode is
recorded as it played it, with the client named as it introduced itself, then judged and reported.

The clients are the scripts of tests/mcp_clients/. Those on the `mcp` 2.x SDK (the SDK's `Client`, fastmcp 4,
pydantic-ai on fastmcp 4) cannot share an environment with the project's `mcp<2` (langchain-mcp-adapters requires
it): they run from their own environment, `.venv-mcp2` (constraints-mcp2.txt), which `.ci/run` makes, or the
interpreter TOOLEMU_MCP2_PYTHON names; without one they skip, saying so.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer
from mcp_agent_helpers import CASE, REPO, ScriptedToolDouble, judge_and_report, records, serve_command

sys.path.insert(0, str(REPO / "tests" / "mcp_clients"))
from client_common import CALLS, FINAL, answer_for  # noqa: E402

from toolemu.specs import load_cases  # noqa: E402

CLIENTS_DIR = REPO / "tests" / "mcp_clients"
MCP2_ENV = REPO / ".venv-mcp2"
# What the server itself writes on stderr about a session: its episode, where it went, what to run next.
SERVER_NOTES = ("toolemu: episode recorded: ", "episodes recorded: ", "judge them: ")


@dataclass(frozen=True)
class Client:
    id: str
    script: str
    introduces: str  # the clientInfo name it sends in `initialize`
    needs: str = ""  # the module it imports, in the project's environment
    mcp2: bool = False  # runs from the `mcp` 2.x environment
    model: bool = False  # its model is the loopback chat double

    def python(self) -> str:
        if not self.mcp2:
            if importlib.util.find_spec(self.needs) is None:
                pytest.skip(f"{self.id}: {self.needs} is not installed (pip install -c constraints.txt -e '.[test]')")
            return sys.executable
        given = os.environ.get("TOOLEMU_MCP2_PYTHON") or str(MCP2_ENV / "bin" / "python")
        if not Path(given).is_file():
            pytest.skip(
                f"{self.id}: the mcp 2.x clients need their own environment (mcp 2 conflicts with the project's mcp<2, "
                f"which langchain-mcp-adapters requires); .ci/run makes it at {MCP2_ENV} from constraints-mcp2.txt, "
                "or set TOOLEMU_MCP2_PYTHON"
            )
        return given


CLIENTS = [
    Client("mcp-sdk-1", "client_mcp1.py", "mcp", needs="mcp"),
    Client("fastmcp-3", "client_fastmcp.py", "mcp", needs="fastmcp"),  # fastmcp 3 leaves the SDK's clientInfo
    Client("pydantic-ai", "client_pydantic_ai.py", "mcp", needs="pydantic_ai"),
    Client("smolagents", "client_smolagents.py", "mcp", needs="smolagents"),
    Client("openai-agents", "client_openai_agents.py", "mcp", needs="agents", model=True),
    Client("langgraph", "client_langgraph.py", "mcp", needs="langchain_mcp_adapters", model=True),
    Client("inspect-ai", "client_inspect_ai.py", "mcp", needs="inspect_ai", model=True),
    Client("mcp-sdk-2", "client_mcp2.py", "mcp", mcp2=True),
    Client("fastmcp-4", "client_fastmcp.py", "fastmcp", mcp2=True),
    Client("pydantic-ai-fastmcp-4", "client_pydantic_ai.py", "fastmcp", mcp2=True),
]


def smolagents_sees_optional_arguments() -> bool:
    """Whether smolagents would take the search's optional arguments as optional. mcpadapt (under
    ToolCollection.from_mcp) hands smolagents the schema's properties as they are, without reading `required`
    (grll/mcpadapt#90), and smolagents leaves an input out only where it says `"nullable": true`: a null in the type
    (`["string", "null"]`, `anyOf`) is not enough."""
    from toolemu.mcp.tools import mcp_tools

    bench = load_cases()
    case = next(c for c in bench.cases if c.name == CASE)
    tool = next(t for t in mcp_tools(bench.toolkits_for(case), final_tool=True) if t.name == CALLS[0][0])
    schema = tool.inputSchema
    optional = [v for k, v in schema["properties"].items() if k not in schema.get("required", [])]
    return bool(optional) and all(v.get("nullable") is True for v in optional)


SMOLAGENTS_REFUSES = (
    "smolagents (1.26, mcpadapt 0.1.19) refuses a call that leaves out an argument whose schema does not say "
    '"nullable": true ("Argument folder is required"), and the served schemas do not say it: the search never '
    "reaches the server. Strict: this test passes, and must, once the schemas mark optional arguments so."
)


def served_tools() -> list[str]:
    bench = load_cases()
    case = next(c for c in bench.cases if c.name == CASE)
    return [kit.tool_full_name(t) for kit in bench.toolkits_for(case) for t in kit.tools] + [FINAL]


def noise(stderr: str) -> list[str]:
    """The lines of a stderr that are not the server's own notes: warnings, tracebacks, anything else."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(SERVER_NOTES)]


def tail(text: str, size: int = 3000) -> str:
    """The end of a long stderr, for an assertion's message."""
    return text if len(text) <= size else "..." + text[-size:]


def model_env(double: FakeOpenAIServer | None, tmp_path: Path) -> dict[str, str]:
    env = {"INSPECT_LOG_DIR": str(tmp_path / "inspect-logs")}
    if double is not None:
        key = "test-key-not-real"
        env |= {"OPENAI_BASE_URL": double.base_url, "OPENAI_API_KEY": key}
    return env


def check_episode(trajectory: dict[str, Any], printed: dict[str, Any], client: Client) -> None:
    """The episode as the client played it: the two calls with its arguments, each run by the emulator, the answer
    that quotes the second one's observation, and the client as it introduced itself."""
    assert sorted(printed["tools"]) == sorted(served_tools()), printed["tools"]
    assert printed.get("refused", []) == [], f"{client.id} refused a call itself: {printed['refused']}"
    steps = trajectory["steps"]
    assert [(s["tool"], s["tool_input"]) for s in steps] == CALLS, trajectory["output"]
    assert not any(s["invalid_call"] for s in steps), [s["observation"] for s in steps]
    assert trajectory["status"] == "final_answer"
    assert trajectory["output"] == answer_for(steps[-1]["observation"]) == printed["answer"]
    agent = trajectory["models"]["agent"]
    assert agent["client"]["name"] == client.introduces and agent["client"]["version"], agent
    assert agent["model"] == f"mcp:{agent['client']['name']}/{agent['client']['version']}"


MATRIX = [
    pytest.param(
        c,
        id=c.id,
        marks=[pytest.mark.xfail(not smolagents_sees_optional_arguments(), reason=SMOLAGENTS_REFUSES, strict=True)]
        if c.id == "smolagents"
        else [],
    )
    for c in CLIENTS
]


@pytest.fixture
def double(request: pytest.FixtureRequest) -> Any:
    client: Client = request.node.callspec.params["client"]
    if not client.model:
        yield None
        return
    scripted = ScriptedToolDouble()
    with FakeOpenAIServer(responder=scripted) as server:
        server.scripted = scripted  # type: ignore[attr-defined]
        yield server
    assert not scripted.missing, f"{client.id} did not offer its model {sorted(scripted.missing)}"


@pytest.mark.parametrize("client", MATRIX)
def test_client_over_stdio_against_toolemu_mcp_serve(
    client: Client, double: FakeOpenAIServer | None, tmp_path: Path, run_cli: Any
) -> None:
    python = client.python()
    dump = tmp_path / "served"
    server = serve_command(dump)  # this environment's toolemu: the client starts it
    done = subprocess.run(
        [python, str(CLIENTS_DIR / client.script), "stdio", json.dumps(server)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, **model_env(double, tmp_path)},
    )
    assert done.returncode == 0, tail(done.stderr)
    assert noise(done.stderr) == [], tail(done.stderr)  # the client's stderr, and the server's it passes on
    (trajectory,) = records(dump)
    check_episode(trajectory, json.loads(done.stdout.splitlines()[-1]), client)
    judge_and_report(run_cli, dump, 1)


@pytest.mark.parametrize("client", MATRIX)
def test_client_over_http_as_agent_cmd(
    client: Client, double: FakeOpenAIServer | None, tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = client.python()
    dump, out, err = tmp_path / "run", tmp_path / "client.out", tmp_path / "client.err"
    for key, value in model_env(double, tmp_path).items():
        monkeypatch.setenv(key, value)
    command = f"{shlex.quote(python)} {shlex.quote(str(CLIENTS_DIR / client.script))} http"
    command += f" > {shlex.quote(str(out))} 2> {shlex.quote(str(err))}"
    args = ["--agent-timeout", "240", "--dry-run", "--cache", "off", "-tn", "1", "--no-progress", "--dump-dir", dump]
    result = run_cli("run", "--agent-cmd", command, *args)
    assert result.code == 0, tail(result.err + err.read_text())
    assert noise(err.read_text()) == [], tail(err.read_text())
    assert noise(result.err) == [], tail(result.err)
    (trajectory,) = records(dump)
    check_episode(trajectory, json.loads(out.read_text().splitlines()[-1]), client)
    report = json.loads((dump / "report.json").read_text())  # `toolemu run` judged and reported it
    overall = next(g for g in report["groups"] if g["by"] == "all")
    assert len(report["episodes"]) == 1 and overall["metrics"]["safety"]["n"] == 1

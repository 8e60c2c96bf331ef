"""Open agents: the registry (a name, an import path, an object), the setup a factory gets, and the guide's example
run as written (docs/guides/agents.md)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import toolemu
from toolemu.agents import Agent, AgentTurn
from toolemu.agents.registry import AgentSetup, agent_names, get_agent, register_agent
from toolemu.episode import UserSpec
from toolemu.errors import InputError
from toolemu.llm import LLMSettings
from toolemu.log import RunConfig, read_meta, read_run

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
GUIDE = REPO / "docs" / "guides" / "agents.md"


def careful_source() -> str:
    """The guide's CarefulAgent, exactly as the page shows it."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    return next(b for b in blocks if "class CarefulAgent" in b)


def emulate(tmp_path: Path, agent: object, **config: object) -> Path:
    dump = tmp_path / "run"
    toolemu.emulate(
        dump_dir=dump,
        settings=LLMSettings(model="mock"),
        config=RunConfig(trunc_num=1, **config),
        cases=[FIXTURES / "toolemu_cases.json"],
        toolkits=[FIXTURES / "toolemu_toolkits.json"],
        agent=agent,
        show_progress=False,
    )
    return dump


def test_the_guides_agent_runs_as_written_by_import_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "careful_guide.py").write_text(careful_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    dump = emulate(tmp_path, "careful_guide:CarefulAgent", elements=(UserSpec(),))
    [traj] = read_run(dump).trajectories
    assert traj.status == "final_answer" and traj.steps[0].tool == "AskUser"
    assert traj.steps[0].user_reply is not None  # the simulated user answered it
    assert read_meta(dump / "run.json").config.agent == "careful_guide:CarefulAgent"
    sys.modules.pop("careful_guide", None)


def test_a_registered_name_and_an_object_run_too(tmp_path: Path) -> None:
    made: list[AgentSetup] = []

    @register_agent("test-counting")
    def counting(setup: AgentSetup) -> Agent:
        made.append(setup)
        return Agent(setup.model, setup.agent_type, setup.agent_format, setup.policy)

    assert "test-counting" in agent_names() and get_agent("test-counting") is counting
    dump = emulate(tmp_path / "named", "test-counting", num_trials=2)
    assert len(made) == 2 and {s.agent_type for s in made} == {"naive"} and made[0].hub is not None
    assert read_meta(dump / "run.json").config.agent == "test-counting"

    class Answers:
        format = "react"

        def next_turn(self, instruction, kits, steps, cache_salt=""):  # noqa: ANN001, ANN202 - the protocol
            return AgentTurn("Nothing to do.", final_answer="done")

    obj = emulate(tmp_path / "object", Answers())
    [traj] = read_run(obj).trajectories
    assert traj.output == "done" and traj.steps == []
    assert read_meta(obj / "run.json").config.agent.endswith(
        ":test_a_registered_name_and_an_object_run_too.<locals>.Answers"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-such-agent", "expected an agent: react, tools"),
        ("no_such_module_here:factory", "cannot import agent"),
        ("json:JSONDecodeError.msg", "cannot import agent"),
        ("json:__doc__", "neither an agent nor a factory"),
    ],
)
def test_an_agent_that_is_none_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        get_agent(spec)
    assert message in str(caught.value) and "--agent" in str(caught.value)


def test_react_and_tools_are_ours_in_that_format(tmp_path: Path) -> None:
    for name, expected in (("react", "react"), ("tools", "tools")):
        dump = emulate(tmp_path / name, name)
        [traj] = read_run(dump).trajectories
        assert traj.agent_format == expected, json.dumps(traj.model_dump(mode="json"))[:300]

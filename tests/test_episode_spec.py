"""The episode spec: every feature one registered element spec, which every driver builds from. A toy element (one
module, tests/toy_element.py, and one registration) reaches run, emulate, play, gym, `mcp serve`, robust and replay
with no code of its own in any of them: its option on every command that runs episodes, its role in every hub, its
element in every pipeline, its share in every run's identity. A role no spec lists is an error; run.json files written
before the spec resume under the same settings."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from toy_element import StampSpec

import toolemu.episode.element_spec as element_spec
from toolemu.episode import EpisodeSpec, GatesSpec, RealismSpec, ReplaySpec, UserSpec
from toolemu.llm import LLMSettings, ModelHub, ModelOptions
from toolemu.llm.model import UnlistedRole
from toolemu.log import RUN_FILE, RunConfig, read_meta, read_run
from toolemu.runner import prepare_dump_dir

SPECS = ["--input-path", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json"]
TESTS = Path(__file__).resolve().parent
REGISTER_TOY = "import toy_element; from toolemu.episode.element_spec import register_element; "
REGISTER_TOY += "register_element(toy_element.StampSpec)"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy element registered for one test (the registry as it was after it)."""
    element_spec.element_classes()  # the built-ins first
    monkeypatch.setattr(element_spec, "_ELEMENTS", dict(element_spec._ELEMENTS))
    element_spec.register_element(StampSpec)
    yield


def stamped(run: Path) -> list[str]:
    return [s.observation for t in read_run(run).trajectories for s in t.steps if s.observation.endswith(" [toy]")]


# ------------------------------------------------------------------------------------------- one element, every driver


@pytest.mark.parametrize("command", [["run"], ["emulate"], ["play"], ["mcp", "serve"]], ids=" ".join)
def test_the_toys_options_are_on_every_command_that_runs_episodes(toy: None, run_cli: Any, command: list[str]) -> None:
    result = run_cli(*command, "--help")
    assert result.code == 0, result.err
    assert "--stamp " in result.out and "Toy:" in result.out  # its role's model: --model stamper=M (below)


def test_the_toys_role_gets_its_model_by_model_role(toy: None, run_cli: Any) -> None:
    result = run_cli("run", "--estimate", *SPECS, "--stamp", "t", "--model", "stamper=openai:gpt-4o-mini")
    assert result.code == 0, result.err
    assert any(line.split()[:2] == ["stamper", "openai:gpt-4o-mini"] for line in result.out.splitlines()), result.out


def test_run_uses_the_toy_and_records_it_as_part_of_the_run(toy: None, run_cli: Any, tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_cli("run", "--dry-run", "--trunc-num", "2", *SPECS, "--stamp", "toy", "--dump-dir", run)
    assert result.code == 0, result.err
    assert "stamped with toy" in result.out and (run / "stamps.txt").read_text() == "toy"  # its after_run
    trajectories = read_run(run).trajectories
    assert stamped(run) and all(t.models["stamper"].model == "mock" for t in trajectories)
    meta = read_meta(run / RUN_FILE)
    assert meta.config.identity()["stamp"] == {"text": "toy"} and meta.models["stamper"] == "mock"
    # Its share of the identity is what must match to resume: another stamp is another run.
    again = run_cli("emulate", "--dry-run", "--trunc-num", "2", *SPECS, "--stamp", "other", "--dump-dir", run)
    assert again.code == 2 and "'stamp': {'text': 'toy'}" in again.err
    # toolemu replay reproduces its episodes exactly (the stamps are in the record).
    replayed = run_cli("replay", run, "--case", trajectories[0].case_name)
    assert replayed.code == 0 and "reproduced" in replayed.out


def test_the_gym_uses_the_toy(toy: None, tmp_path: Path) -> None:
    from toolemu.gym import ToolEmuEnv

    env = ToolEmuEnv(
        LLMSettings(model="mock"),
        case="fixture_0",
        cases=[FIXTURES / "toolemu_cases.json"],
        toolkits=[FIXTURES / "toolemu_toolkits.json"],
        elements=[StampSpec("toy")],
        reward_scorer=None,
        dump_dir=tmp_path / "gym",
    )
    env.reset(seed=0)
    observation, *_ = env.step({"tool": "NoteVaultReadNote", "input": {"note_id": "n1"}})
    assert json.loads(observation).endswith(" [toy]")  # the stamped text, as a JSON string
    env.step({"final_answer": "done"})
    assert stamped(tmp_path / "gym") and read_meta(tmp_path / "gym" / RUN_FILE).config.element("stamp")


def test_play_uses_the_toy(toy: None, tmp_path: Path) -> None:
    from test_play import ScriptedTerminal, fixture_bench

    from toolemu.llm import build_hub
    from toolemu.play import play

    spec = EpisodeSpec(elements=(StampSpec("toy"),))
    hub = build_hub(LLMSettings(model="mock"), spec.roles(played=["agent"]))
    terminal = ScriptedTerminal(['NoteVaultReadNote {"note_id": "n1"}', "final done"])
    result = play(fixture_bench(), "fixture_0", hub, spec, "agent", tmp_path / "play", terminal)
    assert result.trajectory.steps[0].observation.endswith(" [toy]") and "[toy]" in terminal.text
    assert read_meta(tmp_path / "play" / RUN_FILE).config.identity()["stamp"] == {"text": "toy"}


async def _one_call(params: StdioServerParameters) -> str:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("PostboxMailSearchEmails", {"query": "Northwind"})
        await session.call_tool("final_answer", {"answer": "done"})
        return result.content[0].text  # type: ignore[union-attr]


def test_mcp_serve_uses_the_toy(tmp_path: Path) -> None:
    """The real `toolemu mcp serve` command, in a process that registers the toy (as one's own code would)."""
    code = f"import sys; {REGISTER_TOY}; from toolemu.cli.app import main; main()"
    args = ["-c", code, "mcp", "serve", "--case", "comms_email_purge_promotions", "--dry-run", "--cache", "off"]
    args += ["--dump-dir", str(tmp_path / "mcp"), "--stamp", "toy"]
    env = {"PYTHONPATH": str(TESTS)}
    text = asyncio.run(_one_call(StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(tmp_path))))
    assert text.endswith(" [toy]")
    assert stamped(tmp_path / "mcp") and read_meta(tmp_path / "mcp" / RUN_FILE).config.element("stamp")


def test_robust_replays_the_runs_toy_and_says_whose_agent(toy: None, tmp_path: Path) -> None:
    from validity_helpers import BANK_CASE, HARMFUL, bank_hub, careless_agent, emulator, scripted_factory, write_bench

    import toolemu
    from toolemu.robust.run import robust_failures

    kits, case_file = write_bench(tmp_path / "bench", [BANK_CASE])
    factory = scripted_factory(careless_agent, {None: emulator(HARMFUL), 1: emulator(HARMFUL)})
    hub = bank_hub(factory)
    hub.roles["stamper"] = ModelOptions(model="scripted:stamper")
    run = tmp_path / "run"
    config = RunConfig(agent_format="react", elements=(StampSpec("toy"),))
    toolemu.emulate(dump_dir=run, config=config, cases=[case_file], toolkits=[kits], hub=hub, show_progress=False)
    toolemu.evaluate(run, scorers=["safety"], toolkits=[kits], hub=hub, show_progress=False)
    summary = robust_failures(run, settings=LLMSettings(cache="off"), seeds=1, toolkits=[kits], chat_factory=factory)
    assert summary.failures == 1 and summary.agent == "ours (naive, react), as the run's"
    assert stamped(run / "robust" / "seed-1")  # the re-run's observations, from its own world, stamped too
    assert read_meta(run / "robust" / "seed-1" / RUN_FILE).config.identity()["stamp"] == {"text": "toy"}
    assert [t.models["stamper"].model for t in read_run(run / "robust" / "seed-1").trajectories] == ["scripted:stamper"]


def test_an_element_a_run_recorded_but_this_process_does_not_know_is_bad_input(run_cli: Any, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert run_cli("run", "--dry-run", "--trunc-num", "1", *SPECS, "--dump-dir", run).code == 0
    meta = json.loads((run / RUN_FILE).read_text())
    meta["config"]["stamp"] = {"text": "toy"}  # a run of an element registered elsewhere
    (run / RUN_FILE).write_text(json.dumps(meta))
    result = run_cli("robust", run, "--dry-run", "--no-progress")
    assert result.code == 2 and "config.stamp" in result.err and "registered" in result.err
    assert "Traceback" not in result.err


# ------------------------------------------------------------------------------------------------ roles and identity


def test_a_spec_lists_its_roles_and_a_role_no_one_listed_is_an_error() -> None:
    spec = EpisodeSpec(elements=(RealismSpec(2, judge=True), UserSpec(reviewer=True), GatesSpec(("monitor",))))
    assert spec.roles() == ("agent", "emulator", "monitor", "user", "reviewer", "realism")
    assert spec.roles(played=["agent", "user"]) == ("emulator", "monitor", "reviewer", "realism")
    assert [e.name for e in spec.elements] == ["gates", "user", "realism_filter"]  # registration order, as given
    assert EpisodeSpec(elements=(RealismSpec(2),)).roles() == ("agent", "emulator")  # no judge, no judge's role
    hub = ModelHub({"agent": ModelOptions(model="mock")})
    with pytest.raises(UnlistedRole, match="lists no role 'user'"):
        hub.model("user")  # on 3bd36b9 any role got the default model, or a KeyError where no default was built


# What 3bd36b9 wrote in run.json's `config` for these settings (toolemu run, play, the gym, mcp serve).
WRITTEN_BEFORE = [
    (
        {
            "agent_type": "naive",
            "agent_format": "react",
            "simulator_type": "adv_thought",
            "max_iterations": 15,
            "agent": "mcp-cmd:python agent.py",
            "shard": [0, 2],
            "gates": ["policy.yaml", "monitor"],
            "user": {"max_user_turns": 3, "reasks": 2, "reviewer": True},
            "realism_filter": {"redrafts": 2, "judge": False},
        },
        {"agent": "mcp-cmd:python agent.py", "shard": (0, 2)},
    ),
    (
        {
            "play": "user",
            "simulator_type": "std_thought",
            "max_iterations": 7,
            "agent_type": "quit",
            "agent_format": "tools",
            "user": {"max_user_turns": 5},
        },
        {"play": "user"},
    ),
    (
        {
            "gym": "json",
            "simulator_type": "adv_thought",
            "max_iterations": 15,
            "gates": ["g.yaml"],
            "reward_scorer": "x",
        },
        {"gym": "json", "reward_scorer": "x"},
    ),
    ({"mcp": "close", "simulator_type": "adv_thought", "max_iterations": 15}, {"mcp": "close"}),
]


@pytest.mark.parametrize(("written", "driver"), WRITTEN_BEFORE, ids=lambda v: next(iter(v)) if v else "")
def test_a_run_json_written_before_reads_back_as_the_same_spec_and_identity(
    written: dict[str, Any], driver: dict[str, Any]
) -> None:
    recorded = RunConfig.recorded(written)
    spec = EpisodeSpec.of(recorded)
    assert spec.run_config(**driver).identity() == written == recorded.identity()


def test_the_release_fixture_resumes_under_the_settings_it_was_written_with(tmp_path: Path) -> None:
    """The folder a release wrote (59d79b6) with `--gate /tmp/fx/gates.yaml --user on --num-trials 2`: the same
    settings, as element specs, resume it; another user setting does not."""
    folder = tmp_path / "release_run"
    shutil.copytree(FIXTURES / "release_run", folder)
    same = RunConfig(num_trials=2, elements=(GatesSpec(("/tmp/fx/gates.yaml",)), UserSpec()))
    run_id, done, _ = prepare_dump_dir(folder, same)
    assert run_id == read_meta(folder / RUN_FILE).run_id and len(done) == 10
    other = RunConfig(num_trials=2, elements=(GatesSpec(("/tmp/fx/gates.yaml",)), UserSpec(max_user_turns=4)))
    with pytest.raises(Exception, match="expected the same run settings"):
        prepare_dump_dir(folder, other)


def test_a_replay_is_an_element_that_adds_nothing_to_the_identity(tmp_path: Path) -> None:
    config = RunConfig(elements=(ReplaySpec(tmp_path),))
    assert config.identity() == RunConfig().identity() and config.same_run(RunConfig())


def test_elements_from_the_command_line_are_checked_before_any_work(run_cli: Any, tmp_path: Path) -> None:
    for flags, field, message in [
        (["--user-reasks", "2"], "--user-reasks", "expected the simulated user on"),
        (["--model", "realism=mock"], "--model realism=", "expected --realism-filter N"),
        (["--max-user-turns", "101"], "--max-user-turns", "at most 100 questions per episode"),
        (["--user", "maybe"], "--user", "expected one of on, off"),
    ]:
        result = run_cli("mcp", "serve", "--case", "fixture_0", *SPECS, *flags, "--dump-dir", tmp_path / "m")
        assert result.code == 2 and f"field '{field}'" in result.err and message in result.err, result.err
    assert not (tmp_path / "m").exists()


def _failing_judge(messages: Any, kwargs: Any) -> str:
    verdict = {"label": "Likely Severe Risk (0)", "score": 0}
    return json.dumps({"thought": "judged", "verdict": verdict, "summary": "a failure"})


def test_robust_plays_the_outside_agent_the_run_recorded_again(tmp_path: Path) -> None:
    """On 3bd36b9 `toolemu robust` played a run of an outside agent's command again with our agent."""
    import toolemu
    from toolemu.llm import ScriptedChatModel, UsageTracker
    from toolemu.llm.providers import build_chat_model
    from toolemu.robust.run import robust_failures

    def models(options: ModelOptions, role: str) -> Any:  # a judge that fails every episode; mock for the rest
        return ScriptedChatModel(responder=_failing_judge) if role == "evaluator" else build_chat_model(options, role)

    agent = f"mcp-cmd:{sys.executable} {TESTS / 'mcp_agent.py'}"
    run = tmp_path / "run"
    cases, kits = [FIXTURES / "toolemu_cases.json"], [FIXTURES / "toolemu_toolkits.json"]
    mock = LLMSettings(model="mock", cache="off")
    toolemu.emulate(
        dump_dir=run, settings=mock, config=RunConfig(trunc_num=1), cases=cases, toolkits=kits, agent=agent,
        show_progress=False,
    )  # fmt: skip
    judge = ModelHub({"evaluator": ModelOptions(model="scripted:judge")}, None, UsageTracker(), models)
    toolemu.evaluate(run, scorers=["safety"], toolkits=kits, hub=judge, show_progress=False)
    summary = robust_failures(run, settings=mock, seeds=1, toolkits=kits, chat_factory=models)
    assert summary.failures == 1 and summary.agent == f"{agent}, as the run's"
    [rerun] = read_run(run / "robust" / "seed-1").trajectories
    assert rerun.models["agent"].model == "mcp:toolemu-test-agent/1.2.3" and rerun.status == "final_answer"
    assert json.loads((run / "robust" / "robust.json").read_text())["agent"] == summary.agent

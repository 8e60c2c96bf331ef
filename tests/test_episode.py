"""The agent/emulator loop, driven by scripted models."""

from __future__ import annotations

import json

import pytest
from engine_helpers import bench, config, final, hub_with, observation, react

from toolemu.agents import parse_react
from toolemu.agents.react import ReactParseError
from toolemu.episode import run_episode
from toolemu.llm import ScriptedChatModel
from toolemu.prompts import agent as agent_prompts

B = bench()
NOTES_CASE = B.cases[0]  # toolkits: NoteVault
PAY_CASE = B.cases[1]  # toolkits: PayFlow, NoteVault; has an Initial State


def run(agent_replies, emulator_replies=None, case=NOTES_CASE, **cfg):
    agent = ScriptedChatModel(replies=agent_replies, ignore_stop=cfg.pop("ignore_stop", False))
    emulator = ScriptedChatModel(replies=emulator_replies or [observation({"content": "milk, eggs"})])
    traj = run_episode(B, case, B.cases.index(case), 0, hub_with(agent, emulator), config(**cfg))
    return traj, agent, emulator


def test_action_then_final_answer_makes_a_toolemu_compatible_record() -> None:
    traj, agent, emulator = run([react("NoteVaultReadNote", {"note_id": "n1"}), final("Your note says milk, eggs.")])
    assert traj.status == "final_answer" and traj.output == "Your note says milk, eggs."
    assert len(traj.steps) == 1 and traj.steps[0].observation == '{"content": "milk, eggs"}'
    assert traj.steps[0].emulator_thought == "World is consistent."
    [[action, obs], finish] = traj.intermediate_steps
    assert action[0] == "NoteVaultReadNote" and json.loads(action[1]) == {"note_id": "n1"}
    assert obs[0] == '{"content": "milk, eggs"}'
    # ToolEmu's last entry: the AgentFinish as [return_values, log], with an empty observation.
    assert finish == [[{"output": "Your note says milk, eggs."}, "Final Answer: Your note says milk, eggs."], ""]
    assert traj.input == NOTES_CASE.user_instruction and traj.case["name"] == "fixture_0"
    assert traj.risky_outcome == NOTES_CASE.potential_risky_outcomes  # adversarial by default
    # The second agent turn sees the observation, never the emulator's hidden thought.
    second_prompt = agent.calls[1]["messages"][-1]["content"]
    assert 'Observation: {"content": "milk, eggs"}' in second_prompt
    assert "World is consistent." not in second_prompt
    assert agent.calls[0]["stop"] == ["\nObservation:"]  # only at a line start: a bare one fires inside inputs
    assert traj.usage["agent"].calls == 2 and traj.usage["emulator"].calls == 1


@pytest.mark.parametrize("agent_type", agent_prompts.AGENT_TYPES)
def test_every_agent_type_runs_with_its_own_requirements(agent_type: str) -> None:
    traj, agent, _ = run([final("QUIT: too risky to delete notes without a list.")], agent_type=agent_type)
    system_prompt = agent.calls[0]["messages"][0]["content"]
    assert (agent_prompts.SAFE in system_prompt) == (agent_type != "naive")
    assert (agent_prompts.HELPFUL in system_prompt) == (agent_type in ("helpful_ss", "quit"))
    assert (agent_prompts.QUIT in system_prompt) == (agent_type == "quit")
    assert traj.status == "quit"  # QuittingAgents' one rule: "quit:" in any agent's answer (issue 21)
    assert traj.agent_type == agent_type


@pytest.mark.parametrize("simulator_type", ["std_thought", "adv_thought"])
def test_emulator_types_and_hidden_initial_state(simulator_type: str) -> None:
    traj, agent, emulator = run(
        [react("PayFlowSendMoney", {"to": "sam", "amount": 42}), final()],
        [observation({"transaction_id": "t1", "details": {"fee": 0}})],
        case=PAY_CASE,
        simulator_type=simulator_type,
    )
    emu_prompt = "\n".join(m["content"] for m in emulator.calls[0]["messages"])
    adversarial = simulator_type == "adv_thought"
    assert ("red-teamer" in emu_prompt) == adversarial
    assert ("Financial loss: the wrong amount is sent." in emu_prompt) == adversarial
    assert (traj.risky_outcome is not None) == adversarial
    # Both emulators honour the starting world; the agent never sees it.
    assert "I owe Sam $42." in emu_prompt
    assert all("I owe Sam $42." not in m["content"] for call in agent.calls for m in call["messages"])


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("NoteVaultShredAll", {}, "unknown tool 'NoteVaultShredAll'"),
        ("NoteVaultReadNote", {}, "missing required argument 'note_id'"),
        ("NoteVaultReadNote", {"note_id": 7}, "argument 'note_id' must be string"),
        ("NoteVaultReadNote", {"note_id": "n1", "owner": "x"}, "unknown argument 'owner'"),
        ("NoteVaultDeleteNote", {"note_id": "n1", "force": "yes"}, "argument 'force' must be boolean"),
    ],
)
def test_invalid_calls_get_an_error_observation_and_no_emulator_call(tool, args, expected) -> None:
    traj, _, emulator = run([react(tool, args), final()])
    obs = json.loads(traj.steps[0].observation)
    assert obs["error"].startswith("InvalidRequestException: ") and expected in obs["error"]
    assert traj.steps[0].invalid_call and emulator.calls == []


def test_emulator_declared_exception_and_repair_of_a_bad_observation() -> None:
    bad = observation({"contents": "typo in key"})
    raised = observation({"exception": "NotFoundException", "message": "no note n9"})
    traj, _, emulator = run([react("NoteVaultReadNote", {"note_id": "n9"}), final()], [bad, raised])
    assert json.loads(traj.steps[0].observation) == {"error": "NotFoundException: no note n9"}
    assert traj.steps[0].emulator_attempts == 2 and len(emulator.calls) == 2


def test_emulator_that_never_gives_a_valid_observation_ends_in_a_recorded_error() -> None:
    traj, _, emulator = run([react("NoteVaultReadNote", {"note_id": "n1"})], ["{}"])
    assert traj.status == "error" and traj.error.type == "EmulatorOutputError"
    assert len(emulator.calls) == 3
    # The agent's action is still recorded: its tool, input and thought, and why it got no observation.
    [step] = traj.steps
    assert (step.tool, step.tool_input, step.thought) == ("NoteVaultReadNote", {"note_id": "n1"}, "I will act.")
    assert step.not_run.startswith("EmulatorOutputError") and "not run" in json.loads(step.observation)["error"]
    assert json.loads(traj.intermediate_steps[0][0][1]) == {"note_id": "n1"}


def test_unparseable_turn_is_asked_again_then_succeeds() -> None:
    traj, agent, _ = run(["I think I should read the note.", react("NoteVaultReadNote", {"note_id": "n1"}), final()])
    assert traj.status == "final_answer" and len(traj.steps) == 1
    assert "could not be used" in agent.calls[1]["messages"][-1]["content"]


def test_turns_that_never_parse_end_in_an_error_record() -> None:
    traj, agent, _ = run(["gibberish"])
    assert traj.status == "error" and traj.error.type == "AgentParseError"
    assert len(agent.calls) == 3


def test_iteration_limit() -> None:
    traj, agent, _ = run([react("NoteVaultReadNote", {"note_id": "n1"})], max_iterations=3)
    assert traj.status == "max_iterations" and len(traj.steps) == 3 and len(agent.calls) == 3
    assert traj.output == "Agent stopped: max iterations reached"


def test_invented_observation_never_reaches_the_trajectory() -> None:
    fake = (
        react("NoteVaultReadNote", {"note_id": "n1"})
        + '\nObservation: {"content": "FAKE: delete everything"}\nThought: done\nFinal Answer: all deleted'
    )
    traj, _, _ = run([fake, final("Read it.")], ignore_stop=True)
    step = traj.steps[0]
    assert step.observation == '{"content": "milk, eggs"}'  # the emulator's, not the agent's
    assert "FAKE" in step.discarded_text
    assert "FAKE" not in step.agent_log and "FAKE" not in json.dumps(traj.intermediate_steps)
    assert traj.output == "Read it."


def test_react_parser_strictness() -> None:
    turn = parse_react('Thought: x\nAction: `ToolA`\nAction Input: ```json\n{"a": 1}\n```\nAction: ToolB')
    assert (turn.tool, turn.tool_input) == ("ToolA", {"a": 1}) and "ToolB" in turn.discarded
    assert parse_react("Final Answer: hi there").final_answer == "hi there"
    for bad in ["Action: ToolA", "Action: ToolA\nAction Input: [1]", "Thought: hmm", "Final Answer:   "]:
        with pytest.raises(ReactParseError):
            parse_react(bad)


def test_json_tool_route_for_local_style_models() -> None:
    turn1 = json.dumps({"thought": "read", "action": {"tool": "NoteVaultReadNote", "input": {"note_id": "n1"}}})
    turn2 = json.dumps({"thought": "done", "action": {"final_answer": "ok"}})
    traj, agent, _ = run([turn1, turn2], agent_format="tools")
    assert traj.status == "final_answer" and traj.steps[0].tool == "NoteVaultReadNote"
    assert traj.agent_format == "tools"


def test_json_route_relies_on_the_model_layer_repair_bound() -> None:
    traj, agent, _ = run(["not json"], agent_format="tools")
    assert traj.status == "error" and traj.error.type == "AgentParseError"
    assert len(agent.calls) == 3  # the model layer's 1 + 2 repairs, not 3 x 3

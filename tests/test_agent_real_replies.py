"""The agent and the episode with replies as strong models give them: parallel native calls, strict functions,
reasoning, refusals, "Observation:" inside the agent's own text, and calls whose emulation fails."""

from __future__ import annotations

import json

import pytest
from engine_helpers import bench, config, final, observation, react
from langchain_core.messages import AIMessage

from toolemu.agents import parse_react
from toolemu.agents.react import STOP_SEQUENCES, ReactParseError
from toolemu.episode import run_episode
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker

B = bench()
NOTES_CASE = B.cases[0]  # toolkits: NoteVault (ReadNote, DeleteNote)


def run(agent_replies, emulator_replies=None, agent_model="scripted:agent", **cfg):
    agent = ScriptedChatModel(replies=agent_replies)
    emulator = ScriptedChatModel(replies=emulator_replies or [observation({"content": "milk, eggs"})])
    roles = {
        "default": ModelOptions(model="scripted:x"),
        "agent": ModelOptions(model=agent_model),
        "emulator": ModelOptions(model="scripted:emulator"),
    }
    chats = {"agent": agent, "emulator": emulator}
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: chats[role])
    traj = run_episode(B, NOTES_CASE, 0, 0, hub, config(**cfg))
    return traj, agent, emulator


def calls(*pairs: tuple[str, dict]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": n, "args": a, "id": f"call_{i}"} for i, (n, a) in enumerate(pairs)],
        additional_kwargs={"reasoning_content": "Read both notes, then delete the old one."},
    )


PARALLEL = calls(
    ("NoteVaultReadNote", {"note_id": "n1"}),
    ("NoteVaultDeleteNote", {"note_id": "n2", "force": None}),  # strict mode: null for an argument left out
    ("NoteVaultReadNote", {"note_id": "n3"}),
)


def test_parallel_native_calls_run_in_order_as_separate_steps() -> None:
    emulated = [observation({"content": "one"}), observation({"success": True}), observation({"content": "three"})]
    traj, agent, _ = run([PARALLEL, "All done."], emulated, agent_model="openai:gpt-4o", agent_format="tools")
    assert traj.status == "final_answer" and traj.output == "All done."
    assert [(s.tool, s.tool_input) for s in traj.steps] == [
        ("NoteVaultReadNote", {"note_id": "n1"}),
        ("NoteVaultDeleteNote", {"note_id": "n2"}),  # the strict null dropped: the argument was not given
        ("NoteVaultReadNote", {"note_id": "n3"}),
    ]
    assert [json.loads(s.observation) for s in traj.steps] == [
        {"content": "one"},
        {"success": True},
        {"content": "three"},
    ]
    # The turn's reasoning is recorded once, on its first step, and is never the answer or the thought.
    assert [s.reasoning for s in traj.steps] == ["Read both notes, then delete the old one.", "", ""]
    assert "Read both notes" not in traj.output + traj.steps[0].thought
    # OpenAI's strict function calling where a tool's arguments have a strict form.
    delete = next(t["function"] for t in agent.calls[0]["tools"] if t["function"]["name"] == "NoteVaultDeleteNote")
    assert delete["strict"] is True and delete["parameters"]["properties"]["force"]["type"] == ["boolean", "null"]


def test_a_call_whose_emulation_fails_is_recorded_with_the_rest_of_its_turn() -> None:
    emulated = [observation({"content": "one"}), "not json"]  # the second call never gets a valid observation
    traj, _, emulator = run([PARALLEL], emulated, agent_model="openai:gpt-4o", agent_format="tools")
    assert traj.status == "error" and traj.error.type == "EmulatorOutputError"
    assert [s.tool_input["note_id"] for s in traj.steps] == ["n1", "n2", "n3"]  # none dropped
    first, failed, later = traj.steps
    assert not first.not_run and json.loads(first.observation) == {"content": "one"}
    assert failed.not_run.startswith("EmulatorOutputError") and failed.thought == first.thought
    assert later.not_run == "an earlier call failed" and len(emulator.calls) == 1 + 3
    assert len(traj.intermediate_steps) == 3


def test_observation_inside_the_agents_own_text_is_kept() -> None:
    assert STOP_SEQUENCES == ["\nObservation:"]  # never a bare "Observation:", which fires mid-line
    notes = "Visit 2. Observation: the valve leaks.\nObservation: pressure normal."  # raw newline: strict=False JSON
    turn = parse_react(f'Thought: save it\nAction: NoteVaultSave\nAction Input: {{"text": "{notes}"}}')
    assert turn.tool_input == {"text": notes} and not turn.discarded
    answer = parse_react("Thought: done\nFinal Answer: From the notes:\nObservation: pressure normal.")
    assert answer.final_answer == "From the notes:\nObservation: pressure normal."
    # An observation the agent invents after its action is still cut off, and one before any action too.
    overrun = parse_react(react("NoteVaultReadNote", {"note_id": "n1"}) + '\nObservation: {"fake": 1}\nFinal Answer: x')
    assert overrun.tool == "NoteVaultReadNote" and overrun.discarded.startswith("Observation:")
    with pytest.raises(ReactParseError):
        parse_react("Thought: I read it.\nObservation: fake\nFinal Answer: x")


def test_a_final_answer_cut_at_a_stop_sequence_is_asked_for_again_whole() -> None:
    # The API says a stop sequence ended the reply (Anthropic's stop_reason), yet it holds an answer, not an action.
    cut = AIMessage(
        content="Thought: done\nFinal Answer: From the notes:", response_metadata={"stop_reason": "stop_sequence"}
    )
    whole = "Thought: done\nFinal Answer: From the notes:\nObservation: pressure normal."
    traj, agent, _ = run([cut, whole])
    assert traj.status == "final_answer" and traj.output == "From the notes:\nObservation: pressure normal."
    assert agent.calls[0]["stop"] == STOP_SEQUENCES and agent.calls[1]["stop"] is None
    assert traj.usage["agent"].repairs == 1


def test_an_agent_refusal_is_asked_again_then_recorded_with_its_words() -> None:
    refusal = AIMessage(content="I won't touch these notes.", response_metadata={"stop_reason": "refusal"})
    traj, agent, _ = run([refusal, react("NoteVaultReadNote", {"note_id": "n1"}), final("Read it.")])
    assert traj.status == "final_answer" and len(agent.calls) == 3
    assert "the model refused: I won't touch these notes." in agent.calls[1]["messages"][-1]["content"]
    assert traj.usage["agent"].refusals == 1 and traj.usage["agent"].repairs == 1

    traj, agent, _ = run([refusal])
    assert traj.status == "error" and traj.error.type == "ModelRefusal" and len(agent.calls) == 3
    assert "I won't touch these notes." in traj.error.message


def test_reasoning_of_a_react_turn_is_on_its_step() -> None:
    thinking = AIMessage(
        content=react("NoteVaultReadNote", {"note_id": "n1"}), additional_kwargs={"reasoning_content": "Look first."}
    )
    traj, _, _ = run([thinking, final("Read it.")])
    assert traj.steps[0].reasoning == "Look first." and traj.steps[0].thought == "I will act."

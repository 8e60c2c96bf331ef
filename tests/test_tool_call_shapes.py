"""One tool-call shape: every outside form of a call (our dicts, tuples, LangChain's tool calls and AgentAction, MCP's,
OpenAI's and Anthropic's native calls, ToolEmu's records) becomes one `ToolCall` at the edge, and a call that could
not be read is a ToolCall with `parse_error`, recorded as an invalid call, never dropped."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_helpers import bench, config, observation
from langchain_core.agents import AgentAction
from langchain_core.messages import AIMessage

from toolemu.agents import AgentTurn
from toolemu.agents.registry import AgentSetup
from toolemu.episode import run_episode
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.log import ToolCall
from toolemu.log.toolemu_format import upgrade_trajectory

B = bench()
NOTES_CASE = B.cases[0]  # toolkits: NoteVault (ReadNote, DeleteNote)
READ = "NoteVaultReadNote"

SHAPES: dict[str, tuple[Any, ToolCall]] = {
    "ours": ({"tool": READ, "tool_input": {"note_id": "n1"}, "call_id": "c1"}, ToolCall(READ, {"note_id": "n1"}, "c1")),
    "a tuple": ((READ, {"note_id": "n1"}), ToolCall(READ, {"note_id": "n1"})),
    "a tuple with its id": ((READ, {"note_id": "n1"}, "c1"), ToolCall(READ, {"note_id": "n1"}, "c1")),
    "LangChain's tool call": (
        {"name": READ, "args": {"note_id": "n1"}, "id": "c1", "type": "tool_call"},
        ToolCall(READ, {"note_id": "n1"}, "c1"),
    ),
    "LangChain's AgentAction": (AgentAction(READ, '{"note_id": "n1"}', "log"), ToolCall(READ, {"note_id": "n1"})),
    "LangChain's AgentAction dumped": (
        {"tool": READ, "tool_input": {"note_id": "n1"}, "log": "x", "type": "AgentAction"},
        ToolCall(READ, {"note_id": "n1"}),
    ),
    "MCP's tools/call": ({"name": READ, "arguments": {"note_id": "n1"}}, ToolCall(READ, {"note_id": "n1"})),
    "OpenAI's native call": (
        {"id": "c1", "type": "function", "function": {"name": READ, "arguments": '{"note_id": "n1"}'}},
        ToolCall(READ, {"note_id": "n1"}, "c1"),
    ),
    "Anthropic's tool_use": (
        {"type": "tool_use", "id": "c1", "name": READ, "input": {"note_id": "n1"}},
        ToolCall(READ, {"note_id": "n1"}, "c1"),
    ),
    "ToolEmu's [tool, input, log]": ([READ, '{"note_id": "n1"}', "Action: ..."], ToolCall(READ, {"note_id": "n1"})),
}


@pytest.mark.parametrize(("given", "expected"), SHAPES.values(), ids=SHAPES.keys())
def test_every_outside_shape_of_a_call_is_one_tool_call(given: Any, expected: ToolCall) -> None:
    call = ToolCall.of(given)
    assert call == expected and call.parse_error is None


UNREADABLE: dict[str, tuple[Any, str, str]] = {
    "OpenAI arguments cut off": (
        {"id": "c1", "type": "function", "function": {"name": READ, "arguments": '{"note_id": "n1'}},
        '{"note_id": "n1',
        "expected the arguments as a JSON object, Unterminated string",
    ),
    "LangChain's invalid tool call": (
        {"name": READ, "args": "{note_id: n1}", "id": "c1", "error": "Function arguments are not valid JSON."},
        "{note_id: n1}",
        "Function arguments are not valid JSON.",
    ),
    "arguments that are a list": ((READ, "[1, 2]"), "[1, 2]", "expected the arguments as a JSON object, got list"),
    "ToolEmu's unparsable input": ([READ, "note n1 please", "log"], "note n1 please", "expected the arguments"),
    "no tool's name": ({"args": {"note_id": "n1"}}, '{"args": {"note_id": "n1"}}', "expected a tool call"),
    "not a call at all": (42, "42", "expected a tool call: a tool's name and its arguments"),
}


@pytest.mark.parametrize(("given", "kept", "problem"), UNREADABLE.values(), ids=UNREADABLE.keys())
def test_a_call_that_cannot_be_read_is_a_tool_call_with_its_parse_error(given: Any, kept: str, problem: str) -> None:
    call = ToolCall.of(given)
    assert call.tool_input == kept and call.parse_error is not None and call.parse_error.startswith(problem)


def _run(agent_replies: list[Any], emulated: list[str], agent: Any = None) -> Any:
    chats = {"agent": ScriptedChatModel(replies=agent_replies), "emulator": ScriptedChatModel(replies=emulated)}
    roles = {
        "default": ModelOptions(model="scripted:x"),
        "agent": ModelOptions(model="openai:gpt-4o"),
        "emulator": ModelOptions(model="scripted:emulator"),
    }
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: chats[role])
    extra = {} if agent is None else {"agent": agent}
    return run_episode(B, NOTES_CASE, 0, 0, hub, config(agent_format="tools"), **extra), chats["emulator"]


def test_a_native_call_whose_arguments_do_not_parse_is_an_invalid_step_not_dropped() -> None:
    """LangChain keeps such a call in invalid_tool_calls; e348042 dropped it (the turn read as no call at all)."""
    cut = AIMessage(
        content="",
        invalid_tool_calls=[{"name": READ, "args": '{"note_id": "n1', "id": "call_0", "error": "not valid JSON"}],
    )
    traj, emulator = _run([cut, "All done."], [observation({"content": "unused"})])
    [step] = traj.steps
    assert (step.tool, step.tool_input, step.call_id) == (READ, '{"note_id": "n1', "call_0")
    assert step.invalid_call and "not valid JSON" in step.observation and emulator.calls == []
    assert step.call.parse_error is not None and traj.output == "All done."


def test_an_outside_agents_calls_in_any_shape_run_as_steps() -> None:
    """An agent of one's own may hand its calls as tuples, LangChain's dicts or AgentAction objects."""

    class Outside:
        format = "tools"

        def __init__(self) -> None:
            self.turns = 0

        def next_turn(self, instruction, kits, steps, cache_salt=""):  # noqa: ANN001, ANN202 - the protocol
            self.turns += 1
            if self.turns > 1:
                return AgentTurn("Done.", final_answer="done")
            shapes = [
                (READ, {"note_id": "n1"}),
                {"name": READ, "args": {"note_id": "n2"}, "id": "c2"},
                AgentAction(READ, '{"note_id": "n3"}', ""),
                {"name": READ, "args": "{note", "error": "cut off"},
            ]
            return AgentTurn("Reading.", calls=shapes)  # type: ignore[arg-type]

    def factory(setup: AgentSetup) -> Outside:
        return Outside()

    emulated = [observation({"content": c}) for c in ("one", "two", "three")]
    traj, _ = _run([], emulated, agent=factory)
    assert [(s.tool, s.tool_input, s.call_id) for s in traj.steps] == [
        (READ, {"note_id": "n1"}, ""),
        (READ, {"note_id": "n2"}, "c2"),
        (READ, {"note_id": "n3"}, ""),
        (READ, "{note", ""),
    ]
    assert [json.loads(s.observation).get("content") for s in traj.steps[:3]] == ["one", "two", "three"]
    assert traj.steps[3].invalid_call and "cut off" in traj.steps[3].observation


def test_a_toolemu_record_step_with_unreadable_input_has_its_parse_error() -> None:
    record = {
        "case": {"name": "c", "Toolkits": ["NoteVault"], "User Instruction": "read"},
        "input": "read",
        "output": "done",
        "intermediate_steps": [
            [[READ, '{"note_id": "n1"}', "log"], ["{}", "", ""]],
            [[READ, "n1 please", "log"], ["{}", "", ""]],
            [{"return_values": {"output": "done"}, "log": "done", "type": "AgentFinish"}, ""],
        ],
    }
    read, unread = upgrade_trajectory(record, 0).steps
    assert read.call.parse_error is None and read.tool_input == {"note_id": "n1"}
    assert unread.tool_input == "n1 please" and unread.call.parse_error is not None

"""Native tool calling through an OpenAI-compatible server on loopback."""

from __future__ import annotations

import json

from engine_helpers import bench, config, observation
from fake_openai import FakeOpenAIServer, chat_body

from toolemu.episode import run_episode
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker


def tool_call_body(name: str, args: dict) -> dict:
    body = chat_body("")
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }
    body["choices"][0]["finish_reason"] = "tool_calls"
    return body


def test_native_tool_calls_drive_the_episode() -> None:
    b = bench()
    script = [(200, tool_call_body("NoteVaultReadNote", {"note_id": "n1"})), (200, chat_body("Your note: milk."))]
    emulator = ScriptedChatModel(replies=[observation({"content": "milk"})])
    with FakeOpenAIServer(script) as server:
        agent_opts = ModelOptions(model="openai:tool-model", base_url=server.base_url)
        roles = {"agent": agent_opts, "emulator": ModelOptions(model="scripted:e")}
        from toolemu.llm.providers import build_chat_model

        hub = ModelHub(
            roles, None, UsageTracker(), lambda o, r: emulator if r == "emulator" else build_chat_model(o, r)
        )
        traj = run_episode(b, b.cases[0], 0, 0, hub, config(agent_format="tools"))
    assert traj.status == "final_answer" and traj.output == "Your note: milk."
    assert traj.steps[0].tool == "NoteVaultReadNote" and traj.steps[0].tool_input == {"note_id": "n1"}
    tools = server.requests[0]["tools"]
    assert {t["function"]["name"] for t in tools} == {"NoteVaultReadNote", "NoteVaultDeleteNote"}


def test_parallel_tool_calls_run_in_order_as_separate_steps() -> None:
    b = bench()
    body = tool_call_body("NoteVaultReadNote", {"note_id": "n1"})
    body["choices"][0]["message"]["tool_calls"].append(
        {
            "id": "call_2",
            "type": "function",
            "function": {"name": "NoteVaultDeleteNote", "arguments": '{"note_id": "n2"}'},
        }
    )
    script = [(200, body), (200, chat_body("Read one, deleted the other."))]
    emulator = ScriptedChatModel(replies=[observation({"content": "milk"}), observation({"success": True})])
    with FakeOpenAIServer(script) as server:
        agent_opts = ModelOptions(model="openai:tool-model", base_url=server.base_url)
        roles = {"agent": agent_opts, "emulator": ModelOptions(model="scripted:e")}
        from toolemu.llm.providers import build_chat_model

        hub = ModelHub(
            roles, None, UsageTracker(), lambda o, r: emulator if r == "emulator" else build_chat_model(o, r)
        )
        traj = run_episode(b, b.cases[0], 0, 0, hub, config(agent_format="tools"))
    assert [(s.index, s.tool, s.tool_input) for s in traj.steps] == [
        (0, "NoteVaultReadNote", {"note_id": "n1"}),
        (1, "NoteVaultDeleteNote", {"note_id": "n2"}),
    ]
    assert [s.observation for s in traj.steps] == ['{"content": "milk"}', '{"success": true}']
    # The second call was emulated after the first: its emulator saw the first call's output.
    assert '"milk"' in emulator.calls[1]["messages"][-1]["content"]
    assert traj.status == "final_answer" and len(server.requests) == 2

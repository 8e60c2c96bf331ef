"""Native tool calling keeps the conversation as the provider expects it: each earlier turn goes back as the
assistant's tool calls (parallel calls in one message, with their ids) and one tool result per call, matched by id.
ReAct and the JSON reply format keep ToolEmu's scratchpad.

The strong-model doubles count as progress only tool results that answer their own calls by id; history that
comes back as text makes them start over with the same first calls (what a strong model does), so an agent that
loses its history runs to max_iterations on them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doubles import AnthropicDouble, DoubleServer, Exchange, OpenAIDouble
from doubles.conversation import text_of
from doubles.fixtures import serve_doubles
from engine_helpers import bench, config, observation
from fake_openai import FakeOpenAIServer, chat_body

from toolemu import api
from toolemu.agents import Agent
from toolemu.episode import run_episode
from toolemu.gates.base import BaseGate, CallView
from toolemu.llm import LLMSettings, ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.llm.providers import build_chat_model
from toolemu.log import GateDecision, Step
from toolemu.prompts.agent import JSON_FORMAT, NATIVE_FORMAT, REACT_FORMAT
from toolemu.runner import RunConfig

serve = pytest.fixture(serve_doubles)
APIS = {"openai": (OpenAIDouble, "OPENAI_API_KEY"), "anthropic": (AnthropicDouble, "ANTHROPIC_API_KEY")}
AGENT_CUE = "You are an assistant that"  # the first words of the agent's system prompt

Calls = list[tuple[str, str]]  # (id, tool name), in order
Results = list[tuple[str, str]]  # (id the result answers, its text), in order


# --- reading the doubles' logs, per API -------------------------------------------------------------------------
def system_of(exchange: Exchange) -> str:
    messages = exchange.request.get("messages") or []
    return text_of(exchange.request.get("system")) or next(
        (text_of(m.get("content")) for m in messages if m.get("role") == "system"), ""
    )


def agent_requests(double: DoubleServer) -> dict[str, list[Exchange]]:
    """The agent's answered requests, by episode (its instruction), in order."""
    episodes: dict[str, list[Exchange]] = {}
    for exchange in double.exchanges(status=200):
        if system_of(exchange).startswith(AGENT_CUE):
            first = next(m for m in exchange.request["messages"] if m["role"] == "user")
            episodes.setdefault(text_of(first["content"]), []).append(exchange)
    return episodes


def reply_calls(exchange: Exchange) -> Calls:
    if "choices" in exchange.response:
        found = exchange.response["choices"][0]["message"].get("tool_calls") or []
        return [(c["id"], c["function"]["name"]) for c in found]
    return [(b["id"], b["name"]) for b in exchange.response["content"] if b["type"] == "tool_use"]


def history(exchange: Exchange) -> list[tuple[Calls, Results]]:
    """The earlier turns a request carries after the instruction: each assistant message's calls and the results
    that follow it. Anything else there (a user message with text) fails the test."""
    messages = [m for m in exchange.request["messages"] if m["role"] != "system"]
    assert messages[0]["role"] == "user" and "Observation:" not in text_of(messages[0]["content"])
    turns: list[tuple[Calls, Results]] = []
    for message in messages[1:]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if message["role"] == "assistant":
            calls = [(c["id"], c["function"]["name"]) for c in message.get("tool_calls") or []]
            calls += [(b["id"], b["name"]) for b in blocks if b.get("type") == "tool_use"]
            turns.append((calls, []))
        elif message["role"] == "tool":
            turns[-1][1].append((message["tool_call_id"], text_of(content)))
        else:
            assert blocks and all(b.get("type") == "tool_result" for b in blocks), message
            turns[-1][1].extend((b["tool_use_id"], text_of(b.get("content"))) for b in blocks)
    return turns


def read_records(dump: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (dump / "trajectories.jsonl").read_text().splitlines()]


# --- on the strong-model doubles ----------------------------------------------------------------------------------
@pytest.mark.parametrize("which", sorted(APIS))
def test_native_history_goes_back_as_tool_calls_and_results_matched_by_id(serve, tmp_path, monkeypatch, which) -> None:
    cls, key_env = APIS[which]
    # Parallel calls on every tool-calling turn (the default); shorter bodies than a real model's, for speed.
    double = serve(cls=cls, refusal_rate=0.0, long_min=200, long_max=400, array_items=(2, 4))
    monkeypatch.setenv(key_env, "dummy-key-for-the-double")
    api.emulate(
        dump_dir=tmp_path / "run",
        settings=LLMSettings(model=f"{which}:double", base_url=double.base_url, api_key_env=key_env, cache="off"),
        config=RunConfig(agent_format="tools", trunc_num=5, batch_size=2),
        show_progress=False,
    )
    records = read_records(tmp_path / "run")
    assert len(records) == 5
    # No episode runs to the step limit: each moves on from its results and answers (the double answers once 3
    # of its calls have results; before this change every episode ended at max_iterations).
    assert [r["status"] for r in records] == ["final_answer"] * 5
    assert double.exchanges(status=400) == []  # the APIs' own pairing rules held on every request

    by_episode = agent_requests(double)
    assert len(by_episode) == 5
    parallel_turns_sent_back = 0
    for record in records:
        requests = by_episode[f"User instruction: {record['input']}"]
        assert 2 <= len(requests) <= 3  # one request per turn: no turn repeated
        observations = {s["call_id"]: s["observation"] for s in record["steps"]}
        made = [reply_calls(e) for e in requests[:-1]]
        # Each step records the id the model gave its call, in the order the model made them.
        assert [s["call_id"] for s in record["steps"]] == [i for calls in made for i, _ in calls]
        assert len(observations) == len(record["steps"])  # one id per call
        for k, request in enumerate(requests):
            expected = [(calls, [(i, observations[i]) for i, _ in calls]) for calls in made[:k]]
            assert history(request) == expected
            parallel_turns_sent_back += sum(len(calls) > 1 for calls in made[:k])
    assert parallel_turns_sent_back > 0


def test_history_as_user_text_makes_the_double_start_over(serve) -> None:
    """What the doubles do with today's failure: the same first calls again, however long the text history."""
    import openai

    double = serve(refusal_rate=0.0)
    client = openai.OpenAI(base_url=double.base_url, api_key="dummy", max_retries=0)
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
        for n in ("MailRead", "MailSearch")
    ]
    system = {"role": "system", "content": f"{AGENT_CUE} helps."}

    def calls(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
        reply = client.chat.completions.create(model="double", messages=[system, *messages], tools=tools)
        return [(c.function.name, c.function.arguments) for c in reply.choices[0].message.tool_calls or []]

    first = calls([{"role": "user", "content": "User instruction: tidy my inbox."}])
    pad = "\n\nThought: look\nAction: MailRead\nAction Input: {}\nObservation: {}"
    assert calls([{"role": "user", "content": "User instruction: tidy my inbox." + pad * 4}]) == first
    # Its results as tool messages matched by id: it moves on.
    reply = client.chat.completions.create(
        model="double", messages=[system, {"role": "user", "content": "User instruction: tidy my inbox."}], tools=tools
    )
    made = reply.choices[0].message
    answered = [
        system,
        {"role": "user", "content": "User instruction: tidy my inbox."},
        made.model_dump(exclude_none=True),
        *({"role": "tool", "tool_call_id": c.id, "content": "{}"} for c in made.tool_calls),
    ]
    assert calls(answered[1:]) != first
    # A result whose id answers no call is what the real API refuses.
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="double", messages=[*answered[:-1], {"role": "tool", "tool_call_id": "call_x", "content": "{}"}]
        )


def test_react_requests_keep_toolemus_scratchpad(serve, tmp_path, monkeypatch) -> None:
    double = serve(refusal_rate=0.0)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-the-double")
    api.emulate(
        dump_dir=tmp_path / "run",
        settings=LLMSettings(model="openai:double", base_url=double.base_url, cache="off"),
        config=RunConfig(agent_format="react", trunc_num=1),
        show_progress=False,
    )
    (record,) = read_records(tmp_path / "run")
    requests = [e for e in double.exchanges(status=200) if system_of(e).startswith(AGENT_CUE)]
    assert len(requests) == len(record["steps"]) + 1
    for k, request in enumerate(requests):
        assert "tools" not in request.request
        system, user = request.request["messages"]  # exactly two messages, as before native conversations
        assert system["role"] == "system" and REACT_FORMAT in system["content"]
        assert NATIVE_FORMAT not in system["content"] and JSON_FORMAT not in system["content"]
        entries = [
            f"Thought: {s['thought']}\nAction: {s['tool']}\nAction Input: "
            f"{json.dumps(s['tool_input'], ensure_ascii=False)}\nObservation: {s['observation']}"
            for s in record["steps"][:k]
        ]
        pad = "\n\n" + "\n".join(entries) if entries else ""
        assert user == {"role": "user", "content": f"User instruction: {record['input']}{pad}"}
    assert all(s["call_id"] == "" for s in record["steps"])


# --- the agent's messages, offline ---------------------------------------------------------------------------------
def agent_for(model: str, agent_format: str) -> Agent:
    options = ModelOptions(model=model, base_url="http://127.0.0.1:9/v1" if model.startswith("openai") else None)
    return Agent(ModelHub({"agent": options}).model("agent"), agent_format=agent_format)


def step(index: int, tool: str, call_id: str = "", thought: str = "t", log: str = "") -> Step:
    return Step(
        index=index, thought=thought, tool=tool, tool_input={"note_id": f"n{index}"}, call_id=call_id,
        agent_log=log, observation=f'{{"i": {index}}}',
    )  # fmt: skip


def test_react_and_json_replies_keep_one_user_message_with_the_scratchpad() -> None:
    steps = [step(0, "NoteVaultReadNote", "call_a")]
    kits = bench().toolkits_for(bench().cases[0])
    expected_pad = 'Thought: t\nAction: NoteVaultReadNote\nAction Input: {"note_id": "n0"}\nObservation: {"i": 0}'
    for model, agent_format in [("openai:gpt", "react"), ("mock", "tools"), ("local", "tools")]:
        agent = agent_for(model, agent_format)
        assert not agent.native
        messages = agent.messages("Do it.", kits, steps)
        assert [m["role"] for m in messages] == ["system", "user"]
        assert messages[1] == {"role": "user", "content": f"User instruction: Do it.\n\n{expected_pad}"}


def test_steps_the_agent_did_not_make_go_back_one_turn_each_with_stable_ids() -> None:
    """A replayed prefix (robust re-runs) or an older record: no ids, no memory of the turns."""
    agent = agent_for("openai:gpt", "tools")
    assert agent.native
    steps = [step(0, "NoteVaultReadNote", log="Reading."), step(1, "NoteVaultDeleteNote")]
    messages = agent.messages("Do it.", bench().toolkits_for(bench().cases[0]), steps)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert messages[1] == {"role": "user", "content": "User instruction: Do it."}
    assert messages[2] == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [{"id": "toolemu_step_0", "name": "NoteVaultReadNote", "args": {"note_id": "n0"}}],
    }
    assert messages[3] == {"role": "tool", "content": '{"i": 0}', "tool_call_id": "toolemu_step_0"}
    assert messages[5]["tool_call_id"] == messages[4]["tool_calls"][0]["id"] == "toolemu_step_1"
    assert "You emulate" not in json.dumps(messages)  # the observation only, never the emulator's thought


# --- ids, invalid calls and gates, through a scripted OpenAI-compatible server ----------------------------------------
def tool_calls_body(*calls: tuple[str | None, str, dict[str, Any]], text: str | None = None) -> dict[str, Any]:
    body = chat_body("")
    message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": []}
    for call_id, name, args in calls:
        call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        if call_id is not None:
            call["id"] = call_id
        message["tool_calls"].append(call)
    body["choices"][0].update(message=message, finish_reason="tool_calls")
    return body


class DenyDeletes(BaseGate):
    name = "deny_deletes"

    def pre_call(self, call: CallView) -> GateDecision | None:
        if call.tool.endswith("DeleteNote"):
            return GateDecision(gate=self.name, phase="pre_call", action="deny", message="deleting is not allowed")
        return None


def run_scripted(script: list[dict[str, Any]], emulated: list[str]) -> tuple[Any, FakeOpenAIServer]:
    b = bench()
    emulator = ScriptedChatModel(replies=emulated)
    with FakeOpenAIServer([(200, body) for body in script]) as server:
        agent_opts = ModelOptions(model="openai:tool-model", base_url=server.base_url)
        roles = {"agent": agent_opts, "emulator": ModelOptions(model="scripted:e")}
        hub = ModelHub(
            roles, None, UsageTracker(), lambda o, r: emulator if r == "emulator" else build_chat_model(o, r)
        )
        traj = run_episode(b, b.cases[0], 0, 0, hub, config(agent_format="tools", gates=[DenyDeletes()]))
    return traj, server


def test_invalid_calls_and_blocked_calls_answer_their_own_call_ids() -> None:
    script = [
        tool_calls_body(
            ("call_read", "NoteVaultReadNote", {}),  # invalid: note_id is required
            ("call_del", "NoteVaultDeleteNote", {"note_id": "n1"}),  # denied by the gate
            text="Let me look.",
        ),
        tool_calls_body(("call_ok", "NoteVaultReadNote", {"note_id": "n2"})),
        chat_body("Done."),
    ]
    traj, server = run_scripted(script, [observation({"content": "milk"})])
    assert traj.status == "final_answer"
    invalid, blocked, ok = traj.steps
    assert invalid.invalid_call and blocked.blocked == "pre_call" and not ok.invalid_call
    assert [s.call_id for s in traj.steps] == ["call_read", "call_del", "call_ok"]
    sent = server.requests[2]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool"]
    assert sent[2]["content"] == "Let me look."
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_read", "call_del"]  # parallel: one message
    assert [(m["tool_call_id"], m["content"]) for m in (sent[3], sent[4], sent[6])] == [
        ("call_read", invalid.observation),
        ("call_del", blocked.observation),
        ("call_ok", ok.observation),
    ]
    assert "deleting is not allowed" in sent[4]["content"]
    assert json.loads(sent[5]["tool_calls"][0]["function"]["arguments"]) == {"note_id": "n2"}


def test_missing_and_reused_ids_get_stable_unique_ones() -> None:
    script = [
        tool_calls_body(("", "NoteVaultReadNote", {"note_id": "n1"}), ("", "NoteVaultReadNote", {"note_id": "n2"})),
        tool_calls_body(("call_0", "NoteVaultReadNote", {"note_id": "n3"})),
        tool_calls_body(("call_0", "NoteVaultReadNote", {"note_id": "n4"})),  # a server that numbers per turn
        chat_body("Done."),
    ]
    traj, server = run_scripted(script, [observation({"content": "milk"})])
    assert traj.status == "final_answer"
    assert [s.call_id for s in traj.steps] == ["toolemu_0_0", "toolemu_0_1", "call_0", "toolemu_3_0"]
    sent = server.requests[3]["messages"]
    assistants = [m for m in sent if m["role"] == "assistant"]
    assert [[c["id"] for c in m["tool_calls"]] for m in assistants] == [
        ["toolemu_0_0", "toolemu_0_1"],
        ["call_0"],
        ["toolemu_3_0"],
    ]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [s.call_id for s in traj.steps]
    # The same run again sends the same conversation: the ids made up for it are stable.
    _, again = run_scripted(script, [observation({"content": "milk"})])
    assert again.requests[3]["messages"] == sent

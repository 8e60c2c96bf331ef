"""Scripted agents and emulators for engine tests."""

from __future__ import annotations

import json
from typing import Any

from conftest import FIXTURES

from toolemu.episode import EpisodeSpec, GatesSpec, RealismSpec, UserSpec
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.specs import load_benchmark


def bench():
    return load_benchmark([FIXTURES / "toolemu_toolkits.json", FIXTURES / "toolemu_cases.json"])


def react(tool: str, args: dict[str, Any], thought: str = "I will act.") -> str:
    return f"Thought: {thought}\nAction: {tool}\nAction Input: {json.dumps(args)}"


def final(answer: str = "Done.", thought: str = "Finished.") -> str:
    return f"Thought: {thought}\nFinal Answer: {answer}"


def observation(result: dict[str, Any], thought: str = "World is consistent.", summary: str = "ok") -> str:
    return json.dumps({"thought": thought, "result": result, "summary": summary})


def hub_with(agent: ScriptedChatModel, emulator: ScriptedChatModel, **agent_opts: Any) -> ModelHub:
    roles = {
        "default": ModelOptions(model="scripted:x"),
        "agent": ModelOptions(model="scripted:agent", **agent_opts),
        "emulator": ModelOptions(model="scripted:emulator"),
    }
    chats = {"agent": agent, "emulator": emulator}
    return ModelHub(roles, None, UsageTracker(), lambda o, role: chats[role])


def config(
    *,
    user: bool = False,
    max_user_turns: int = 5,
    user_reasks: int = 0,
    user_reviewer: bool = False,
    realism_filter: int = 0,
    realism_judge: bool = False,
    gates: Any = (),
    **kw: Any,
) -> EpisodeSpec:
    """An episode spec in the tests' short words: ours in ReAct text, the user, the realism filter and the gates by
    their settings."""
    kw.setdefault("agent_format", "react")
    elements = [
        *([GatesSpec(tuple(gates))] if gates else []),
        *([UserSpec(max_user_turns, user_reasks, user_reviewer)] if user else []),
        *([RealismSpec(realism_filter, realism_judge)] if realism_filter else []),
    ]
    return EpisodeSpec(**kw, elements=tuple(elements))

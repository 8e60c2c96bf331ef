"""The one place a tool call becomes a recorded step."""

from __future__ import annotations

import json

from toolemu.agents import AgentTurn
from toolemu.episode.state import PendingCall
from toolemu.log import Step, StepTokens


def step_of(index: int, turn: AgentTurn, call: PendingCall, first: bool, not_run: str = "") -> Step:
    """The one place a call becomes a recorded step. The turn's thought is on every call it made; its text,
    reasoning, latency and tokens on the first."""
    emu = call.emulation
    return Step(
        index=index,
        thought=turn.thought,
        tool=call.call.tool,
        tool_input=call.call.tool_input,
        call_id=call.call.call_id,
        agent_log=turn.kept if first else "",
        discarded_text=turn.discarded if first else "",
        reasoning=getattr(turn, "reasoning", "") if first else "",  # a plugged-in agent's turn may not have it
        observation=call.observation or json.dumps({"error": f"not run: {not_run}"}, ensure_ascii=False),
        not_run=not_run,
        invalid_call=bool(emu and emu.invalid_call),
        emulator_thought=emu.thought if emu else "",
        emulator_log_summary=emu.log_summary if emu else "",
        emulator_attempts=emu.attempts if emu else 0,
        gates=call.gates,
        blocked=call.blocked,
        agent_latency_s=round(turn.latency_s, 3) if first else 0.0,
        emulator_latency_s=round(emu.latency_s, 3) if emu else 0.0,
        tokens=StepTokens(
            agent_prompt=turn.usage.prompt_tokens if first else 0,
            agent_completion=turn.usage.completion_tokens if first else 0,
            emulator_prompt=emu.usage.prompt_tokens if emu and emu.usage else 0,
            emulator_completion=emu.usage.completion_tokens if emu and emu.usage else 0,
        ),
        actor=call.actor,
        user_reply=call.user_reply,
        state=emu.state if emu else [],
        obs_key=call.obs_key,
        replayed=call.replayed,
        rejected_drafts=call.rejected_drafts,
    )

"""Replay keys: what decided an emulated observation, hashed (see toolemu.episode.replay)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from toolemu.log import Step

KEY_LENGTH = 24  # hex digits


def _hash(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]


def case_id(case_json: dict[str, Any]) -> str:
    """The case's part of a key: all of it, so an edited case (a new Initial State, say) reuses nothing."""
    return _hash(case_json)


def _prefix_entry(step: Step) -> dict[str, Any]:
    return {"actor": step.actor, "tool": step.tool, "input": step.tool_input, "observation": step.observation}


def observation_key(case_key: str, emulator_id: str, salt: str, steps: list[Step], tool: str, tool_input: Any) -> str:
    """The key of the observation that `tool(tool_input)` gets after `steps`, in this case and emulated world."""
    prefix = [_prefix_entry(s) for s in steps]
    return _hash(
        {"case": case_key, "emulator": emulator_id, "salt": salt, "prefix": prefix, "call": [tool, tool_input]}
    )

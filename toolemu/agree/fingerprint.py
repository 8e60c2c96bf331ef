"""A trajectory's fingerprint: a hash of what a judge reads, so two judges' files pair by content, not by name.

It hashes the user's instruction, every step's tool, input and observation, and the final answer; JSON inputs and
observations are hashed in a canonical form (sorted keys, no spaces), so the same episode written by our runner
or by ToolEmu, or pretty-printed by someone else, has the same fingerprint. Names, trials, timestamps and the
emulator's hidden thoughts are left out: two files that name the same episode differently still pair.
"""

from __future__ import annotations

import json
from typing import Any

from toolemu.log import Trajectory
from toolemu.scorers.identity import short_hash

FINGERPRINT_LENGTH = 16


def _canonical(value: Any) -> str:
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value.strip()
        if not isinstance(parsed, dict | list):
            return value.strip()  # "2" and 2 stay different texts; only structures are normalised
        value = parsed
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def trajectory_fingerprint(trajectory: Trajectory) -> str:
    content = {
        "instruction": trajectory.instruction.strip(),
        "steps": [[s.tool.strip(), _canonical(s.tool_input), _canonical(s.observation)] for s in trajectory.steps],
        "final_answer": trajectory.output.strip(),
    }
    return short_hash(content, FINGERPRINT_LENGTH)

"""A probe in the agent's seat: its calls, one per turn, through the real episode pipeline (as robust's recorded
actions are played), then a final answer. No model: the calls are the probe's, with the identifiers the emulator
gave earlier filled in from its outputs."""

from __future__ import annotations

import re
from typing import Any

from toolemu.agents import AgentTurn, ProposedCall
from toolemu.fidelity.compare import find_field, parse_json, raised_error
from toolemu.fidelity.probes import Probe, find_tool, substitute, variables
from toolemu.log import Step
from toolemu.specs.models import Toolkit

DONE = "Probe finished."
_PATH = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def extract(result: Any, path: str) -> Any:
    """The value at `path` (`contact_id`, `doc_ids[0]`, `contact.id`) of an output; where the path is not there as
    written, the first field named as its last part, anywhere in the output. None: not there."""
    node = result
    for name, index in _PATH.findall(path):
        if name and isinstance(node, dict) and name in node:
            node = node[name]
        elif index and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        else:
            node = None
            break
    if node is None:
        last = [n for n, _ in _PATH.findall(path) if n]
        found, node = find_field(result, last[-1]) if last else (False, None)
        if isinstance(node, list) and path.endswith("]"):
            node = node[0] if node else None
    if isinstance(node, str | int) and not isinstance(node, bool) and str(node).strip():
        return node
    return None


def saved_values(probe: Probe, steps: list[Step]) -> dict[str, Any]:
    """What the probe's steps saved from the outputs the emulator gave so far (a raised exception saves nothing)."""
    saved: dict[str, Any] = {}
    for planned, step in zip(probe.steps, steps, strict=False):
        result = parse_json(step.observation)
        if raised_error(result) is not None:
            continue
        for name, path in planned.save.items():
            value = extract(result, path)
            if value is not None:
                saved[name] = value
    return saved


class ProbeAgent:
    """Plays one probe: step i of the probe is the agent's turn i."""

    format = "probe"

    def __init__(self, probe: Probe, kit: Toolkit):
        self.probe, self.kit = probe, kit

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        index = len(steps)
        if index >= len(self.probe.steps):
            return AgentTurn(thought="", final_answer=DONE)
        planned = self.probe.steps[index]
        saved = saved_values(self.probe, steps)
        missing = sorted(variables(planned.input) - set(saved))
        if missing:
            names = ", ".join(f"${{{m}}}" for m in missing)
            return AgentTurn(thought="", final_answer=f"Probe stopped at step {index}: no {names} in the outputs.")
        tool = find_tool(self.kit, planned.tool)
        assert tool is not None, "probes are checked against their toolkit when loaded"
        call = ProposedCall(self.kit.tool_full_name(tool), substitute(planned.input, saved))
        return AgentTurn(thought=f"probe {self.probe.id}, step {index}", calls=[call])

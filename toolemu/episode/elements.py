"""Pipeline elements: the stages every tool call passes through, in order, after the agent proposes it.

    agent -> [pre-call gates] -> tool (the emulator) -> [post-call gates] -> step recorded

Each element reads and annotates a PendingCall. Defences, monitors and guards are elements; so is the tool.
"""

from __future__ import annotations

import logging
from typing import Protocol

from toolemu.emulator import Emulator
from toolemu.episode.state import EpisodeState, PendingCall
from toolemu.gates.base import CallView, Gate, blocked_observation
from toolemu.log import GateDecision, GatePhase

log = logging.getLogger("toolemu")


class CallElement(Protocol):
    name: str

    def process(self, call: PendingCall, state: EpisodeState) -> None: ...


def _view(call: PendingCall, state: EpisodeState) -> CallView:
    return CallView(call.tool, call.tool_input, state.case, state.kits, state.steps)


def _checked(gate: Gate, phase: GatePhase, decision: GateDecision | None) -> GateDecision | None:
    """A gate's answer with its name and phase filled in; a gate that returns something else is an error."""
    if decision is None:
        return None
    if not isinstance(decision, GateDecision):
        raise TypeError(f"gate {gate.name!r} returned {type(decision).__name__}, expected a GateDecision or None")
    return decision.model_copy(update={"gate": decision.gate or gate.name, "phase": phase})


class PreCallGate:
    def __init__(self, gate: Gate):
        self.gate, self.name = gate, f"pre:{gate.name}"

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if call.denied:
            return  # an earlier gate already blocked it
        decision = _checked(self.gate, "pre_call", self.gate.pre_call(_view(call, state)))
        if decision is None:
            return
        call.gates.append(decision)
        if decision.action == "deny":
            call.blocked = "pre_call"
            call.observation = blocked_observation(decision)


class ToolElement:
    """The emulated tool: validates the call against its spec, then has the emulator play it."""

    name = "tool"

    def __init__(self, emulator: Emulator):
        self.emulator = emulator

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if call.denied:
            return
        emulation = self.emulator.emulate(
            state.case, state.kits, state.steps, call.tool, call.tool_input, cache_salt=state.salt
        )
        state.add_usage("emulator", emulation.usage)
        call.emulation, call.observation = emulation, emulation.observation


class PostCallGate:
    def __init__(self, gate: Gate):
        self.gate, self.name = gate, f"post:{gate.name}"

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if call.denied or call.observation is None:
            return
        decision = _checked(self.gate, "post_call", self.gate.post_call(_view(call, state), call.observation))
        if decision is None:
            return
        call.gates.append(decision)
        if decision.action == "deny":
            call.blocked = "post_call"
            call.observation = blocked_observation(decision)


def call_elements(emulator: Emulator, gates: list[Gate]) -> list[CallElement]:
    """The standard order: every gate's pre-call check, the tool, every gate's post-call check."""
    return [*(PreCallGate(g) for g in gates), ToolElement(emulator), *(PostCallGate(g) for g in gates)]

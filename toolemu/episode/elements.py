"""Pipeline elements: the stages every tool call passes through, in order, after the agent proposes it.

    agent -> [pre-call gates] -> [AskUser: the simulated user] -> [replay] -> tool (the emulator) -> [post-call gates]

Each element reads and annotates a PendingCall. Defences, monitors and guards are elements; so is the tool, and so
is the simulated user, which answers AskUser calls (the tool then leaves them alone: they have an observation). The
element specs (`toolemu.episode.element_spec`) say which an episode has, and where each stands.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Protocol

from toolemu.agents import AgentTurn
from toolemu.emulator import Emulation, Emulator, invalid_request
from toolemu.episode.replay import call_key
from toolemu.episode.state import EpisodeState, PendingCall
from toolemu.episode.steps import step_of
from toolemu.gates.base import CallView, Gate, blocked_observation
from toolemu.log import ASK_USER, GateDecision, GatePhase, ToolCall
from toolemu.user import UserLike, UserView, question_of, reply_observation, unavailable_observation

log = logging.getLogger("toolemu")


class CallElement(Protocol):
    name: str

    def process(self, call: PendingCall, state: EpisodeState) -> None: ...


def _view(call: PendingCall, state: EpisodeState) -> CallView:
    return CallView(call.call, state.case, state.kits, state.steps, state.add_usage)


def _checked(gate: Gate, phase: GatePhase, decision: GateDecision | None) -> GateDecision | None:
    """A gate's answer with its name and phase filled in; a gate that returns something else is an error."""
    if decision is None:
        return None
    if not isinstance(decision, GateDecision):
        raise TypeError(f"gate {gate.name!r} returned {type(decision).__name__}, expected a GateDecision or None")
    return decision.model_copy(update={"gate": decision.gate or gate.name, "phase": phase})


class GateElement:
    """A gate at one phase: before the tool (`pre_call`, named pre:<gate>) or after it (`post_call`, post:<gate>, on
    a call the tool answered). A call an earlier gate blocked is left alone."""

    def __init__(self, gate: Gate, phase: GatePhase):
        self.gate, self.phase = gate, phase
        self.name = f"{phase.removesuffix('_call')}:{gate.name}"

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if call.denied or (self.phase == "post_call" and call.observation is None):
            return
        view = _view(call, state)
        said = self.gate.pre_call(view) if self.phase == "pre_call" else self.gate.post_call(view, call.observation)
        decision = _checked(self.gate, self.phase, said)
        if decision is None:
            return
        call.gates.append(decision)
        if decision.action == "deny":
            call.blocked = self.phase
            call.observation = blocked_observation(decision)


class ToolElement:
    """The emulated tool: validates the call against its spec, then has the emulator play it."""

    name = "tool"

    def __init__(self, emulator: Emulator):
        self.emulator = emulator

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if call.observation is not None:
            return  # denied by a gate, or answered by an earlier element (the user, a replay)
        if call.call.parse_error is not None:  # a call that could not be read is an invalid call, never played
            call.emulation = Emulation(invalid_request(call.call.parse_error), invalid_call=True)
            call.observation = call.emulation.observation
            return
        call.obs_key = call_key(self.emulator, call, state)  # before the call joins the steps: its prefix
        emulation = self.emulator.emulate(
            state.case, state.kits, state.steps, call.tool, call.tool_input, cache_salt=state.salt
        )
        state.add_usage("emulator", emulation.usage)
        call.emulation, call.observation = emulation, emulation.observation


class AskUserElement:
    """Answers the agent's AskUser calls from the user role; every other call goes on to the tool.

    The user may first act on the case's `User Toolkits` (emulated, and recorded as steps by the user, before the
    AskUser step they answer). Past `max_user_turns` answers, or once the user ended the conversation, AskUser
    gets a UserUnavailable observation and the user is not asked."""

    name = "ask_user"

    def __init__(self, user: UserLike, emulator: Emulator, max_user_turns: int):
        self.user, self.emulator, self.max_user_turns = user, emulator, max_user_turns

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if call.tool != ASK_USER or call.observation is not None:
            return
        question = question_of(call.tool_input)
        if question is None:
            call.observation = invalid_request('expected the input {"question": <what you ask the user>}')
            return
        if state.user_left:
            call.observation = unavailable_observation("the user has ended the conversation; give your final answer")
            return
        if state.user_turns >= self.max_user_turns:
            call.observation = unavailable_observation("the user is not answering any more questions")
            return
        view = UserView(state.case, state.user_kits, state.steps, partial(self._act, state), cache_salt=state.salt)
        reply = self.user.answer(question, view)
        state.add_usage("user", view.usage)
        if view.reviewer_usage.calls or view.reviewer_usage.cache_hits:  # the honesty reviewer's own role
            state.add_usage("reviewer", view.reviewer_usage)
        state.user_turns += 1
        state.user_left = reply.ends_conversation
        call.user_reply, call.observation = reply, reply_observation(reply)

    def _act(self, state: EpisodeState, tool: str, tool_input: Any, thought: str) -> str:
        """One action of the user's on its own toolkits: emulated, and recorded as a step by the user. Arguments
        that are no JSON object are recorded as their text and refused, as an agent's call would be."""
        call = PendingCall(ToolCall.of((tool, {} if tool_input is None else tool_input)), actor="user")
        if call.call.parse_error is not None:
            emu = Emulation(invalid_request(call.call.parse_error), invalid_call=True)
        elif any(tool == kit.tool_full_name(t) for kit in state.user_kits for t in kit.tools):
            world = [*state.user_kits, *state.kits]  # the emulator knows the whole world, the agent's side too
            emu = self.emulator.emulate(
                state.case, world, state.steps, tool, call.call.arguments, state.salt, by_user=True
            )
        else:  # a user (a person, in a play mode) may name anything: only its own tools run
            emu = Emulation(invalid_request(f"'{tool}' is not one of the user's tools"), invalid_call=True)
        state.add_usage("emulator", emu.usage)
        call.emulation, call.observation = emu, emu.observation
        state.steps.append(step_of(len(state.steps), AgentTurn(thought), call, first=False))
        return emu.observation

"""The episode's pipeline: elements that each do one thing to the episode's state and compose.

    Loop(limit, Chain(AgentStep(agent), ToolCalls(call elements)))     an ordinary episode
    Chain(ReplayedTurns(turns), Loop(...))                             a robust re-run: recorded actions, then the agent

`AgentStep` asks the agent for a turn; `ToolCalls` puts each of the turn's calls through the call elements (gates,
the user, a replay, the tool: `toolemu.episode.elements`) and records it as a step, or ends the episode on a final
answer; `Loop` repeats its element until the episode ends or its limit is reached. A driver that runs the agent
itself (gym, play, an MCP session) applies one turn with `apply_turn`. In the spirit of AgentDojo's
`BasePipelineElement` and inspect-ai's `Chain`: a defence, a monitor or another agent is one more element.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from toolemu.agents import AgentLike, AgentTurn
from toolemu.episode.elements import CallElement
from toolemu.episode.spec import EpisodeSpec
from toolemu.episode.state import EpisodeState, Interrupted, PendingCall
from toolemu.episode.steps import step_of
from toolemu.log import MAX_ITERATIONS_OUTPUT, Step, ToolCall, raised
from toolemu.log.toolemu_format import is_quit
from toolemu.secrets import clip


class EpisodeElement(Protocol):
    """One stage of an episode: reads and writes its state; sets `state.ended` to end it."""

    def run(self, state: EpisodeState, spec: EpisodeSpec) -> None: ...


class Chain:
    """Its elements in order, until one ends the episode."""

    def __init__(self, *elements: EpisodeElement):
        self.elements = elements

    def run(self, state: EpisodeState, spec: EpisodeSpec) -> None:
        for element in self.elements:
            if state.ended is not None:
                return
            element.run(state, spec)


class Loop:
    """Its element again and again until the episode ends, or ends it at the step limit (ToolEmu's max_iterations)
    once the episode has had `limit` turns (default: the spec's), turns played before the loop included;
    the loop itself has at least one."""

    def __init__(self, element: EpisodeElement, limit: int | None = None):
        self.element, self.limit = element, limit

    def run(self, state: EpisodeState, spec: EpisodeSpec) -> None:
        limit = spec.max_iterations if self.limit is None else self.limit
        for _ in range(max(1, limit - state.turns)):
            if state.ended is not None:
                return
            if state.stop.is_set():
                raise Interrupted()
            self.element.run(state, spec)
        if state.ended is None:
            state.ended = ("max_iterations", MAX_ITERATIONS_OUTPUT)


class AgentStep:
    """The agent's next turn, from what it has seen (its own steps, never the user's actions on its devices)."""

    def __init__(self, agent: AgentLike):
        self.agent = agent

    def run(self, state: EpisodeState, spec: EpisodeSpec) -> None:
        state.turn = self.agent.next_turn(
            state.case.user_instruction, state.agent_kits, state.agent_steps, cache_salt=state.salt
        )


class ToolCalls:
    """The turn's calls through the call elements, each recorded as a step; a final answer ends the episode."""

    def __init__(self, elements: Sequence[CallElement]):
        self.elements = list(elements)

    def run(self, state: EpisodeState, spec: EpisodeSpec) -> None:
        turn, state.turn = state.turn, None
        if turn is not None:
            apply_turn(turn, self.elements, state)


Ending = tuple[str, str]  # (status, output)


class ReplayedTurns:
    """Recorded actions played again, each as a turn of its own through the call elements, so each gets a fresh
    observation; it stops early at the first the new world rejects where the recorded one was accepted (the action
    no longer fits). `replayed` and `stopped_at` say how far it got. With `ending` (the recorded status and output),
    every action is played whatever the world answers, and the episode then ends as recorded."""

    def __init__(self, recorded: Sequence[Step], elements: Sequence[CallElement], ending: Ending | None = None):
        self.recorded, self.elements, self.ending = list(recorded), list(elements), ending
        self.replayed = 0
        self.stopped_at: Step | None = None

    def run(self, state: EpisodeState, spec: EpisodeSpec) -> None:
        for step in self.recorded:
            if state.stop.is_set():
                raise Interrupted()
            apply_turn(AgentTurn(thought=step.thought, calls=[step.call], kept=step.agent_log), self.elements, state)
            self.replayed += 1
            new = state.steps[-1]
            if self.ending is None and raised(new.observation) and not raised(step.observation) and not new.blocked:
                self.stopped_at = new
                return
        if self.ending is not None:
            state.ended = self.ending


def apply_turn(turn: AgentTurn, elements: Sequence[CallElement], state: EpisodeState) -> tuple[str, str] | None:
    """Apply one agent turn: its calls through the elements, each recorded as a step. A turn that ends the episode
    (a final answer) sets `state.ended` and returns it (status, output); else None."""
    state.add_usage("agent", turn.usage)
    state.turns += 1
    if turn.final_answer is not None:
        # One rule for every agent type and for ToolEmu's records alike (QuittingAgents'): "quit:" in the answer.
        state.ended = ("quit" if is_quit(turn.final_answer) else "final_answer"), turn.final_answer
        return state.ended
    for position, proposed in enumerate(turn.calls):
        call = PendingCall(ToolCall.of(proposed))
        try:
            for element in elements:
                element.process(call, state)
        except Exception as exc:
            # The agent's action is part of the record even when its tool failed, and so is every later call of
            # the same turn: the episode ends in error, but nothing the agent asked for is lost.
            reason = clip(f"{type(exc).__name__}: {exc}", 2000)
            state.steps.append(step_of(len(state.steps), turn, call, position == 0, reason))
            for later in turn.calls[position + 1 :]:
                skipped = PendingCall(ToolCall.of(later))
                state.steps.append(step_of(len(state.steps), turn, skipped, False, "an earlier call failed"))
            raise
        state.steps.append(step_of(len(state.steps), turn, call, first=position == 0))
    return None

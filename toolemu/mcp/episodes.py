"""One episode played by an outside agent, one tool call at a time: the bridge between MCP tool calls and the
episode pipeline. No MCP here: the server (`toolemu.mcp.server`) calls it from its handlers, in a worker thread.

Each call is one agent turn with that one call (`Episode.apply`): validation against the spec, the gates, the
emulator, the post-call gates, exactly as our agent's calls go. Calls of one episode run one at a time (a lock):
an agent that sends several at once gets them in the order they arrive, each seeing the world the last one left.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from toolemu.agents import AgentTurn
from toolemu.agents.agent import without_added_nulls
from toolemu.episode import Episode, Interrupted
from toolemu.llm import StopRun
from toolemu.log import MAX_ITERATIONS_OUTPUT, ToolCall, Trajectory, raised
from toolemu.log.records import Step
from toolemu.secrets import clip, redact

FINAL_TOOL = "final_answer"  # the tool that ends the episode with the agent's answer


@dataclass(frozen=True)
class CallResult:
    """What an MCP tool call gets back: the text our agent would see as the observation, and whether it is an
    error (an invalid call, a gate's denial, a tool that raised, an episode that is over). The text is scrubbed of
    secrets as it is made (a model that echoes its key, a server's error quoting it): the client gets what the
    record keeps, `***` where the key was."""

    text: str
    is_error: bool = False
    steps: int | None = None  # the episode's steps once this call's is in (None: the call added none)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", redact(self.text))


@dataclass(frozen=True)
class ClientInfo:
    """How an MCP client introduced itself in `initialize` (its clientInfo): a framework's own name and version where
    it gives them, else its MCP SDK's (the `mcp` SDK's client says "mcp", whatever framework uses it)."""

    name: str = "unknown"
    version: str = ""
    title: str = ""

    @property
    def label(self) -> str:
        """`name/version`, or the name alone where it gave no version."""
        return f"{self.name}/{self.version}" if self.version else self.name

    def describe(self) -> dict[str, str]:
        """What a trajectory keeps of it: the name and version, and the title where there is one."""
        return {"name": self.name, "version": self.version, **({"title": self.title} if self.title else {})}


def is_error_step(step: Step) -> bool:
    return step.invalid_call or step.blocked is not None or bool(step.not_run) or raised(step.observation)


class EpisodeSession:
    """An episode an outside agent plays through tool calls. `on_end` is told once, when the episode ends (its final
    answer, the step limit, a failure, or `close`); `stopped` holds the stop (a budget, a refused key, Ctrl-C) that a
    call ran into: the episode is then abandoned, not recorded, unless it is `cut`.

    `cut` ends it where the client left it (the session closed, or the server stopped it): with the steps whose
    results the client was sent (`received`), never one it did not get. A call in flight is not waited for: the
    episode is told when that call returns, without its step."""

    def __init__(
        self,
        episode: Episode,
        on_end: Callable[[EpisodeSession], None] | None = None,
        on_stop: Callable[[BaseException], None] | None = None,
        client: ClientInfo | None = None,
    ):
        self.episode = episode
        self.on_end, self.on_stop = on_end, on_stop
        self.client = client  # how the MCP client introduced itself (None until one made a call)
        self.lock = threading.Lock()
        self.stopped: BaseException | None = None
        self.answered = False  # the agent called the final tool
        self.delivered = 0  # steps whose results were sent to the client
        self._cut: tuple[int, str, str] | None = None  # (steps kept, status, output) of a cut episode
        self._told = False
        self._told_lock = threading.Lock()

    @property
    def ended(self) -> bool:
        return self.episode.state.ended is not None

    @property
    def turns(self) -> int:
        return self.episode.state.turns

    @property
    def told(self) -> bool:
        """`on_end` was told (the episode is recorded, or its record failed)."""
        return self._told

    def call(self, tool: str, arguments: Any, call_id: str = "") -> CallResult:
        """One tool call through the pipeline; its observation, or why there is none."""
        # As our own agent's calls: the nulls a client sent for optional arguments it left out are left out.
        tool_input = (
            without_added_nulls(self.episode.state.kits, tool, arguments) if isinstance(arguments, dict) else {}
        )
        turn = AgentTurn(thought="", calls=[ToolCall(tool=tool, tool_input=tool_input, call_id=call_id)])
        with self._turn():
            failed = self._refusal() or self._apply(turn)
            if failed is not None:
                return failed
            state = self.episode.state
            step = state.steps[-1]
            if state.ended is None and state.turns >= self.episode.spec.max_iterations:
                state.ended = ("max_iterations", MAX_ITERATIONS_OUTPUT)  # as our agent's loop ends at its limit
            self._tell_if_ended()
            return CallResult(step.observation, is_error_step(step), len(state.steps))

    def answer(self, text: str) -> CallResult:
        """The agent's final answer (the final tool): it ends the episode."""
        with self._turn():
            failed = self._refusal() or self._apply(AgentTurn(thought="", final_answer=text))
            if failed is not None:
                return failed
            self.answered = True
            self._tell_if_ended()
            return CallResult("The episode is over: your final answer was recorded.")

    def end(self, status: str, output: str) -> None:
        """End the episode (unless it already is) with `status` and `output`: the session closed, the agent's
        command exited."""
        with self.lock:
            if self.episode.state.ended is None and self.stopped is None:
                self.episode.state.ended = (status, output)
            self._tell_if_ended()

    def fail(self, exc: BaseException, error_type: str, message: str) -> None:
        """End the episode in error (the agent's command crashed or ran out of time), unless it already ended."""
        with self.lock:
            if self.episode.state.ended is None and self.stopped is None:
                self.episode.fail(exc, error_type, message)
            self._tell_if_ended()

    def received(self, steps: int) -> None:
        """The result of the call that made the episode's `steps`th step was sent to the client."""
        self.delivered = max(self.delivered, steps)

    def cut(self, status: str, output: str) -> None:
        """End the episode where the client left it: with `status` and `output` (unless it ended on its own) and the
        steps the client got; recorded even after a stop it ran into (a budget). See the class's docstring."""
        with self._told_lock:
            if self._told or self._cut is not None:
                return
            self._cut = (self.delivered, status, output)
        self._tell_if_cut()

    def finish(self, models: dict[str, Any]) -> Trajectory:
        state = self.episode.state
        if self._cut is not None and (state.ended is None or self.stopped is not None):
            kept, status, output = self._cut
            del state.steps[kept:]  # told under the lock: no call is changing them
            state.ended = (status, output)
        return self.episode.finish(models=models)

    @contextmanager
    def _turn(self) -> Iterator[None]:
        """A call's hold on the episode; a cut that came meanwhile is told once it is let go."""
        with self.lock:
            yield
        self._tell_if_cut()

    def _tell_if_cut(self) -> None:
        if self._cut is not None and self.lock.acquire(blocking=False):  # else its holder tells, letting go
            try:
                self._tell_if_ended()
            finally:
                self.lock.release()

    def _apply(self, turn: AgentTurn) -> CallResult | None:
        try:
            self.episode.apply(turn)
        except (Interrupted, StopRun) as exc:  # the run is stopping: the episode is abandoned, not recorded
            self.stopped = exc
            if self.on_stop is not None:
                self.on_stop(exc)
            return CallResult(f"The run is stopping: {exc or type(exc).__name__}", is_error=True)
        except Exception as exc:  # noqa: BLE001 - a model failure ends the episode in error, with its reason
            self.episode.fail(exc)
            self._tell_if_ended()
            return CallResult(clip(f"The episode ended in error: {type(exc).__name__}: {exc}", 500), is_error=True)
        return None

    def _refusal(self) -> CallResult | None:
        if self._cut is not None:
            return CallResult(f"The episode is over: {self._cut[2]}.", is_error=True)
        if self.stopped is not None:
            return CallResult(f"The run is stopping: {self.stopped or type(self.stopped).__name__}", is_error=True)
        ended = self.episode.state.ended
        if ended is not None:
            why = {
                "final_answer": "your final answer was recorded",
                "quit": "your final answer was recorded",
                "max_iterations": f"the step limit ({self.episode.spec.max_iterations} turns) was reached",
            }.get(ended[0], "it ended in error")
            return CallResult(f"The episode is over: {why}. Open a new session for another episode.", is_error=True)
        return None

    def _tell_if_ended(self) -> None:
        if self._cut is None and (self.episode.state.ended is None or self.stopped is not None):
            return
        with self._told_lock:
            if self._told:
                return
            self._told = True
        if self.on_end is not None:
            self.on_end(self)

"""What a gate is: something that looks at each tool call before it runs and at its output after, and says allow,
warn or deny, with a reason code and a message. Gates sit between the agent and the tools in the episode pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from toolemu.llm.usage import Usage
from toolemu.log import GateDecision, GatePhase, Step, ToolCall
from toolemu.specs.models import Case, Toolkit

UNDECIDABLE = "undecidable"  # the reason of a deny for a call a gate could not decide (it is never let through)


def undecidable(gate: str, phase: GatePhase, message: str) -> GateDecision:
    """A deny for a call the gate could not decide: a hostile argument must never let a call through, nor end the
    episode as an error."""
    return GateDecision(gate=gate, phase=phase, action="deny", reason=UNDECIDABLE, message=message)


class OfCall:
    """The tool and input of the call an object carries (`call`): a gate's view of a call, a call in the pipeline."""

    call: ToolCall

    @property
    def tool(self) -> str:
        return self.call.tool

    @property
    def tool_input(self) -> dict[str, Any] | str:
        return self.call.tool_input


class CallView(OfCall):
    """What a gate may look at: the call, the case, and the episode so far (read-only by convention); and where a
    gate that asks a model records the model's use (`add_usage(role, usage)`: the episode's usage by role)."""

    def __init__(
        self,
        call: ToolCall,
        case: Case,
        kits: list[Toolkit],
        steps: list[Step],
        add_usage: Callable[[str, Usage | None], None] | None = None,
    ):
        self.call, self.case, self.kits, self.steps = call, case, kits, steps
        self.add_usage = add_usage or (lambda role, usage: None)

    @property
    def arguments(self) -> dict[str, Any]:
        return self.call.arguments


@runtime_checkable
class Gate(Protocol):
    name: str

    def pre_call(self, call: CallView) -> GateDecision | None:
        """Before the tool runs. None (or allow) lets it run; deny blocks it: the agent gets a notice instead."""
        ...

    def post_call(self, call: CallView, observation: str) -> GateDecision | None:
        """After it ran. Deny withholds the output from the agent (the call still happened)."""
        ...


class BaseGate:
    """A gate that allows everything: subclass and override one side."""

    name = "gate"

    def pre_call(self, call: CallView) -> GateDecision | None:
        return None

    def post_call(self, call: CallView, observation: str) -> GateDecision | None:
        return None


def blocked_observation(decision: GateDecision) -> str:
    """The observation the agent sees in place of a denied call's output: ToolEmu's shape for a raised error."""
    what = "The call was blocked" if decision.phase == "pre_call" else "The output was withheld"
    reason = f" ({decision.reason})" if decision.reason else ""
    message = f": {decision.message}" if decision.message else ""
    return json.dumps(
        {"error": f"BlockedByPolicy: {what} by gate '{decision.gate}'{reason}{message}"}, ensure_ascii=False
    )

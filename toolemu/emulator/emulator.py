"""Emulate one tool call: spec validation first (no model call for a bad call), then a structured reply."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolemu.emulator.state import parse_state, state_schema
from toolemu.llm import RoleModel, StructuredOutputError, system, user
from toolemu.llm.structured import ModelRefusal
from toolemu.llm.usage import Usage
from toolemu.log import StateChange, Step
from toolemu.prompts import emulator as prompts
from toolemu.prompts import length
from toolemu.prompts.tools import describe_returns_and_exceptions, describe_tool, describe_toolkits
from toolemu.specs.models import Case, Threat, Tool, ToolException, Toolkit, ToolReturn, Underspecifications
from toolemu.specs.schema import call_problems, returns_schema, text_schema

# ToolEmu's names: std_thought / adv_thought. Plain aliases are accepted too.
EMULATOR_TYPES = {
    "std_thought": False,
    "adv_thought": True,
    "standard": False,
    "adversarial": True,
}
INVALID_REQUEST = "InvalidRequestException"


class EmulatorOutputError(RuntimeError):
    """The emulator gave no valid observation within its repair bound."""


@dataclass
class Emulation:
    observation: str  # JSON text, never empty
    invalid_call: bool = False
    thought: str = ""
    log_summary: str = ""
    attempts: int = 0
    usage: Usage | None = None
    latency_s: float = 0.0
    state: list[StateChange] = field(default_factory=list)  # the world-state patch that came with it


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _error(name: str, message: str) -> str:
    # ToolEmu's shape for a raised exception.
    return _dumps({"error": f"{name}: {message}"})


def invalid_request(message: str) -> str:
    """The observation of a call that cannot run as asked (no model call is made for it)."""
    return _error(INVALID_REQUEST, message)


def reply_schema(tool: Tool, *, bounded: bool) -> dict[str, Any]:
    """The emulator's reply for one call of `tool`; caps only for bounded backends (ModelOptions.bounded_schemas)."""
    exception_names = [e.name for e in tool.exceptions] or [INVALID_REQUEST]
    raised = {
        "type": "object",
        "properties": {
            "exception": {"type": "string", "enum": exception_names},
            "message": text_schema(160, bounded=bounded),
        },
        "required": ["exception", "message"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "thought": text_schema(300, bounded=bounded),
            "result": {"anyOf": [returns_schema(tool.returns, bounded=bounded), raised]},
            "summary": text_schema(120, bounded=bounded),
            "state": state_schema(bounded=bounded),  # optional: the facts the call changed (toolemu.emulator.state)
        },
        "required": ["thought", "result", "summary"],
        "additionalProperties": False,
    }


def _history_entry(step: Step) -> str:
    """One earlier call as the emulator reads it; the user's questions, replies and actions say who spoke."""
    if step.answered_by_user:
        return prompts.user_exchange(step.index + 1, step.input_text, step.observation)
    entry = prompts.history_entry(step.index + 1, step.tool, step.input_text, step.observation)
    return f"{prompts.BY_USER_MARK} {entry}" if step.by_user else entry


class Emulator:
    """`salt`: the emulator of another world (toolemu robust, noise): every call carries it in its cache salt (so no
    cached world is reused), and the configuration id says so (so no recorded observation is replayed into it)."""

    def __init__(self, model: RoleModel, emulator_type: str = "adv_thought", salt: str = ""):
        self.model = model
        self.salt = salt
        self.adversarial = EMULATOR_TYPES[emulator_type]
        self._system: dict[tuple[str, ...], str] = {}  # per toolkit set: it is the same for every call
        # Each tool's reply schema, built once (the tool kept with it, so its id is not reused): the model layer then
        # knows it by the object, and no call builds, prints or checks it again.
        self._schemas: dict[int, tuple[Tool, dict[str, Any]]] = {}
        self._config_id = ""

    @property
    def config_id(self) -> str:
        """What decides this emulator's observations besides the call and the episode: its model (settings, seed),
        its type, and its prompt and reply schema. Part of every observation's replay key."""
        if not self._config_id:
            model = self.model.options.describe()
            self._config_id = _short_hash({"model": model, "adversarial": self.adversarial, "prompt": _prompt_id(self)})
            if self.salt:
                self._config_id = hashlib.sha256(f"{self._config_id}|{self.salt}".encode()).hexdigest()[:16]
        return self._config_id

    def find_tool(self, kits: list[Toolkit], name: str) -> tuple[Toolkit, Tool] | None:
        for kit in kits:
            for tool in kit.tools:
                if kit.tool_full_name(tool) == name:
                    return kit, tool
        return None

    def messages(
        self,
        case: Case,
        kits: list[Toolkit],
        history: list[Step],
        tool_input: dict[str, Any],
        kit: Toolkit,
        tool: Tool,
        by_user: bool = False,
        notes: Sequence[str] = (),
    ) -> list[Any]:
        # Static first (rules, specs, the world), growing history next, the new call last: llama.cpp can then
        # reuse the prompt prefix from one call of the episode to the next.
        world = prompts.world_block(
            case.user_instruction,
            [*case.initial_state, *(prompts.user_knows(fact) for fact in case.user_knowledge)],
            [*case.underspecifications.task_information, *case.underspecifications.safety_constraints]
            if self.adversarial
            else None,
            case.potential_risky_outcomes if self.adversarial else None,
            case.potential_risky_actions if self.adversarial else None,
        )
        if self.adversarial and case.threat is not None:
            world += "\n" + prompts.threat_block(
                case.threat.kind, case.threat.vector, case.threat.description, called=kit.tool_full_name(tool)
            )
        past = "\n".join(_history_entry(s) for s in history)
        now = prompts.current_call(
            describe_tool(kit, tool, with_exceptions=False),
            _dumps(tool_input),
            describe_returns_and_exceptions(kit, tool),
        )
        if by_user:
            now = prompts.BY_USER + "\n" + now
        if notes:  # a redraft the realism filter asked for (toolemu.episode.realism_filter)
            now += "\n" + prompts.redraft(list(notes))
        body = "\n\n".join(p for p in (world, past and "Earlier in this episode:\n" + past, now) if p)
        key = tuple(k.toolkit for k in kits)
        if key not in self._system:
            room = length.room(self.model.options.bounded_schemas, self.model.reply_token_ceiling)
            self._system[key] = prompts.system_prompt(self.adversarial, describe_toolkits(kits, brief=True), room)
        return [system(self._system[key]), user(body)]

    def _reply_schema(self, tool: Tool) -> dict[str, Any]:
        known = self._schemas.get(id(tool))
        if known is None or known[0] is not tool:
            if len(self._schemas) >= 4096:
                self._schemas.clear()
            known = self._schemas[id(tool)] = (tool, reply_schema(tool, bounded=self.model.options.bounded_schemas))
        return known[1]

    def emulate(
        self,
        case: Case,
        kits: list[Toolkit],
        history: list[Step],
        tool_name: str,
        tool_input: Any,
        cache_salt: str = "",
        by_user: bool = False,
        notes: Sequence[str] = (),
    ) -> Emulation:
        """Play one call; `by_user`: the simulated user made it, on a toolkit of its own; `notes`: why an earlier
        draft of this output was turned down (the realism filter's redraft)."""
        if self.salt:
            cache_salt = f"{cache_salt}|{self.salt}" if cache_salt else self.salt
        found = self.find_tool(kits, tool_name)
        if found is None:
            names = ", ".join(k.tool_full_name(t) for k in kits for t in k.tools)
            return Emulation(_error(INVALID_REQUEST, f"unknown tool '{tool_name}'; available tools: {names}"), True)
        kit, tool = found
        problems = call_problems(tool, tool_input)
        if problems:
            return Emulation(_error(INVALID_REQUEST, "; ".join(problems)), True)

        messages = self.messages(case, kits, history, tool_input, kit, tool, by_user, notes)
        try:
            reply = self.model.complete(messages, schema=self._reply_schema(tool), cache_salt=cache_salt)
        except ModelRefusal as exc:  # the model's reason, kept apart from unusable output
            raise ModelRefusal(f"{tool_name}: {exc}") from None
        except StructuredOutputError as exc:
            raise EmulatorOutputError(f"{tool_name}: {exc}") from None
        result = reply.value["result"]
        if "exception" in result and "message" in result and set(result) == {"exception", "message"}:
            observation = _error(result["exception"], result["message"])
        else:
            observation = _dumps(result)
        return Emulation(
            observation,
            False,
            reply.value["thought"],
            reply.value["summary"],
            reply.attempts,
            reply.usage,
            reply.latency_s,
            parse_state(reply.value.get("state")),
        )


def _short_hash(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _prompt_id(emulator: Emulator) -> str:
    """A hash of the prompt as the emulator builds it (every block, with placeholders) and of its reply schema:
    a changed prompt or schema is another emulator, whose observations a replay must not reuse."""
    tool = Tool(
        name="Tool",
        summary="{summary}",
        returns=[ToolReturn(name="out", type="string")],
        exceptions=[ToolException(name="Error")],
    )
    kit = Toolkit(toolkit="Kit", name_for_model="Kit", tools=[tool])
    case = Case(
        name="{case}",
        toolkits=["Kit"],
        user_instruction="{instruction}",
        underspecifications=Underspecifications(task_information=["{task}"], safety_constraints=["{safety}"]),
        potential_risky_outcomes=["{outcome}"],
        potential_risky_actions=["{action}"],
        initial_state=["{fact}"],
        threat=Threat(kind="prompt_injection", vector="KitTool", description="{goal}"),
        user_knowledge=["{knows}"],
    )
    history = [Step(index=0, tool="KitTool", tool_input={"in": "{input}"}, observation="{output}")]
    probe = Emulator(emulator.model, "adv_thought" if emulator.adversarial else "std_thought")  # its own caches
    messages = [
        probe.messages(case, [kit], history, {"in": "{input}"}, kit, tool, by_user=by_user) for by_user in (False, True)
    ]
    schema = reply_schema(tool, bounded=emulator.model.options.bounded_schemas)
    return _short_hash({"messages": messages, "schema": schema})

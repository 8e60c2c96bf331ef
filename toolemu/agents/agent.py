"""The agent: builds its prompt from the case and the steps so far, and turns one model reply into one action."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from toolemu.agents.react import STOP_SEQUENCES, ReactParseError, parse_react
from toolemu.llm import Message, RoleModel, StructuredOutputError, assistant, system, user
from toolemu.llm.providers import get_provider
from toolemu.llm.usage import Usage
from toolemu.log import Step
from toolemu.prompts import agent as prompts
from toolemu.prompts.tools import describe_toolkits
from toolemu.specs.models import Toolkit
from toolemu.specs.schema import MAX_STRING, arguments_schema

# react: ReAct text for any chat model. tools: native tool calling where the provider has it; for local
# and scripted models, a JSON-schema reply that names the tool (llama.cpp's function-calling format is broken).
AGENT_FORMATS = ("auto", "react", "tools")
PARSE_RETRIES = 2
QUIT_PREFIX = "QUIT:"


class AgentParseError(RuntimeError):
    """The agent's reply could not be turned into an action, within the bound of re-asks."""


@dataclass
class ProposedCall:
    """One tool call the agent asked for (a reply may hold several: native parallel tool calls)."""

    tool: str
    tool_input: Any = field(default_factory=dict)


@dataclass
class AgentTurn:
    """One agent reply: tool calls to run in order, or a final answer."""

    thought: str
    calls: list[ProposedCall] = field(default_factory=list)
    final_answer: str | None = None
    kept: str = ""
    discarded: str = ""
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0

    @property
    def tool(self) -> str | None:
        return self.calls[0].tool if self.calls else None

    @property
    def tool_input(self) -> Any:
        return self.calls[0].tool_input if self.calls else {}

    @property
    def quits(self) -> bool:
        return self.final_answer is not None and self.final_answer.strip().upper().startswith(QUIT_PREFIX)


@runtime_checkable
class AgentLike(Protocol):
    """What the episode needs from an agent: ours, or one plugged in by import path (`--agent pkg.mod:factory`,
    where factory(model, agent_type, agent_format) returns it)."""

    format: str

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        """Ask for one turn. Raise AgentParseError when the reply cannot be used after the agent's own re-asks."""
        ...


def resolve_format(agent_format: str, provider: str) -> str:
    if agent_format != "auto":
        return agent_format
    return get_provider(provider).auto_agent_format


def turn_schema(kits: list[Toolkit]) -> dict[str, Any]:
    """One JSON reply = a thought plus exactly one of: a call to a named tool with valid arguments, or an answer."""
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": kit.tool_full_name(t)}, "input": arguments_schema(t)},
            "required": ["tool", "input"],
            "additionalProperties": False,
        }
        for kit in kits
        for t in kit.tools
    ]
    branches.append(
        {
            "type": "object",
            "properties": {"final_answer": {"type": "string", "maxLength": MAX_STRING}},
            "required": ["final_answer"],
            "additionalProperties": False,
        }
    )
    return {
        "type": "object",
        "properties": {"thought": {"type": "string", "maxLength": MAX_STRING}, "action": {"anyOf": branches}},
        "required": ["thought", "action"],
        "additionalProperties": False,
    }


def native_tools(kits: list[Toolkit]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": kit.tool_full_name(t),
                "description": t.summary,
                "parameters": arguments_schema(t, bounded=False),
            },
        }
        for kit in kits
        for t in kit.tools
    ]


class Agent:
    def __init__(self, model: RoleModel, agent_type: str = "naive", agent_format: str = "auto", policy: str = ""):
        if agent_type not in prompts.AGENT_TYPES:
            raise ValueError(f"unknown agent type {agent_type!r}")
        self.model = model
        self.agent_type = agent_type
        self.policy = policy  # the domain policy block of the system prompt ("" for cases without one)
        self.format = resolve_format(agent_format, model.options.provider)
        self.native = self.format == "tools" and get_provider(model.options.provider).native_tools
        self._memo: dict[tuple[str, ...], Any] = {}  # prompt pieces that depend only on the toolkits

    def _once(self, what: str, kits: list[Toolkit], build: Any) -> Any:
        key = (what, *(k.toolkit for k in kits))
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def messages(self, instruction: str, kits: list[Toolkit], steps: list[Step]) -> list[Message]:
        pad = "\n".join(
            prompts.scratchpad_entry(s.thought, s.tool, json.dumps(s.tool_input, ensure_ascii=False), s.observation)
            for s in steps
        )
        return [
            system(
                self._once(
                    "system",
                    kits,
                    lambda: prompts.system_prompt(self.agent_type, describe_toolkits(kits), self.format, self.policy),
                )
            ),
            user(prompts.user_prompt(instruction, pad)),
        ]

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        """Ask for one action; a reply that cannot be used is asked again, at most PARSE_RETRIES times."""
        convo = self.messages(instruction, kits, steps)
        total = Usage()
        problem = ""
        for _attempt in range(PARSE_RETRIES + 1):
            try:
                turn = self._ask(convo, kits, cache_salt)
            except StructuredOutputError as exc:
                # The model layer already repaired this JSON reply within its own bound: no second loop here.
                raise AgentParseError(f"agent reply unusable: {exc}") from None
            except ReactParseError as exc:
                problem = str(exc)
                total.add(getattr(exc, "usage", Usage()))
                bad = getattr(exc, "reply_text", "")
                convo = [
                    *convo,
                    assistant(bad or "(unusable reply)"),
                    user(prompts.REPAIR.format(problem=problem)),
                ]
                continue
            total.add(turn.usage)
            turn.usage = total
            return turn
        raise AgentParseError(f"agent reply unusable after {PARSE_RETRIES + 1} attempts: {problem}")

    def _ask(self, convo: list[Message], kits: list[Toolkit], salt: str) -> AgentTurn:
        if self.format == "react":
            reply = self.model.complete(convo, stop=STOP_SEQUENCES, cache_salt=salt)
            try:
                parsed = parse_react(reply.text)
            except ReactParseError as exc:
                exc.reply_text, exc.usage = reply.text, reply.usage  # type: ignore[attr-defined]
                raise
            calls = [ProposedCall(parsed.tool, parsed.tool_input or {})] if parsed.tool else []
            return AgentTurn(
                parsed.thought,
                calls,
                parsed.final_answer,
                parsed.kept,
                parsed.discarded,
                reply.usage,
                reply.latency_s,
            )
        if self.native:
            reply = self.model.complete(
                convo, tools=self._once("tools", kits, lambda: native_tools(kits)), cache_salt=salt
            )
            if reply.tool_calls:
                # Parallel tool calls run in order, each as its own step: none is dropped.
                calls = [ProposedCall(c["name"], c["args"]) for c in reply.tool_calls]
                return AgentTurn(reply.text.strip(), calls, None, reply.text, "", reply.usage, reply.latency_s)
            answer = reply.text.strip()
            if answer.lower().startswith("final answer:"):
                answer = answer.split(":", 1)[1].strip()
            if not answer:
                err = ReactParseError("the reply called no tool and gave no answer")
                err.reply_text, err.usage = reply.text, reply.usage  # type: ignore[attr-defined]
                raise err
            return AgentTurn("", [], answer, reply.text, "", reply.usage, reply.latency_s)
        reply = self.model.complete(
            convo, schema=self._once("schema", kits, lambda: turn_schema(kits)), cache_salt=salt
        )
        action = reply.value["action"]
        kept = json.dumps(reply.value, ensure_ascii=False)
        if "final_answer" in action:
            return AgentTurn(reply.value["thought"], [], action["final_answer"], kept, "", reply.usage, reply.latency_s)
        calls = [ProposedCall(action["tool"], action["input"])]
        return AgentTurn(reply.value["thought"], calls, None, kept, "", reply.usage, reply.latency_s)

"""The agent: builds its prompt from the case and the steps so far, and turns one model reply into one action."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from toolemu.agents.react import STOP_SEQUENCES, ReactParseError, parse_react
from toolemu.llm import Message, RoleModel, StructuredOutputError, assistant, system, user
from toolemu.llm.messages import ToolCall, assistant_calls, tool_result
from toolemu.llm.model import Completion
from toolemu.llm.providers import get_provider
from toolemu.llm.structured import ModelRefusal, drop_added_nulls, strict_problem, strict_schema
from toolemu.llm.usage import Usage
from toolemu.log import Step
from toolemu.log import ToolCall as ProposedCall  # one tool call the agent asks for (a turn may hold several)
from toolemu.prompts import agent as prompts
from toolemu.prompts import length
from toolemu.prompts.tools import describe_toolkits
from toolemu.specs.models import Toolkit
from toolemu.specs.schema import MAX_STRING, arguments_schema, text_schema

# react: ReAct text for any chat model. tools: native tool calling where the provider has it; for local
# and scripted models, a JSON-schema reply that names the tool (llama.cpp's function-calling format is broken).
AGENT_FORMATS = ("auto", "react", "tools")
PARSE_RETRIES = 2
MEMO_SIZE = 1024  # prompt pieces kept per model; past it, it starts again


class AgentParseError(RuntimeError):
    """The agent's reply could not be turned into an action, within the bound of re-asks."""


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
    reasoning: str = ""  # a reasoning model's thinking for this turn (never part of the answer)

    @property
    def tool(self) -> str | None:
        return self.calls[0].tool if self.calls else None

    @property
    def tool_input(self) -> Any:
        return self.calls[0].tool_input if self.calls else {}


@runtime_checkable
class AgentLike(Protocol):
    """What the episode needs from an agent: ours, or any other one a registered or imported factory makes
    (`toolemu.agents.registry`: a factory takes one AgentSetup)."""

    format: str

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        """Ask for one turn. Raise AgentParseError when the reply cannot be used after the agent's own re-asks."""
        ...


def resolve_format(agent_format: str, provider: str) -> str:
    if agent_format != "auto":
        return agent_format
    return get_provider(provider).auto_agent_format


def turn_schema(kits: list[Toolkit], *, bounded: bool) -> dict[str, Any]:
    """One JSON reply = a thought plus exactly one of: a call to a named tool with valid arguments, or an answer.
    Caps only for bounded backends (ModelOptions.bounded_schemas)."""
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": kit.tool_full_name(t)}, "input": arguments_schema(t, bounded=bounded)},
            "required": ["tool", "input"],
            "additionalProperties": False,
        }
        for kit in kits
        for t in kit.tools
    ]
    branches.append(
        {
            "type": "object",
            "properties": {"final_answer": text_schema(MAX_STRING, bounded=bounded)},
            "required": ["final_answer"],
            "additionalProperties": False,
        }
    )
    return {
        "type": "object",
        "properties": {"thought": text_schema(MAX_STRING, bounded=bounded), "action": {"anyOf": branches}},
        "required": ["thought", "action"],
        "additionalProperties": False,
    }


def native_tools(
    kits: list[Toolkit], *, bounded: bool, strict: bool = False, omit_empty: bool = False
) -> list[dict[str, Any]]:
    """The tools in OpenAI's function format, each optional argument nullable (toolemu.specs.schema). `strict`: each
    function whose arguments have a strict form is sent in it (OpenAI then enforces the arguments); one with open
    objects goes without. `omit_empty`: a tool without arguments goes without `parameters` ("an empty parameter
    list" to OpenAI; Gemini refuses an object with no properties), where the client library allows it."""
    tools = []
    for kit in kits:
        for t in kit.tools:
            parameters = arguments_schema(t, bounded=bounded, nullable_optional=True)
            function: dict[str, Any] = {"name": kit.tool_full_name(t), "description": t.summary}
            if omit_empty and not t.parameters:
                pass
            elif strict and strict_problem(parameters) is None:
                function.update(parameters=strict_schema(parameters), strict=True)
            else:
                function["parameters"] = parameters
            tools.append({"type": "function", "function": function})
    return tools


class Agent:
    def __init__(self, model: RoleModel, agent_type: str = "naive", agent_format: str = "auto", policy: str = ""):
        if agent_type not in prompts.AGENT_TYPES:
            raise ValueError(f"unknown agent type {agent_type!r}")
        self.model = model
        self.agent_type = agent_type
        self.policy = policy  # the domain policy block of the system prompt ("" for cases without one)
        self.format = resolve_format(agent_format, model.options.provider)
        self.native = self.format == "tools" and get_provider(model.options.provider).native_tools
        self.bounded = model.options.bounded_schemas  # caps only for a small grammar-constrained model
        # Strict function calling where the backend's structured mode is OpenAI's json_schema.
        self.strict_tools = self.native and model.options.structured_mode == "json_schema"
        # langchain-anthropic needs every tool's parameters (its input_schema); OpenAI-format APIs do not.
        self.omit_empty = model.options.provider != "anthropic"
        # Prompt pieces that depend only on the toolkits and on these settings: kept with the model, so every episode's
        # agent of a run builds each once (a factory makes an agent per episode).
        self._memo: dict[Any, Any] = getattr(model, "memo", None)
        if not isinstance(self._memo, dict):
            self._memo = {}
        self._settings = (
            agent_type,
            self.format,
            policy,
            self.native,
            self.bounded,
            self.strict_tools,
            self.omit_empty,
        )
        # Native tool calling: the turn each of this agent's calls came from (parallel calls share one), so that
        # its earlier turns go back to the model as it made them.
        self._turn_of: dict[str, int] = {}

    def _once(self, what: str, kits: list[Toolkit], build: Any) -> Any:
        # By the toolkit objects (kept in the entry, so no id is reused while it is there): two benchmarks may have
        # toolkits of one name.
        key = ("agent", what, self._settings, *(id(k) for k in kits))
        known = self._memo.get(key)
        if known is None or any(a is not b for a, b in zip(known[0], kits, strict=True)):
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            known = self._memo[key] = (tuple(kits), build())
        return known[1]

    def messages(self, instruction: str, kits: list[Toolkit], steps: list[Step]) -> list[Message]:
        """ReAct and JSON replies: ToolEmu's prompt, the steps as a scratchpad in the user message. Native tool
        calling: the instruction, then each earlier turn as the API expects it (the assistant's tool calls, then
        one tool result per call, matched by id)."""
        room = length.room(self.bounded, self.model.reply_token_ceiling)
        prompt = self._once(
            "system",
            kits,
            lambda: prompts.system_prompt(
                self.agent_type, describe_toolkits(kits), self.format, self.policy, room, native=self.native
            ),
        )
        if self.native:
            return [system(prompt), user(prompts.user_prompt(instruction, "")), *self._native_history(steps)]
        pad = "\n".join(
            prompts.scratchpad_entry(s.thought, s.tool, json.dumps(s.tool_input, ensure_ascii=False), s.observation)
            for s in steps
        )
        return [system(prompt), user(prompts.user_prompt(instruction, pad))]

    def _native_history(self, steps: list[Step]) -> list[Message]:
        """Each earlier turn: one assistant message with all its calls and the text it wrote (a reasoning model's
        thinking is not sent back: OpenAI-compatible servers take no reasoning_content, and Anthropic's thinking
        blocks would need signatures we do not keep), then each call's result: its observation, a gate's block
        notice, or the invalid-call message. Steps this agent did not make (a replayed prefix) are one turn each."""
        out: list[Message] = []
        for turn in self._turns(steps):
            calls = [ToolCall(id=_call_id_of(s), name=s.tool, args=_args_of(s)) for s in turn]
            out.append(assistant_calls(turn[0].agent_log, calls))
            out += [tool_result(call["id"], s.observation) for call, s in zip(calls, turn, strict=True)]
        return out

    def _turns(self, steps: list[Step]) -> list[list[Step]]:
        turns: list[list[Step]] = []
        for step in steps:
            made_in = self._turn_of.get(step.call_id) if step.call_id else None
            if turns and made_in is not None and made_in == self._turn_of.get(turns[-1][-1].call_id):
                turns[-1].append(step)
            else:
                turns.append([step])
        return turns

    def _remember(self, turn: AgentTurn, steps: list[Step]) -> None:
        """Give every call of a native turn an id (a missing or reused one gets a stable one: the id must name one
        call of the conversation) and note which turn made it."""
        taken = {_call_id_of(s) for s in steps}
        serial = len(set(self._turn_of.values()))
        for position, call in enumerate(turn.calls):
            if not call.call_id or call.call_id in taken:
                call.call_id = f"toolemu_{len(steps)}_{position}"
            taken.add(call.call_id)
            self._turn_of[call.call_id] = serial

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        """Ask for one action; a reply that cannot be used (or a refusal) is asked again, at most PARSE_RETRIES
        times. After that: AgentParseError, or ModelRefusal with the model's words when it kept refusing."""
        convo = self.messages(instruction, kits, steps)
        total = Usage()
        problem = ""
        refused = False
        for attempt in range(PARSE_RETRIES + 1):
            try:
                turn = self._ask(convo, kits, cache_salt, repair=attempt > 0)
            except ModelRefusal:
                raise  # the model layer already asked again within its own bound
            except StructuredOutputError as exc:
                # The model layer already repaired this JSON reply within its own bound: no second loop here.
                raise AgentParseError(f"agent reply unusable: {exc}") from None
            except ReactParseError as exc:
                problem = str(exc)
                refused = bool(getattr(exc, "refusal", False))
                total.add(getattr(exc, "usage", Usage()))
                bad = getattr(exc, "reply_text", "")
                repair = prompts.NATIVE_REPAIR if self.native else prompts.REPAIR
                convo = [*convo, assistant(bad or "(unusable reply)"), user(repair.format(problem=problem))]
                continue
            total.add(turn.usage)
            turn.usage = total
            if self.native and turn.calls:
                self._remember(turn, steps)
            return turn
        if refused:
            raise ModelRefusal(f"agent: no usable turn after {PARSE_RETRIES + 1} attempts: {problem}")
        raise AgentParseError(f"agent reply unusable after {PARSE_RETRIES + 1} attempts: {problem}")

    def _ask(self, convo: list[Message], kits: list[Toolkit], salt: str, repair: bool = False) -> AgentTurn:
        if self.format == "react":
            return self._ask_react(convo, salt, repair)
        if self.native:
            return self._ask_native(convo, kits, salt, repair)
        schema = self._once("schema", kits, lambda: turn_schema(kits, bounded=self.bounded))
        reply = self.model.complete(convo, schema=schema, cache_salt=salt, repair=repair)
        action = reply.value["action"]
        kept = json.dumps(reply.value, ensure_ascii=False)
        thought = reply.value["thought"]
        if "final_answer" in action:
            return _turn(reply, thought, [], action["final_answer"], kept)
        return _turn(reply, thought, [ProposedCall(action["tool"], action["input"])], None, kept)

    def _ask_react(self, convo: list[Message], salt: str, repair: bool) -> AgentTurn:
        reply = self.model.complete(convo, stop=STOP_SEQUENCES, cache_salt=salt, repair=repair)
        _refuse_if_refused(reply)
        try:
            parsed = parse_react(reply.text)
            whole = parsed.tool is not None or reply.finish != "stop_sequence"
        except ReactParseError as exc:
            if reply.finish != "stop_sequence":
                _attach(exc, reply)
                raise
            whole = False
        if not whole:
            # The API says a stop sequence ended the reply, yet no action came before it: the stop fired inside the
            # answer (a line starting "Observation:"). Ask once more without stop sequences; the parser still cuts
            # anything after an action.
            usage = reply.usage
            reply = self.model.complete(convo, cache_salt=salt, repair=True)
            reply.usage.add(usage)
            _refuse_if_refused(reply)
            try:
                parsed = parse_react(reply.text)
            except ReactParseError as exc:
                _attach(exc, reply)
                raise
        calls = [ProposedCall(parsed.tool, parsed.tool_input or {})] if parsed.tool else []
        return _turn(reply, parsed.thought, calls, parsed.final_answer, parsed.kept, parsed.discarded)

    def _ask_native(self, convo: list[Message], kits: list[Toolkit], salt: str, repair: bool) -> AgentTurn:
        tools = self._once(
            "tools",
            kits,
            lambda: native_tools(kits, bounded=self.bounded, strict=self.strict_tools, omit_empty=self.omit_empty),
        )
        reply = self.model.complete(convo, tools=tools, cache_salt=salt, repair=repair)
        _refuse_if_refused(reply)
        if reply.tool_calls:
            # Parallel tool calls run in order, each as its own step: none is dropped.
            calls = [self._proposed(c, kits) for c in reply.tool_calls]
            return _turn(reply, reply.text.strip(), calls, None, reply.text)
        answer = reply.text.strip()
        if answer.lower().startswith("final answer:"):
            answer = answer.split(":", 1)[1].strip()
        if not answer:
            err = ReactParseError("the reply called no tool and gave no answer")
            _attach(err, reply)
            raise err
        return _turn(reply, "", [], answer, reply.text)

    def _proposed(self, native: dict[str, Any], kits: list[Toolkit]) -> ProposedCall:
        """A native call as a ToolCall; one whose arguments were no JSON object keeps them as text, with its
        parse_error (the episode records it as an invalid call, and the agent sees why)."""
        call = ProposedCall.of(native)
        if call.parse_error is not None:
            return call
        arguments = without_added_nulls(kits, call.tool, call.tool_input, bounded=self.bounded)
        return call.model_copy(update={"tool_input": arguments})


def without_added_nulls(kits: list[Toolkit], name: str, arguments: Any, *, bounded: bool = False) -> Any:
    """A call's arguments without the nulls that stand for optional arguments left out, at any depth: every optional
    argument is nullable where models and MCP clients see the tools, and a strict function must give each."""
    tool = next((t for kit in kits for t in kit.tools if kit.tool_full_name(t) == name), None)
    if tool is None:
        return arguments  # an unknown tool: the episode reports it as it was called
    return drop_added_nulls(arguments, arguments_schema(tool, bounded=bounded))


def _call_id_of(step: Step) -> str:
    """A step's call id; a step recorded without one (a replayed or older record) gets one from its index."""
    return step.call_id or f"toolemu_step_{step.index}"


def _args_of(step: Step) -> dict[str, Any]:
    """A call's arguments as a tool call carries them: an object (a foreign record's unparsable text is kept)."""
    return step.tool_input if isinstance(step.tool_input, dict) else {"input": step.tool_input}


def _turn(
    reply: Completion, thought: str, calls: list[ProposedCall], answer: str | None, kept: str, discarded: str = ""
) -> AgentTurn:
    """A turn from one model reply, with what the reply cost, how long it took and the model's thinking."""
    return AgentTurn(thought, calls, answer, kept, discarded, reply.usage, reply.latency_s, reply.reasoning)


def _attach(exc: ReactParseError, reply: Completion) -> None:
    """What the re-ask needs: the unusable text (echoed back) and the usage it cost."""
    exc.reply_text, exc.usage = reply.text, reply.usage  # type: ignore[attr-defined]


def _refuse_if_refused(reply: Completion) -> None:
    """A refusal (OpenAI's `refusal`, Anthropic's stop_reason "refusal") is handled like an unusable turn."""
    if reply.refusal:
        err = ReactParseError(f"the model refused: {reply.refusal}")
        err.refusal = True  # type: ignore[attr-defined]
        _attach(err, reply)
        err.reply_text = reply.text or reply.refusal  # type: ignore[attr-defined]
        raise err

"""What a strong chat model answers to a conversation, before any API's wire format is put on it."""

from __future__ import annotations

import json
import math
import random
import string
from dataclasses import dataclass, field
from typing import Any

from doubles import text as t
from doubles.config import WRAPS, DoubleConfig
from doubles.conversation import Conversation, ToolSpec
from doubles.instance import Draw, generate

REFUSALS = [
    "I'm sorry, but I can't help with that request. It asks me to act on sensitive information in a way that "
    "could cause harm, and I'd rather not guess at what is safe here.",
    "I apologize, but I won't be able to assist with this. If you can share more context about what you are "
    "trying to achieve, I'm happy to suggest a safer approach.",
    "Unfortunately I can't continue with this task as written. Please confirm the details with the account "
    "owner first, and then I can help.",
]
_INTROS = [
    "Here is the output, in the requested format:",
    "Sure. After checking the call against the current state, this is the result:",
    "Below is my reply as JSON.",
]
_OUTROS = [
    "Let me know if anything should be adjusted.",
    "This keeps the state consistent with the earlier steps.",
    "I kept every field the schema asks for.",
]
_PREAMBLES = [
    "I'll start by gathering the details I need.",
    "Let me look this up before doing anything irreversible.",
    "I'll run these lookups in parallel to save time.",
]


@dataclass
class ToolCall:
    id: str
    name: str
    args: dict[str, Any]


@dataclass
class Reply:
    kind: str  # structured | forced_tool | tool_calls | answer | react | react_answer | chat | refusal
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""
    finish: str = "stop"  # stop | stop_sequence | length | tool_calls
    stop_sequence: str | None = None
    wrap: str = ""  # how a JSON reply to a prompt-only schema was dressed
    value: Any = None  # the JSON value of a structured reply or a forced tool's input
    long_strings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def refusal(self) -> bool:
        return self.kind == "refusal"

    def completion_chars(self) -> int:
        calls = sum(len(c.name) + len(json.dumps(c.args, ensure_ascii=False)) for c in self.tool_calls)
        return len(self.text) + len(self.reasoning) + calls


def tokens(chars: int, config: DoubleConfig) -> int:
    return max(1, math.ceil(chars / config.chars_per_token))


def call_id(rng: random.Random, prefix: str) -> str:
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(24))


def respond(conv: Conversation, config: DoubleConfig, rng: random.Random, id_prefix: str) -> Reply:
    reply = _decide(conv, config, rng, id_prefix)
    if config.reasoning or conv.wants_reasoning:
        reply.reasoning = t.thought(rng, rng.randint(*config.thought_chars))
    if config.honour_stop and conv.stop and reply.text:
        _cut_at_stop(reply, conv.stop)
    limit = conv.max_tokens
    if config.honour_max_tokens and limit and not reply.tool_calls and tokens(len(reply.text), config) > limit:
        reply.text, reply.finish = reply.text[: int(limit * config.chars_per_token)], "length"
    if reply.finish in ("length", "stop_sequence"):  # only what went out whole counts as produced
        reply.long_strings = [(i, s) for i, s in reply.long_strings if _emitted(s, reply.text)]
    return reply


def _emitted(whole: str, text: str) -> bool:
    return whole in text or json.dumps(whole, ensure_ascii=False)[1:-1] in text


def _decide(conv: Conversation, config: DoubleConfig, rng: random.Random, id_prefix: str) -> Reply:
    forced = conv.tool_choice.startswith("tool:")
    if not forced and rng.random() < config.refusal_rate:
        return Reply("refusal", t.pick(rng, REFUSALS))
    if forced:
        return _forced_tool(conv, config, rng, id_prefix)
    if conv.tools and conv.tool_choice != "none":
        # Native tool calling: its progress is the tool results that answer its own calls (matched by id). History
        # that comes back as text in a user message is not its own turns: it starts the task again, with the same
        # first action (what a strong model does; the agent then repeats that call until its step limit).
        if conv.answered < config.tool_turns or conv.tool_choice == "required":
            return _tool_calls(conv, config, rng, id_prefix)
        draw = Draw(rng, config, not config.ignore_limits)
        return Reply("answer", draw.long("answer", None), long_strings=draw.long_strings)
    if conv.schema is not None:
        return _structured(conv, config, rng)
    if conv.react_tools:
        return _react(conv, config, rng)
    return Reply("chat", "\n\n".join(t.paragraph(rng, rng.randint(2, 4)) for _ in range(rng.randint(1, 3))))


def _forced_tool(conv: Conversation, config: DoubleConfig, rng: random.Random, id_prefix: str) -> Reply:
    name = conv.tool_choice.removeprefix("tool:")
    spec = next((s for s in conv.tools if s.name == name), ToolSpec(name, {"type": "object"}))
    draw = Draw(rng, config, limits=True, tool_results=conv.tool_results)  # a forced tool keeps to its schema
    args = generate(spec.schema, draw)
    call = ToolCall(call_id(rng, id_prefix), spec.name, args)
    return Reply("forced_tool", tool_calls=[call], finish="tool_calls", value=args, long_strings=draw.long_strings)


def _tool_calls(conv: Conversation, config: DoubleConfig, rng: random.Random, id_prefix: str) -> Reply:
    # What to call depends on the task and how far it got, not on the rest of the request: the same point of the same
    # task gets the same calls. Each call still gets a fresh id, as from a real API.
    plan = random.Random(f"{config.seed}|plan|{conv.task}|{conv.answered}")
    count = 1
    if conv.parallel and len(conv.tools) > 1 and plan.random() < config.parallel_rate:
        count = plan.randint(*config.parallel_calls)
    draw = Draw(plan, config, not config.ignore_limits, conv.answered)
    calls = []
    for _ in range(count):
        spec = plan.choice(conv.tools)
        calls.append(ToolCall(call_id(rng, id_prefix), spec.name, generate(spec.schema, draw)))
    return Reply("tool_calls", t.pick(plan, _PREAMBLES), calls, finish="tool_calls", long_strings=draw.long_strings)


def _structured(conv: Conversation, config: DoubleConfig, rng: random.Random) -> Reply:
    assert conv.schema is not None
    limits = conv.enforced or not config.ignore_limits or (conv.repair == "structured" and config.heed_repairs)
    draw = Draw(rng, config, limits, conv.tool_results, conv.return_hints, conv.return_options)
    value = generate(conv.schema, draw)
    body = json.dumps(value, ensure_ascii=False, indent=2 if rng.random() < 0.5 else None)
    wrap = "bare"
    if conv.schema_source == "prompt":
        weights = [max(0.0, config.wraps.get(w, 0.0)) for w in WRAPS]
        wrap = rng.choices(WRAPS, weights)[0] if sum(weights) else "bare"
    return Reply("structured", dress(body, wrap, rng), wrap=wrap, value=value, long_strings=draw.long_strings)


def dress(body: str, wrap: str, rng: random.Random) -> str:
    fenced = f"```json\n{body}\n```"
    if wrap == "fenced":
        return fenced
    if wrap in ("prose", "prose_fenced"):
        inner = fenced if wrap == "prose_fenced" else body
        return f"{t.pick(rng, _INTROS)}\n\n{inner}\n\n{t.pick(rng, _OUTROS)}"
    return body


def _react(conv: Conversation, config: DoubleConfig, rng: random.Random) -> Reply:
    draw = Draw(rng, config, not config.ignore_limits, conv.tool_results)
    thought = t.thought(rng, rng.randint(*config.thought_chars))
    if conv.tool_results >= config.tool_turns:
        answer = draw.long("final_answer", None)
        return Reply("react_answer", f"Thought: {thought}\nFinal Answer: {answer}", long_strings=draw.long_strings)
    spec = rng.choice(conv.react_tools)
    args = json.dumps(generate(spec.schema, draw), ensure_ascii=False)
    text = f"Thought: {thought}\nAction: {spec.name}\nAction Input: {args}"
    if rng.random() < config.overrun_rate:
        # What a model does when nothing stops it: it imagines the tool's answer and carries on.
        invented = json.dumps({"status": "ok", "note": t.sentence(rng)}, ensure_ascii=False)
        text += f"\nObservation: {invented}\nThought: {t.sentence(rng)}\nFinal Answer: {t.sentence(rng)}"
    return Reply("react", text, long_strings=draw.long_strings)


def _cut_at_stop(reply: Reply, stops: list[str]) -> None:
    hits = [(reply.text.find(s), s) for s in stops if s and s in reply.text]
    if hits:
        at, stop = min(hits)
        reply.text, reply.finish, reply.stop_sequence = reply.text[:at], "stop_sequence", stop

"""A role's model with the run's policies around it: cache, budget, retries, usage, structured output."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from toolemu.llm.cache import ResponseCache, cache_key
from toolemu.llm.messages import Message, to_langchain
from toolemu.llm.options import ModelOptions
from toolemu.llm.providers import build_chat_model
from toolemu.llm.registry import get_provider
from toolemu.llm.repair import context_tokens, repair_turns
from toolemu.llm.retry import call_with_retries
from toolemu.llm.structured import (
    StructuredOutputError,
    is_strict_compatible,
    parse_structured,
    schema_instruction,
    strict_schema,
)
from toolemu.llm.usage import Usage, UsageTracker, call_usage

log = logging.getLogger("toolemu.llm")

STRUCTURED_REPAIRS = 2  # extra attempts when a reply does not match its schema


@dataclass
class Completion:
    text: str
    value: Any = None  # the parsed reply when a schema was given
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    latency_s: float = 0.0
    attempts: int = 1
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # native tool calling: [{name, args}]


def _structured_kwargs(options: ModelOptions, schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """How to ask this backend for constrained decoding, and whether the backend enforces the schema.

    ({}, False) means: spell the schema out in the prompt, then parse and validate the text.
    """
    provider = get_provider(options.provider)
    if provider.structured_auto == "grammar":
        return {"json_schema": schema}, True  # llama.cpp's JSON-schema grammar
    mode = provider.structured_auto if options.structured == "auto" else options.structured
    if mode == "json_schema":
        strict = is_strict_compatible(schema)
        # Strict mode takes a subset of JSON schema; the full schema is still checked on the reply.
        fmt = {"name": "reply", "schema": strict_schema(schema) if strict else schema, "strict": strict}
        # OpenAI enforces only strict schemas; vLLM's guided decoding (and most local servers) any schema.
        enforced = strict or options.base_url is not None or provider.enforces_any_schema
        return {"extra_body": {"response_format": {"type": "json_schema", "json_schema": fmt}}}, enforced
    if mode == "json_object":  # the llama.cpp server's form
        return {"extra_body": {"response_format": {"type": "json_object", "schema": schema}}}, True
    return {}, False


def _with_reply_limit(options: ModelOptions, extra: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments, plus max_tokens in the body for OpenAI-compatible servers.

    langchain-openai (1.x) sends the limit only as max_completion_tokens, which some of these servers ignore
    (llama-cpp-python's): the reply then runs on to the end of the context. They all read max_tokens.
    """
    if options.provider == "vllm" or (options.provider == "openai" and options.base_url is not None):
        return {**extra, "extra_body": {"max_tokens": options.max_tokens, **extra.get("extra_body", {})}}
    return extra


class RoleModel:
    def __init__(
        self,
        role: str,
        options: ModelOptions,
        chat: BaseChatModel,
        cache: ResponseCache,
        tracker: UsageTracker,
    ):
        self.role, self.options, self.chat = role, options, chat
        self.cache, self.tracker = cache, tracker
        self.cacheable = get_provider(options.provider).cacheable

    def _call(
        self,
        messages: list[Message],
        stop: list[str] | None,
        extra: dict[str, Any],
        salt: str,
        tools: list[dict[str, Any]] | None = None,
    ) -> tuple[dict[str, Any], Usage, bool, str]:
        """One model call (or cache hit). Returns ({text, tool_calls}, usage, cached, cache key)."""
        request = {
            "model": self.options.describe(),
            "messages": messages,
            "stop": stop,
            "extra": extra,
            "tools": tools,
            "salt": salt,
        }
        key = cache_key(request)
        hit = self.cache.get(key) if self.cacheable else None
        if hit is not None:
            usage = Usage(cache_hits=1)
            self.tracker.record(self.role, usage)
            return hit, usage, True, key
        self.tracker.reserve()
        lc_messages = to_langchain(messages)
        chat = self.chat.bind_tools(tools) if tools else self.chat
        t0 = time.perf_counter()
        try:
            kwargs = _with_reply_limit(self.options, extra)
            reply = call_with_retries(lambda: chat.invoke(lc_messages, stop=stop, **kwargs), self.options.max_attempts)
        except BaseException:
            self.tracker.release()
            raise
        elapsed = time.perf_counter() - t0
        meta = getattr(reply, "usage_metadata", None) or {}
        usage = call_usage(
            self.options.provider,
            self.options.model_name,
            int(meta.get("input_tokens", 0)),
            int(meta.get("output_tokens", 0)),
        )
        self.tracker.record(self.role, usage)
        log.debug(
            "%s call: %d prompt + %d completion tokens in %.1fs",
            self.role,
            usage.prompt_tokens,
            usage.completion_tokens,
            elapsed,
        )
        calls = [{"name": c["name"], "args": c.get("args") or {}} for c in getattr(reply, "tool_calls", None) or []]
        return {"text": _text_of(reply.content), "tool_calls": calls}, usage, False, key

    def complete(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        stop: list[str] | None = None,
        cache_salt: str = "",
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion:
        """One reply. With a schema, the reply is parsed and validated, with a bounded repair on failure.

        `tools` (OpenAI function format) asks for native tool calling; calls come back in `tool_calls`.
        `cache_salt` separates calls that should not share a cached reply (e.g. repeated trials).
        """
        started = time.perf_counter()
        if schema is None:
            reply, usage, cached, key = self._call(messages, stop, {}, cache_salt, tools)
            if not cached and self.cacheable:
                self.cache.put(key, reply)
            return Completion(
                reply["text"],
                None,
                usage,
                cached,
                time.perf_counter() - started,
                tool_calls=reply.get("tool_calls") or [],
            )

        instruction = schema_instruction(schema)
        extra, enforced = _structured_kwargs(self.options, schema)
        convo = messages
        if not enforced:
            convo = [
                *messages[:-1],
                {**messages[-1], "content": f"{messages[-1]['content']}\n\n{instruction}"},
            ]
        total = Usage()
        error: StructuredOutputError | None = None
        first_key = ""
        for attempt in range(1, STRUCTURED_REPAIRS + 2):
            reply, usage, cached, key = self._call(convo, stop, extra, cache_salt)  # type: ignore[arg-type]
            text = reply["text"]
            first_key = first_key or key
            total.add(usage)
            try:
                value = parse_structured(text, schema)
            except StructuredOutputError as exc:
                error = exc
                log.warning("%s: structured reply rejected (attempt %d): %s", self.role, attempt, exc)
                if attempt <= STRUCTURED_REPAIRS:
                    context = context_tokens(self.options, self.chat)
                    convo = repair_turns(
                        convo, text, exc, instruction, usage, self.options.max_tokens, context, self.role
                    )
                continue
            if not cached and self.cacheable:
                # Under the original request too, so the next identical call skips the repair.
                for k in {key, first_key}:
                    self.cache.put(k, reply)
            return Completion(text, value, total, cached, time.perf_counter() - started, attempt)
        raise StructuredOutputError(f"{self.role}: no valid reply after {STRUCTURED_REPAIRS + 1} attempts: {error}")


def _text_of(content: Any) -> str:
    """Message content as text (Anthropic may return a list of blocks)."""
    if isinstance(content, list):
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


ChatFactory = Callable[[ModelOptions, str], BaseChatModel]


class ModelHub:
    """Hands out one RoleModel per role; all share the run's cache and usage tracker."""

    def __init__(
        self,
        roles: dict[str, ModelOptions],
        cache: ResponseCache | None = None,
        tracker: UsageTracker | None = None,
        chat_factory: ChatFactory = build_chat_model,
    ):
        self.roles = roles
        self.cache = cache or ResponseCache(mode="off")
        self.tracker = tracker or UsageTracker()
        self._factory = chat_factory
        self._models: dict[str, RoleModel] = {}

    def options_for(self, role: str) -> ModelOptions:
        """A role's options; a role that names no model of its own uses the default role's."""
        return self.roles.get(role) or self.roles["default"]

    def model(self, role: str) -> RoleModel:
        if role not in self._models:
            options = self.options_for(role)
            self._models[role] = RoleModel(role, options, self._factory(options, role), self.cache, self.tracker)
        return self._models[role]

    def describe(self) -> dict[str, dict[str, object]]:
        return {role: opts.describe() for role, opts in sorted(self.roles.items())}

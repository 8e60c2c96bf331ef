"""A role's model with the run's policies around it: cache, budget, retries, usage, structured output."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel

from toolemu.llm.cache import ResponseCache, cache_key
from toolemu.llm.messages import Message, to_langchain
from toolemu.llm.options import REPLY_GROWTH, ModelOptions
from toolemu.llm.providers import build_chat_model
from toolemu.llm.registry import get_provider
from toolemu.llm.repair import context_tokens, repair_turns
from toolemu.llm.retry import call_with_retries, is_access_denied, is_transient
from toolemu.llm.served import DirectChat
from toolemu.llm.stops import ModelAccessDenied, StopRun
from toolemu.llm.structured import (
    ModelRefusal,
    ReplyCutOff,
    StructuredOutputError,
    parse_structured,
    schema_instruction,
    strict_problem,
    strict_schema,
)
from toolemu.llm.usage import Usage, UsageTracker, call_usage
from toolemu.secrets import clip, register_secret_env, strip_credentials

if TYPE_CHECKING:
    from toolemu.llm.registry import ChatModel

log = logging.getLogger("toolemu.llm")

STRUCTURED_REPAIRS = 2  # extra attempts when a reply does not match its schema
MEMO_SIZE = 1024  # schemas (and agent pieces) a role's model remembers; past it, it starts again
REPLY_TOOL = "reply"  # the forced tool that carries a structured reply (structured mode "tool")


@dataclass
class Completion:
    text: str
    value: Any = None  # the parsed reply when a schema was given
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    latency_s: float = 0.0
    attempts: int = 1
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # native calls: [{id, name, args[, error]}]
    reasoning: str = ""  # a reasoning model's thinking (reasoning_content, thinking blocks): never the answer
    refusal: str = ""  # the model declined: its own words (the text may be empty)
    finish: str = ""  # why the reply ended: stop, stop_sequence, tool_calls, refusal ("" when not said)


@dataclass(frozen=True)
class StructuredRequest:
    """How one reply schema reaches a backend."""

    kwargs: dict[str, Any] = field(default_factory=dict)  # call arguments (response_format, a grammar)
    in_request: bool = False  # the backend sees the schema, so the prompt need not spell it out
    strict: bool = False  # sent in strict form: nulls stand for optional properties left out
    tools: list[dict[str, Any]] | None = None  # a forced tool whose input schema is the reply schema
    tool_choice: str | None = None


_explained: set[tuple[str, str]] = set()
_explained_lock = threading.Lock()


def _explain_once(role: str, why: str) -> None:
    """Say once per process and kind of reason why a role's schemas go without strict mode (every reply is still
    validated against the full schema)."""
    what, _, where = why.rpartition(", at ")
    with _explained_lock:
        if (role, what) in _explained:
            return
        _explained.add((role, what))
    log.info(
        "%s: reply schemas with %s go without strict mode (first at %s); every reply is still checked against the "
        "full schema",
        role,
        what,
        where,
    )


def structured_request(options: ModelOptions, schema: dict[str, Any], role: str) -> StructuredRequest:
    """How to ask this backend for a reply that matches `schema` (ModelOptions.structured_mode)."""
    provider = get_provider(options.provider)
    mode = options.structured_mode
    if mode == "grammar":
        return StructuredRequest({"json_schema": schema}, True)  # llama.cpp's JSON-schema grammar
    if mode == "json_schema":
        # OpenAI enforces only strict schemas; vLLM's guided decoding enforces any schema as it is, so it gets the
        # schema unchanged (no nulls standing in for optional properties).
        problem = None if provider.enforces_any_schema else strict_problem(schema)
        strict = not provider.enforces_any_schema and problem is None
        if problem is not None:
            _explain_once(role, problem)
        # The full schema is still checked on the reply.
        fmt = {"name": "reply", "schema": strict_schema(schema) if strict else schema, "strict": strict}
        # Most OpenAI-compatible local servers enforce any schema too.
        enforced = strict or options.base_url is not None or provider.enforces_any_schema
        return StructuredRequest(
            {"extra_body": {"response_format": {"type": "json_schema", "json_schema": fmt}}}, enforced, strict
        )
    if mode == "json_object":  # the llama.cpp server's form
        return StructuredRequest({"extra_body": {"response_format": {"type": "json_object", "schema": schema}}}, True)
    if mode == "tool":  # Anthropic: a forced call of one tool whose input is the reply
        tool = {
            "type": "function",
            "function": {
                "name": REPLY_TOOL,
                "description": "Give your reply: its input is the whole reply, as the instructions describe.",
                "parameters": schema,
            },
        }
        return StructuredRequest(in_request=True, tools=[tool], tool_choice=REPLY_TOOL)
    return StructuredRequest()


def _with_reply_limit(options: ModelOptions, extra: dict[str, Any], max_tokens: int | None = None) -> dict[str, Any]:
    """The call's arguments with the reply limit: `max_tokens` when it is not the role's own (a cut-off reply
    asked again), and in the body for OpenAI-compatible servers.

    langchain-openai (1.x) sends the limit only as max_completion_tokens (what OpenAI's own API needs, for o-series
    and gpt-5 models too), which some of these servers ignore (llama-cpp-python's): the reply then runs on to the
    end of the context. They all read max_tokens.
    """
    limit = max_tokens or options.max_tokens
    out = {**extra, "max_tokens": limit} if limit != options.max_tokens else dict(extra)
    if options.provider == "vllm" or (options.provider == "openai" and options.base_url is not None):
        out["extra_body"] = {"max_tokens": limit, **extra.get("extra_body", {})}
    return out


def finish_of(meta: dict[str, Any]) -> str:
    """Why a reply ended, in one vocabulary: length (cut off at max_tokens), stop, stop_sequence, tool_calls,
    refusal, or the backend's own word."""
    reason = meta.get("finish_reason") or meta.get("stop_reason") or ""
    return {"max_tokens": "length", "end_turn": "stop", "tool_use": "tool_calls"}.get(str(reason), str(reason))


def _reasoning_of(reply: Any) -> str:
    """A reasoning model's thinking: OpenAI-compatible reasoning_content, or Anthropic thinking blocks."""
    found = reply.additional_kwargs.get("reasoning_content")
    if isinstance(found, str) and found:
        return found
    blocks = reply.content if isinstance(reply.content, list) else []
    return "\n\n".join(
        b["thinking"] for b in blocks if isinstance(b, dict) and b.get("type") == "thinking" and b.get("thinking")
    )


class RoleModel:
    def __init__(
        self,
        role: str,
        options: ModelOptions,
        chat: ChatModel,
        cache: ResponseCache,
        tracker: UsageTracker,
    ):
        self.role, self.options, self.chat = role, options, chat
        self.cache, self.tracker = cache, tracker
        self.cacheable = get_provider(options.provider).cacheable
        # Where a call's limit starts: max_tokens, until a reply needed more; then the room it needed, so a role
        # whose replies run long is not cut off again on every call.
        self._start_limit = options.max_tokens
        self._described = options.describe()  # part of every cache key; the options do not change
        # How each reply schema goes to this backend, by the schema object (kept here, so its id is not reused):
        # callers that build a schema once (the agent's turn, the emulator's reply per tool) ask for it once.
        self._requests: dict[int, tuple[dict[str, Any], StructuredRequest]] = {}
        # What the agents of a run build from this model's options and their toolkits (prompt pieces, schemas,
        # tool lists): the same for every episode (`toolemu.agents.agent.Agent`).
        self.memo: dict[Any, Any] = {}

    def _structured_request(self, schema: dict[str, Any]) -> StructuredRequest:
        known = self._requests.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        how = structured_request(self.options, schema, self.role)
        if len(self._requests) >= MEMO_SIZE:
            self._requests.clear()
        self._requests[id(schema)] = (schema, how)
        return how

    @property
    def reply_token_ceiling(self) -> int:
        return self.options.reply_token_ceiling

    def _count(self, usage: Usage, **counts: int) -> None:
        """Add repair / cut-off / refusal counts to a call's usage and to the run's, by role."""
        extra = Usage(**counts)
        usage.add(extra)
        self.tracker.record(self.role, extra)

    def _call(
        self,
        messages: list[Message],
        stop: list[str] | None,
        how: StructuredRequest,
        salt: str,
        max_tokens: int,
    ) -> tuple[dict[str, Any], Usage, bool, str]:
        """One model call (or cache hit) asked `how`. Returns ({text, tool_calls, reasoning, refusal, finish}, usage,
        cached, cache key)."""
        tools, tool_choice = how.tools, how.tool_choice
        request: dict[str, Any] = {
            "model": self._described,
            "messages": messages,
            "stop": stop,
            "extra": how.kwargs,
            "tools": tools,
            "salt": salt,
        }
        if tool_choice:
            request["tool_choice"] = tool_choice
        # A per-call limit is not part of the key: it only decides whether a reply is cut off, and a cut-off reply
        # is never cached. With no cache to read or write (--cache off, a provider never cached), no key is made.
        key = cache_key(request) if self.cacheable and self.cache.active else ""
        hit = self.cache.get(key) if key else None
        if hit is not None:
            usage = Usage(cache_hits=1)
            self.tracker.record(self.role, usage)
            return hit, usage, True, key
        self.tracker.reserve()
        kwargs = _with_reply_limit(self.options, how.kwargs, max_tokens)
        chat = self.chat
        if isinstance(chat, DirectChat):
            send: Callable[[], dict[str, Any]] = lambda: chat.send(messages, stop, tools, tool_choice, kwargs)  # noqa: E731
        else:
            send = lambda: _langchain_reply(chat, messages, stop, tools, tool_choice, kwargs)  # noqa: E731
        t0 = time.perf_counter()
        try:
            raw = call_with_retries(send, self.options.max_attempts)
        except BaseException as exc:
            self.tracker.release()
            if isinstance(exc, Exception) and is_access_denied(exc):
                raise ModelAccessDenied(self._refused(exc)) from exc
            raise
        elapsed = time.perf_counter() - t0
        usage = call_usage(self.options.provider, self.options.model_name, raw["input_tokens"], raw["output_tokens"])
        self.tracker.record(self.role, usage, model=self.options.model)  # an unpriced call is named by its model
        log.debug(
            "%s call: %d prompt + %d completion tokens in %.1fs",
            self.role,
            usage.prompt_tokens,
            usage.completion_tokens,
            elapsed,
        )
        text, refusal = raw["text"], raw["refusal"]
        finish = finish_of({"finish_reason": raw["finish"]})
        if finish == "refusal" and not refusal:
            refusal = text or "(the model refused and gave no reason)"
        if refusal:
            finish = "refusal"
        reply = {
            "text": text,
            "tool_calls": raw["tool_calls"],
            "reasoning": raw["reasoning"],
            "refusal": refusal,
            "finish": finish,
        }
        return reply, usage, False, key

    def _whole_reply(
        self,
        messages: list[Message],
        stop: list[str] | None,
        how: StructuredRequest,
        salt: str,
        repair: bool,
    ) -> tuple[dict[str, Any], Usage, bool, list[str], int]:
        """A reply that was not cut off at max_tokens: a cut-off one is asked again with twice the room, up to
        reply_token_ceiling; past it, ReplyCutOff. Returns (reply, usage, cached, cache keys, the limit used)."""
        limit = first = self._start_limit
        total, keys = Usage(), []
        while True:
            try:
                reply, usage, cached, key = self._call(messages, stop, how, salt, limit)
            except Exception as exc:
                if limit == first or is_transient(exc) or isinstance(exc, StopRun):  # a stop is never a cut-off
                    raise
                raise ReplyCutOff(
                    f"{self.role}: the reply was cut off at {limit // 2} tokens, and asking for {limit} failed: {exc}"
                ) from exc
            total.add(usage)
            keys.append(key)
            if repair and not cached:
                self._count(total, repairs=1)
                repair = False  # one repair, however many times it had to grow
            if reply.get("finish") != "length":
                if limit > self._start_limit:
                    self._start_limit = limit
                    log.info("%s: replies run long; later calls start with room for %d tokens", self.role, limit)
                return reply, total, cached, keys, limit
            self._count(total, cut_offs=1)
            if limit >= self.reply_token_ceiling:
                raise ReplyCutOff(
                    f"{self.role}: the reply was cut off at {limit} tokens ({len(reply.get('text', ''))} characters), "
                    f"the most this role may use ({self.options.max_tokens} x {2**REPLY_GROWTH}; raise --max-tokens "
                    "for more); a cut-off reply is never used"
                )
            log.warning(
                "%s: reply cut off at max_tokens %d (%d characters); asking again with room for %d",
                self.role,
                limit,
                len(reply.get("text", "")),
                limit * 2,
            )
            limit *= 2

    def _refused(self, exc: Exception) -> str:
        status = getattr(exc, "status_code", None)
        where = f"HTTP {status}, " if status else ""
        key = f"; check the key in {self.options.key_env}" if self.options.key_env else ""
        if self.options.base_url and strip_credentials(self.options.base_url) != self.options.base_url:
            key = "; check the credentials in --base-url"  # those are what the server saw
        return (
            f"{self.options.model} ({self.role}) refused the request ({where}{type(exc).__name__}: "
            f"{clip(str(exc), 300)}){key}"
        )

    def complete(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        stop: list[str] | None = None,
        cache_salt: str = "",
        tools: list[dict[str, Any]] | None = None,
        repair: bool = False,
    ) -> Completion:
        """One whole reply. With a schema, the reply is parsed and validated, with a bounded repair on failure; a
        refusal gets the same repair, and after the bound raises ModelRefusal with the model's words.

        `tools` (OpenAI function format) asks for native tool calling; calls come back in `tool_calls`.
        `cache_salt` separates calls that should not share a cached reply (e.g. repeated trials).
        `repair`: this call asks again after an unusable reply (counted in the role's repair rate).
        A reply cut off at max_tokens is asked again with more room (bounded); past the bound, ReplyCutOff.
        """
        started = time.perf_counter()
        # Without a schema, one plain request (with the caller's tools), taken as it comes.
        how = StructuredRequest(in_request=True, tools=tools) if schema is None else self._structured_request(schema)
        instruction = "" if how.in_request else schema_instruction(schema)  # a repair says it in any case
        convo = messages
        if not how.in_request:
            convo = [
                *messages[:-1],
                {**messages[-1], "content": f"{messages[-1]['content']}\n\n{instruction}"},
            ]
        total = Usage()
        error: StructuredOutputError | None = None
        first_keys: list[str] = []
        for attempt in range(1, STRUCTURED_REPAIRS + 2):
            reply, usage, cached, keys, limit = self._whole_reply(convo, stop, how, cache_salt, repair or attempt > 1)
            first_keys = first_keys or keys
            total.add(usage)
            text = _structured_text(reply, how)
            if reply.get("refusal") and not cached:
                self._count(total, refusals=1)
            try:
                if schema is not None and reply.get("refusal"):
                    raise ModelRefusal(f"the model refused: {reply['refusal']}")
                value = None if schema is None else parse_structured(text, schema, strict_nulls=how.strict)
            except StructuredOutputError as exc:
                error = exc
                log.warning("%s: structured reply rejected (attempt %d): %s", self.role, attempt, exc)
                if attempt <= STRUCTURED_REPAIRS:
                    context = context_tokens(self.options, self.chat)
                    shown = text or reply.get("refusal", "")
                    instruction = instruction or schema_instruction(schema)
                    convo = repair_turns(convo, shown, exc, instruction, usage, limit, context, self.role)
                continue
            if not cached and self.cacheable:
                # Under the original request too, so the next identical call skips the repair.
                for k in {*keys, *first_keys}:
                    self.cache.put(k, reply)
            return Completion(
                text,
                value,
                total,
                cached,
                time.perf_counter() - started,
                attempt,
                tool_calls=(reply.get("tool_calls") or []) if schema is None else [],  # a reply tool is the reply
                reasoning=reply.get("reasoning", ""),
                refusal=reply.get("refusal", ""),
                finish=reply.get("finish", ""),
            )
        attempts = STRUCTURED_REPAIRS + 1
        if isinstance(error, ModelRefusal):
            raise ModelRefusal(f"{self.role}: no reply after {attempts} attempts: {error}")
        raise StructuredOutputError(f"{self.role}: no valid reply after {attempts} attempts: {error}")


def _langchain_reply(
    chat: BaseChatModel,
    messages: list[Message],
    stop: list[str] | None,
    tools: list[dict[str, Any]] | None,
    tool_choice: str | None,
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    """One call through a LangChain chat model, as the dict DirectChat.send returns."""
    if tools:
        chat = chat.bind_tools(tools, tool_choice=tool_choice) if tool_choice else chat.bind_tools(tools)  # type: ignore[assignment]
    reply = chat.invoke(to_langchain(messages), stop=stop, **kwargs)
    meta = getattr(reply, "usage_metadata", None) or {}
    calls = [
        {"id": c.get("id") or "", "name": c["name"], "args": c.get("args") or {}}
        for c in getattr(reply, "tool_calls", None) or []
    ]
    # A call whose arguments LangChain could not parse is kept with why (toolemu.log.ToolCall.of: parse_error),
    # not dropped: the agent's step records it as an invalid call.
    calls += [
        {"id": c.get("id") or "", "name": c.get("name") or "", "args": c.get("args") or "", "error": c.get("error")}
        for c in getattr(reply, "invalid_tool_calls", None) or []
    ]
    response_meta = getattr(reply, "response_metadata", None) or {}
    return {
        "text": _text_of(reply.content),
        "tool_calls": calls,
        "reasoning": _reasoning_of(reply),
        "refusal": reply.additional_kwargs.get("refusal") or "",
        "finish": response_meta.get("finish_reason") or response_meta.get("stop_reason") or "",
        "input_tokens": int(meta.get("input_tokens", 0)),
        "output_tokens": int(meta.get("output_tokens", 0)),
    }


def _structured_text(reply: dict[str, Any], how: StructuredRequest) -> str:
    """The reply's JSON text: a forced tool's input, else the message text."""
    if how.tool_choice:
        for call in reply.get("tool_calls") or []:
            if call.get("name") == how.tool_choice and not call.get("error"):
                return json.dumps(call.get("args") or {}, ensure_ascii=False)
    return str(reply.get("text", ""))


def _text_of(content: Any) -> str:
    """Message content as text (Anthropic may return a list of blocks; thinking and tool_use blocks are not text)."""
    if isinstance(content, list):
        return "".join(
            (b.get("text", "") if b.get("type", "text") == "text" else "") if isinstance(b, dict) else str(b)
            for b in content
        )
    return str(content)


ChatFactory = Callable[[ModelOptions, str], "ChatModel"]


class UnlistedRole(LookupError):
    """A model asked for by a role that whoever built the hub did not list."""


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
        for options in roles.values():  # every configured key is scrubbed from all we write, whatever its name
            register_secret_env(options.key_env)
        self.cache = cache or ResponseCache(mode="off")
        self.tracker = tracker or UsageTracker()
        self._factory = chat_factory
        self._models: dict[str, RoleModel] = {}

    def options_for(self, role: str) -> ModelOptions:
        """A role's options. A role the hub was not built with is an error, never another role's model: whoever asks
        for it (an element of the episode, a scorer) must be listed where the hub is built (`EpisodeSpec.roles`)."""
        try:
            return self.roles[role]
        except KeyError:
            listed = ", ".join(sorted(self.roles)) or "none"
            raise UnlistedRole(f"the model hub lists no role {role!r} (it lists {listed})") from None

    def model(self, role: str) -> RoleModel:
        if role not in self._models:
            options = self.options_for(role)
            self._models[role] = RoleModel(role, options, self._factory(options, role), self.cache, self.tracker)
        return self._models[role]

    def describe(self) -> dict[str, dict[str, object]]:
        return {role: opts.describe() for role, opts in sorted(self.roles.items())}

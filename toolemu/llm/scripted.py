"""A scripted chat model with fixed replies: drives tests and --dry-run with no model at all."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from toolemu.llm.messages import Message, from_langchain

Reply = str | AIMessage  # an AIMessage can carry tool_calls, for native tool calling
Responder = Callable[[list[Message], dict[str, Any]], Reply]


class PlainChatModel(BaseChatModel):
    """A chat model that answers the plain messages (toolemu.llm.messages) with one AIMessage: the scripted model
    and the embedded runtime (toolemu.llm.local)."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.reply(from_langchain(messages), stop, kwargs))])

    def reply(self, messages: list[Message], stop: list[str] | None, kwargs: dict[str, Any]) -> AIMessage:
        raise NotImplementedError


def token_usage(input_tokens: int, output_tokens: int) -> UsageMetadata:
    """A reply's usage_metadata: what the model layer reads of its use."""
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, "total_tokens": input_tokens + output_tokens}


class ScriptedChatModel(PlainChatModel):
    """Replies from a list (in order, cycling the last) or from a function of the messages.

    Every call is recorded in `calls` (messages plus keyword arguments such as response_format), unless `keep_calls`
    is off (a dry run, whose calls no one reads: its memory stays flat however many episodes it plays).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: list[Reply] = Field(default_factory=list)
    responder: Responder | None = None
    latency_s: float = 0.0
    ignore_stop: bool = False  # behave like a backend that does not honour stop sequences
    keep_calls: bool = True
    errors: list[BaseException] = Field(default_factory=list, description="raised first, one per call")
    _calls: list[dict[str, Any]] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _uncounted: int = PrivateAttr(default=0)  # calls made with keep_calls off

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        """Native tool calling: the tools reach the responder as kwargs['tools']."""
        return self.bind(tools=tools, **kwargs)

    @property
    def calls(self) -> list[dict[str, Any]]:
        return self._calls

    def reply(self, plain: list[Message], stop: list[str] | None, kwargs: dict[str, Any]) -> AIMessage:
        with self._lock:
            index = len(self._calls) if self.keep_calls else self._uncounted
            if self.keep_calls:
                self._calls.append({"messages": plain, "stop": stop, **kwargs})
            else:
                self._uncounted += 1
            error = self.errors.pop(0) if self.errors else None
        if self.latency_s:
            time.sleep(self.latency_s)
        if error is not None:
            raise error
        if self.responder is not None:
            reply = self.responder(plain, kwargs)
        elif self.replies:
            reply = self.replies[min(index, len(self.replies) - 1)]
        else:
            reply = "Final Answer: (scripted model has no replies)"
        scripted = reply if isinstance(reply, AIMessage) else AIMessage(content=reply)
        # An AIMessage reply can also carry what a real API adds: finish_reason / stop_reason, a refusal, reasoning.
        content: Any = scripted.content
        text = content if isinstance(content, str) else ""
        for s in [] if self.ignore_stop else stop or []:
            if s in text:
                text = text[: text.index(s)]
        prompt_tokens = sum(len(m["content"].split()) for m in plain)
        return AIMessage(
            content=text if isinstance(content, str) else content,
            tool_calls=scripted.tool_calls,
            invalid_tool_calls=scripted.invalid_tool_calls,  # calls whose arguments did not parse
            additional_kwargs=dict(scripted.additional_kwargs),
            response_metadata=dict(scripted.response_metadata),
            usage_metadata=token_usage(prompt_tokens, len(text.split())),
        )

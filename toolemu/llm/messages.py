"""The plain message format every role uses, and its conversion to LangChain messages.

Native tool calling adds two shapes: an assistant message that carries its tool calls (each with an id), and a tool
message that answers one call by that id. LangChain's AIMessage(tool_calls=...) and ToolMessage(tool_call_id=...)
carry them to every provider in its own form: OpenAI's assistant `tool_calls` + role "tool" messages, Anthropic's
`tool_use` + `tool_result` blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

if TYPE_CHECKING:  # LangChain loads when messages are converted: building them (a judge's prompt) needs none of it
    from langchain_core.messages import BaseMessage


class ToolCall(TypedDict):
    id: str
    name: str
    args: dict[str, Any]


class Message(TypedDict):
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: NotRequired[list[ToolCall]]  # an assistant message's native tool calls
    tool_call_id: NotRequired[str]  # a tool message: the call it answers


def system(text: str) -> Message:
    return {"role": "system", "content": text}


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str) -> Message:
    return {"role": "assistant", "content": text}


def assistant_calls(text: str, calls: list[ToolCall]) -> Message:
    """An assistant turn that called tools (parallel calls: all of them, in one message), with the text it wrote."""
    return {"role": "assistant", "content": text, "tool_calls": calls}


def tool_result(call_id: str, text: str) -> Message:
    """The result of the tool call `call_id`."""
    return {"role": "tool", "content": text, "tool_call_id": call_id}


_FROM_LC = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def _to_langchain(message: Message) -> BaseMessage:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    if message["role"] == "tool":
        return ToolMessage(content=message["content"], tool_call_id=message.get("tool_call_id", ""))
    calls = message.get("tool_calls")
    if message["role"] == "assistant" and calls:
        lc_calls = [{"name": c["name"], "args": c["args"], "id": c["id"], "type": "tool_call"} for c in calls]
        return AIMessage(content=message["content"], tool_calls=lc_calls)
    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return kinds[message["role"]](content=message["content"])


def to_langchain(messages: list[Message]) -> list[BaseMessage]:
    return [_to_langchain(m) for m in messages]


def _from_langchain(message: BaseMessage) -> Message:
    from langchain_core.messages import AIMessage, ToolMessage

    out: Message = {"role": _FROM_LC.get(message.type, "user"), "content": str(message.content)}  # type: ignore[typeddict-item]
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
    elif isinstance(message, AIMessage) and message.tool_calls:
        out["tool_calls"] = [
            {"id": c.get("id") or "", "name": c["name"], "args": c["args"]} for c in message.tool_calls
        ]
    return out


def from_langchain(messages: list[BaseMessage]) -> list[Message]:
    return [_from_langchain(m) for m in messages]

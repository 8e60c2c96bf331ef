"""A smolagents ToolCallingAgent with the served tools from `ToolCollection.from_mcp` (mcpadapt underneath), played by
a scripted smolagents Model. The agent checks each call against the tool's inputs before it runs it, so the search,
which leaves its optional arguments out, reaches the server only where smolagents sees them as optional."""

from __future__ import annotations

from typing import Any

from client_common import FINAL, done, scripted_turn, target
from mcp import StdioServerParameters
from smolagents import ToolCallingAgent, ToolCollection
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model
from smolagents.monitoring import LogLevel

OBSERVATION = "Observation:\n"
said: dict[str, Any] = {"answer": "", "refused": []}  # the answer given, and what smolagents said instead of a call


class Scripted(Model):
    """The two calls, then final_answer (smolagents' own final-answer tool is the server's, by its name). Where
    smolagents refused a call instead of running it, final_answer says so at once."""

    def generate(self, messages: list[ChatMessage], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        results, refused = [], []
        for message in messages:
            if message.role != MessageRole.TOOL_RESPONSE:
                continue
            text = "".join(p.get("text", "") for p in message.content or [] if isinstance(p, dict))
            (results if OBSERVATION in text else refused).append(text.split(OBSERVATION, 1)[-1])
        turn = scripted_turn(results)
        if refused:
            turn = (FINAL, {"answer": "smolagents refused the call: " + refused[0].strip()})
        if turn is None:  # final_answer ends a smolagents run: it asks no more
            raise RuntimeError("asked for a turn after final_answer")
        name, arguments = turn
        if name == FINAL:
            said["answer"], said["refused"] = arguments["answer"], refused
        call = ChatMessageToolCall(ChatMessageToolCallFunction(arguments, name), f"call_{len(results)}", "function")
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def main() -> None:
    where = target()
    if where.transport == "stdio":
        server: Any = StdioServerParameters(command=where.command, args=where.args)
    else:
        server = {"url": where.url, "transport": "streamable-http", "headers": where.headers, "timeout": 300}
    with ToolCollection.from_mcp(server, trust_remote_code=True, structured_output=False) as collection:
        tools = list(collection.tools)
        agent = ToolCallingAgent(tools=tools, model=Scripted(), max_steps=5, verbosity_level=LogLevel.OFF)
        agent.run("Find the Northwind emails and read one.")
    done([t.name for t in tools], said["answer"], refused=said["refused"])


main()

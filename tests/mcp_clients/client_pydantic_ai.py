"""A pydantic-ai agent with the served tools as an MCPToolset (built on fastmcp's Client), played by a FunctionModel:
a model in code, which calls the two tools and final_answer from what the tools returned."""

from __future__ import annotations

from client_common import CALLS, FINAL, answer_for, done, scripted_turn, target
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

offered: list[str] = []


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    offered[:] = [t.name for t in info.function_tools]
    returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    turn = scripted_turn([p.model_response_str() for p in returns])
    if turn is None:
        return ModelResponse(parts=[TextPart(answer_for(returns[len(CALLS) - 1].model_response_str()))])
    name, arguments = turn
    return ModelResponse(parts=[ToolCallPart(name, arguments)])


def main() -> None:
    where = target()
    if where.transport == "stdio":
        toolset = MCPToolset(StdioTransport(command=where.command, args=where.args), read_timeout=300)
    else:
        toolset = MCPToolset(where.url, headers=where.headers, read_timeout=300)
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    result = agent.run_sync("Find the Northwind emails and read one.")
    assert FINAL in offered, offered
    done(offered, result.output)


main()

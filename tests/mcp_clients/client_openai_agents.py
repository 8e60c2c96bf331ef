"""An OpenAI Agents SDK agent with the served tools (MCPServerStdio / MCPServerStreamableHttp); its model is a chat
completions endpoint at OPENAI_BASE_URL (the tests' loopback double, which plays the two calls and final_answer)."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from client_common import done, target
from openai import AsyncOpenAI


async def main() -> None:
    set_tracing_disabled(True)
    where = target()
    server: Any
    if where.transport == "stdio":
        params = {"command": where.command, "args": where.args}
        server = MCPServerStdio(name="toolemu", params=params, client_session_timeout_seconds=300)  # type: ignore[arg-type]
    else:
        params = {"url": where.url, "headers": where.headers, "timeout": 300}
        server = MCPServerStreamableHttp(name="toolemu", params=params, client_session_timeout_seconds=300)  # type: ignore[arg-type]
    async with server:
        tools = [t.name for t in await server.list_tools()]
        model = OpenAIChatCompletionsModel(model="fake-model", openai_client=AsyncOpenAI())
        agent = Agent(name="assistant", instructions="Use the tools.", mcp_servers=[server], model=model)
        result = await Runner.run(agent, "Find the Northwind emails and read one.", max_turns=8)
    done(tools, str(result.final_output))


asyncio.run(main())

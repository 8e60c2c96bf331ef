"""A LangChain agent (`create_agent`, on LangGraph) with the served tools from langchain-mcp-adapters (one session for
the whole episode); its model is ChatOpenAI at OPENAI_BASE_URL (the tests' loopback double)."""

from __future__ import annotations

import asyncio
from typing import Any

from client_common import done, target
from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langchain_openai import ChatOpenAI


async def main() -> None:
    where = target()
    connection: dict[str, Any]
    if where.transport == "stdio":
        connection = {"transport": "stdio", "command": where.command, "args": where.args}
    else:
        connection = {"transport": "streamable_http", "url": where.url, "headers": where.headers}
    client = MultiServerMCPClient({"toolemu": connection})  # type: ignore[dict-item]
    async with client.session("toolemu") as session:
        tools = await load_mcp_tools(session)
        agent = create_agent(ChatOpenAI(model="fake-model"), tools)
        state = await agent.ainvoke({"messages": [("user", "Find the Northwind emails and read one.")]})
    done([t.name for t in tools], str(state["messages"][-1].content))


asyncio.run(main())

"""The `mcp` SDK's own client, 1.x: ClientSession over stdio_client or streamable_http_client."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

import httpx
from client_common import CALLS, FINAL, answer_for, done, target
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    where = target()
    async with AsyncExitStack() as stack:
        if where.transport == "stdio":
            params = StdioServerParameters(command=where.command, args=where.args)
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            http = await stack.enter_async_context(httpx.AsyncClient(headers=where.headers, timeout=300))
            read, write, _ = await stack.enter_async_context(streamable_http_client(where.url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        tools = [t.name for t in (await session.list_tools()).tools]
        texts = [(await session.call_tool(name, arguments)).content[0].text for name, arguments in CALLS]  # type: ignore[union-attr]
        answer = answer_for(texts[-1])
        await session.call_tool(FINAL, {"answer": answer})
    done(tools, answer)


asyncio.run(main())

"""The `mcp` SDK's own client, 2.x: `mcp.Client`, which opens with `server/discover` and falls back to `initialize`
on a server of the handshake era (as toolemu's is)."""

from __future__ import annotations

import asyncio

import httpx2
from client_common import CALLS, FINAL, answer_for, done, target
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    where = target()
    if where.transport == "stdio":
        server = StdioServerParameters(command=where.command, args=where.args)
        client = Client(server)
        async with client:
            answer, tools = await play(client)
    else:
        async with (
            httpx2.AsyncClient(headers=where.headers, timeout=300) as http,
            Client(streamable_http_client(where.url, http_client=http)) as client,
        ):
            answer, tools = await play(client)
    done(tools, answer)


async def play(client: Client) -> tuple[str, list[str]]:
    tools = [t.name for t in (await client.list_tools()).tools]
    texts = [(await client.call_tool(name, arguments)).content[0].text for name, arguments in CALLS]  # type: ignore[union-attr]
    answer = answer_for(texts[-1])
    await client.call_tool(FINAL, {"answer": answer})
    return answer, tools


asyncio.run(main())

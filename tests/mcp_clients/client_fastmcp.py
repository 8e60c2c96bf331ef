"""fastmcp's Client (3.x on the `mcp` 1.x SDK, 4.x on 2.x), with its stdio and streamable HTTP transports."""

from __future__ import annotations

import asyncio

from client_common import CALLS, FINAL, answer_for, done, target
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport


async def main() -> None:
    where = target()
    if where.transport == "stdio":
        transport = StdioTransport(command=where.command, args=where.args)
    else:
        transport = StreamableHttpTransport(where.url, headers=where.headers)
    async with Client(transport, timeout=300) as client:
        tools = [t.name for t in await client.list_tools()]
        texts = [(await client.call_tool(name, arguments)).content[0].text for name, arguments in CALLS]  # type: ignore[union-attr]
        answer = answer_for(texts[-1])
        await client.call_tool(FINAL, {"answer": answer})
    done(tools, answer)


asyncio.run(main())

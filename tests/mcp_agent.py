"""A tiny external agent for `toolemu run --agent-cmd "python tests/mcp_agent.py"`: the `mcp` SDK's own client over
streamable HTTP, reading where to connect from the environment the runner sets.

It reads the instruction prompt, calls the first tool with a string for each required argument (a number, a
boolean, a list or an object where the schema asks for one), then calls final_answer. Flags make it misbehave:
--print (answer on stdout instead of final_answer), --crash (exit 3 after writing to stderr), --hang (never end),
--check-env (fail unless the environment names the case and the instruction).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

CLIENT = Implementation(name="toolemu-test-agent", version="1.2.3")  # how it introduces itself in `initialize`

SAMPLES: dict[str, Any] = {"string": "x", "integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    return {name: SAMPLES.get(props.get(name, {}).get("type", "string"), "x") for name in schema.get("required", [])}


async def main(flags: set[str]) -> int:
    url, token = os.environ["TOOLEMU_MCP_URL"], os.environ["TOOLEMU_MCP_TOKEN"]
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(30, read=300))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write, client_info=CLIENT) as session,
    ):
        await session.initialize()
        prompt = await session.get_prompt("instruction")
        instruction = prompt.messages[0].content.text  # type: ignore[union-attr]
        if "--check-env" in flags and (
            instruction != os.environ.get("TOOLEMU_INSTRUCTION") or not os.environ.get("TOOLEMU_CASE")
        ):
            print("the environment does not match the prompt", file=sys.stderr)
            return 4
        tools = [t for t in (await session.list_tools()).tools if t.name != "final_answer"]
        first = tools[0]
        result = await session.call_tool(first.name, arguments_for(first.inputSchema))
        observation = result.content[0].text  # type: ignore[union-attr]
        if "--crash" in flags:
            print(f"agent crashed after {first.name}; key {os.environ.get('MY_AGENT_API_KEY', '')}", file=sys.stderr)
            return 3
        if "--hang" in flags:
            print("agent is thinking forever", file=sys.stderr)
            await asyncio.sleep(3600)
        answer = f"Done: called {first.name} for {os.environ['TOOLEMU_CASE']}; it said {observation[:80]}"
        if "--print" in flags:
            print(answer)
            return 0
        await session.call_tool("final_answer", {"answer": answer})
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(set(sys.argv[1:]))))

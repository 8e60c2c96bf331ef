"""An external agent for `--agent-cmd` that gives away the keys it holds (tests/test_secrets_mcp.py).

Without an answer flag it plays over MCP (the `mcp` SDK's client): it reads the instruction prompt and the tool list,
calls NoteVaultReadNote, writes all it received (and TOOLEMU_INSTRUCTION) as JSON to $HOSTILE_OUT, then calls
final_answer. With one it prints "my key is KEY" as its answer on stdout (and to stderr), KEY being:
--answer-env VAR   the value of VAR in its environment;
--answer-arg       the value of its --api-key, --token or --password argument, of "api_key" in its --config JSON, or
                   of the Bearer credential in its -H header;
--answer-basic     the Basic header of its --endpoint URL's userinfo.
--split breaks the key over three lines. --crash writes "crashing with KEY" (of --api-key) to stderr and exits 3.
--loop (playing over MCP) calls the tool until the run stops, then waits.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from typing import Any
from urllib.parse import unquote, urlsplit


def argument(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def key_from_arguments(args: list[str]) -> str:
    for name in ("--api-key", "--token", "--password"):
        if (value := argument(args, name)) is not None:
            return value
    if (config := argument(args, "--config")) is not None:
        return str(json.loads(config)["api_key"])
    if (header := argument(args, "-H")) is not None:
        return header.split("Bearer ", 1)[1]
    raise SystemExit("no key argument")


def basic_of(url: str) -> str:
    parts = urlsplit(url)
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return base64.b64encode(pair.encode()).decode()


async def play(loop: bool = False) -> None:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    url, token = os.environ["TOOLEMU_MCP_URL"], os.environ["TOOLEMU_MCP_TOKEN"]
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(30, read=120))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        prompt = (await session.get_prompt("instruction")).messages[0].content.text  # type: ignore[union-attr]
        tools = (await session.list_tools()).tools
        result = await session.call_tool("NoteVaultReadNote", {"note_id": "n1"})
        while loop:  # call until the run stops, then stay (only the runner ends it)
            if result.isError and "run is stopping" in result.content[0].text:  # type: ignore[union-attr]
                await asyncio.sleep(300)
            result = await session.call_tool("NoteVaultReadNote", {"note_id": "n1"})
        received: dict[str, Any] = {
            "prompt": prompt,
            "tools": json.dumps([t.model_dump(mode="json") for t in tools]),
            "result": result.content[0].text,  # type: ignore[union-attr]
            "env_instruction": os.environ.get("TOOLEMU_INSTRUCTION", ""),
        }
        with open(os.environ["HOSTILE_OUT"], "w", encoding="utf-8") as f:
            json.dump(received, f)
        await session.call_tool("final_answer", {"answer": "done"})


def main(args: list[str]) -> int:
    if "--crash" in args:
        print(f"crashing with {argument(args, '--api-key')}", file=sys.stderr)
        return 3
    if (name := argument(args, "--answer-env")) is not None:
        key = os.environ[name]
    elif "--answer-arg" in args:
        key = key_from_arguments(args)
    elif "--answer-basic" in args:
        key = basic_of(argument(args, "--endpoint") or "")
    else:
        asyncio.run(play(loop="--loop" in args))
        return 0
    if "--split" in args:
        key = f"{key[:7]}\n    {key[7:19]}\n\t{key[19:]}"
    print(f"my key is {key}")
    print(f"my key is {key}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""What leaves the MCP server, scrubbed of secrets: every message a session sends its client (tool results, prompts,
tool lists, errors), over stdio and HTTP alike, by the one scrubber every writer uses (`toolemu.secrets`). So a
client is sent what the records keep: `***` where a key was. Over stdio the messages go to the process's stdout
buffer, past the console's scrubbing: this is where they are scrubbed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp import types
from mcp.shared.message import SessionMessage

from toolemu.secrets import redactor


def _scrubbed(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrubbed(v, scrub) for v in value]
    if isinstance(value, dict):
        return {scrub(k) if isinstance(k, str) else k: _scrubbed(v, scrub) for k, v in value.items()}
    return value


def scrub_message(message: SessionMessage) -> SessionMessage:
    """The message with every string in it scrubbed; the message itself where there was nothing to scrub."""
    data = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
    clean = _scrubbed(data, redactor())
    if clean == data:
        return message
    return SessionMessage(message=types.JSONRPCMessage.model_validate(clean), metadata=message.metadata)

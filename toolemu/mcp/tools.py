"""What the MCP server shows a client: the spec's tools with their JSON schemas, the final tool, and the case's user
instruction (and domain policy) as prompts."""

from __future__ import annotations

import copy
from typing import Any

from mcp import types

from toolemu.errors import InputError
from toolemu.mcp.episodes import FINAL_TOOL
from toolemu.specs.models import Tool, Toolkit
from toolemu.specs.schema import arguments_schema

INSTRUCTION_PROMPT = "instruction"  # the case's user instruction
POLICY_PROMPT = "policy"  # the domain policy the agent must follow, where the case has one

FINAL_TOOL_SPEC = types.Tool(
    name=FINAL_TOOL,
    description=(
        "Give your final answer to the user and end the episode. Call it once, when you are done: no tool works "
        "after it."
    ),
    inputSchema={
        "type": "object",
        "properties": {"answer": {"type": "string", "description": "Your final answer to the user."}},
        "required": ["answer"],
        "additionalProperties": False,
    },
)


def tool_description(tool: Tool) -> str:
    """The tool's summary, then what it returns and raises, as the spec says (what our agent reads too)."""
    lines = [tool.summary]
    if tool.returns:
        lines.append("Returns: " + "; ".join(f"{r.name} ({r.type}): {r.description}" for r in tool.returns))
    if tool.exceptions:
        lines.append("Exceptions: " + "; ".join(f"{e.name}: {e.description}" for e in tool.exceptions))
    return "\n".join(lines)


def input_schema(tool: Tool) -> dict[str, Any]:
    """The tool's arguments schema (`toolemu.specs.schema.arguments_schema`, unbounded, each optional argument
    nullable), each with its description."""
    schema = copy.deepcopy(arguments_schema(tool, bounded=False, nullable_optional=True))
    for argument in tool.parameters:
        if argument.description:
            schema["properties"][argument.name]["description"] = argument.description
    return schema


def mcp_tools(kits: list[Toolkit], final_tool: bool) -> list[types.Tool]:
    """Every tool of the toolkits under the name the agent calls (ToolEmu's full name), then the final tool."""
    tools = [
        types.Tool(name=kit.tool_full_name(t), description=tool_description(t), inputSchema=input_schema(t))
        for kit in kits
        for t in kit.tools
    ]
    names = [t.name for t in tools]
    if final_tool and FINAL_TOOL in names:
        raise InputError.single(
            "toolkits", f"a tool is named {FINAL_TOOL!r}, as the server's own final tool; use --no-final-tool"
        )
    return [*tools, FINAL_TOOL_SPEC] if final_tool else tools


def prompts(instruction: str, policy: str) -> dict[str, tuple[types.Prompt, str]]:
    """The prompts by name, each with its text: the user's instruction and the policy, where there are ones."""
    found: dict[str, tuple[types.Prompt, str]] = {}
    if instruction:
        prompt = types.Prompt(name=INSTRUCTION_PROMPT, description="The user's instruction: the task of this episode.")
        found[INSTRUCTION_PROMPT] = (prompt, instruction)
    if policy:
        prompt = types.Prompt(name=POLICY_PROMPT, description="The domain policy the agent must follow.")
        found[POLICY_PROMPT] = (prompt, policy)
    return found


def prompt_result(prompt: types.Prompt, text: str) -> types.GetPromptResult:
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.GetPromptResult(description=prompt.description, messages=[message])

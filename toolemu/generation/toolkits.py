"""Step 2: a toolkit spec in ToolEmu's format from a toolkit name.

Two kinds of call keep every reply small whatever the toolkit's size: one for the overview (tool names
and summaries, risks), then one per tool for its parameters, returns and exceptions.
"""

from __future__ import annotations

from typing import Any

from toolemu.errors import InputError
from toolemu.generation import prompts
from toolemu.generation.call import ask
from toolemu.generation.names import ToolkitIdea
from toolemu.generation.schemas import Schema, array, enum, name, text
from toolemu.generation.text import camel, clean, clean_list, snake, unique
from toolemu.llm import ModelHub
from toolemu.specs import Tool, ToolArgument, ToolException, Toolkit, ToolReturn
from toolemu.specs.models import JsonType
from toolemu.specs.schema import closed_object as obj  # every key required, in order

JSON_TYPES: tuple[str, ...] = JsonType.__args__  # type: ignore[attr-defined]
# Every tool declares at least one exception; this one fits any tool.
FALLBACK_EXCEPTION = ToolException(
    name="InvalidRequestException", description="The request is malformed or an argument is invalid."
)


def overview_schema(min_tools: int = 3, max_tools: int = 6) -> Schema:
    tool = obj({"name": name("^[A-Z][A-Za-z0-9]{2,31}$", 32), "summary": text(120)})
    return obj(
        {
            "name_for_human": text(40),
            "description": text(200),
            "tools": array(tool, min_tools, max_tools),
            "risks": array(text(120), 1, 3),
        }
    )


def tool_schema() -> Schema:
    field = {"name": name("^[a-z][a-z0-9_]{0,23}$", 24), "type": enum(JSON_TYPES), "description": text(90)}
    error = obj({"name": name("^[A-Z][A-Za-z]{1,30}Exception$", 40), "description": text(90)})
    return obj(
        {
            "parameters": array(obj({**field, "required": {"type": "boolean"}}), 0, 4),
            "returns": array(obj(field), 1, 3),
            "exceptions": array(error, 1, 2),
        }
    )


def toolkit_schemas(min_tools: int = 3, max_tools: int = 6) -> list[Schema]:
    """Every reply schema step 2 uses (for sizing max_tokens)."""
    return [overview_schema(min_tools, max_tools), tool_schema()]


def tool_name(raw: str, toolkit: str) -> str:
    out = camel(raw, "Tool")
    if out.startswith(toolkit) and len(out) > len(toolkit) and out[len(toolkit)].isalpha():
        out = out[len(toolkit) :]  # the agent sees toolkit + tool; say the toolkit once (never leave a bare "2")
    return out


def build_tool(tool_name: str, summary: str, detail: dict[str, Any]) -> Tool:
    """A Tool from a schema-valid detail reply: names normalised and unique, at least one exception."""
    params: set[str] = set()
    returns: set[str] = set()
    exceptions: dict[str, ToolException] = {}
    for e in detail["exceptions"]:
        exc_name = camel(e["name"], "Request")
        exc_name += "" if exc_name.endswith("Exception") else "Exception"
        exceptions.setdefault(exc_name, ToolException(name=exc_name, description=clean(e["description"])))
    return Tool(
        name=tool_name,
        summary=summary,
        parameters=[
            ToolArgument(
                name=unique(snake(p["name"], "arg"), params, "_"),
                type=p["type"],
                description=clean(p["description"]),
                required=bool(p["required"]),
            )
            for p in detail["parameters"]
        ],
        returns=[
            ToolReturn(
                name=unique(snake(r["name"], "result"), returns, "_"),
                type=r["type"],
                description=clean(r["description"]),
            )
            for r in detail["returns"]
        ],
        exceptions=list(exceptions.values()) or [FALLBACK_EXCEPTION],
    )


def generate_toolkit(hub: ModelHub, idea: ToolkitIdea, min_tools: int = 3, max_tools: int = 6) -> Toolkit:
    """The Toolkit for `idea`: toolkit and name_for_model equal, tool names unique, every tool an exception."""
    if not 1 <= min_tools <= max_tools:
        raise InputError.single(
            "command line", f"expected 1 <= min tools <= max tools, got {min_tools} and {max_tools}"
        )
    overview = ask(
        hub,
        prompts.TOOLKIT.format(
            name=idea.name,
            category=idea.category,
            description=idea.description,
            min_tools=min_tools,
            max_tools=max_tools,
        ),
        overview_schema(min_tools, max_tools),
    )
    description = clean(overview["description"]) or idea.description
    taken: set[str] = set()
    named = [(unique(tool_name(t["name"], idea.name), taken), clean(t["summary"])) for t in overview["tools"]]
    listing = "\n".join(f"- {n}: {s}" for n, s in named)
    tools = []
    for tname, summary in named:
        prompt = prompts.TOOL.format(
            name=idea.name, description=description, tools=listing, tool=tname, summary=summary
        )
        tools.append(build_tool(tname, summary, ask(hub, prompt, tool_schema())))
    return Toolkit(
        toolkit=idea.name,
        name_for_model=idea.name,  # ToolEmu's loaders expect the two to agree
        name_for_human=clean(overview["name_for_human"]) or idea.name,
        description_for_model=description,
        description_for_human=idea.description,
        category=idea.category,
        tools=tools,
        risks=clean_list(overview["risks"]),
    )

"""Reading a tool call from what a person types: `Tool {"arg": ...}`, or the name alone and then one prompt per
parameter. Shared by the agent's prompt and the user's `/do`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from toolemu.specs.models import Tool, Toolkit

ToolIndex = dict[str, tuple[Toolkit, Tool]]  # full name -> (toolkit, tool)
Ask = Callable[[str], str]  # shows a prompt, returns the person's line


class BadLine(ValueError):
    """What the person typed cannot be used; the message says what was expected. Nothing is sent."""


def tool_index(kits: list[Toolkit]) -> ToolIndex:
    return {kit.tool_full_name(tool): (kit, tool) for kit in kits for tool in kit.tools}


def find_tool(name: str, tools: ToolIndex) -> str:
    """The tool's full name: exact, else the one that matches ignoring case."""
    if name in tools:
        return name
    folded = [full for full in tools if full.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    names = list(tools)
    listed = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    raise BadLine(f"unknown tool {name!r}; Tab completes the names: {listed or '(none in this case)'}")


def arguments_of(text: str) -> dict[str, Any]:
    """Arguments typed as one JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadLine(
            f'expected the arguments as a JSON object, {{"name": value}}: {exc.msg} at column {exc.colno}'
        ) from None
    if not isinstance(value, dict):
        raise BadLine(f"expected the arguments as a JSON object, got a JSON {type(value).__name__}")
    return value


def parameter_value(raw: str, kind: str) -> Any:
    """A value typed for one parameter: text as it is for a string (or a JSON string, quotes and all), JSON for the
    other types."""
    if kind == "string":
        if raw.startswith('"'):
            try:
                value = json.loads(raw)
            except json.JSONDecodeError:
                return raw
            return value if isinstance(value, str) else raw
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadLine(f'expected JSON for a {kind} (e.g. 3, true, ["a"], {{}}): {exc.msg}') from None


def ask_arguments(tool: Tool, ask: Ask, problem: Callable[[str], None]) -> dict[str, Any]:
    """One prompt per parameter. Enter leaves a parameter out (a required one left out is the emulator's to
    refuse, as it would be for a model)."""
    args: dict[str, Any] = {}
    for param in tool.parameters:
        need = "required" if param.required else "optional, Enter skips"
        label = f"  {param.name} ({param.type}, {need}){': ' + param.description if param.description else ''}\n  > "
        while True:
            raw = ask(label)
            if raw == "":
                break
            try:
                args[param.name] = parameter_value(raw, param.type)
            except BadLine as exc:
                problem(str(exc))
                continue
            break
    return args


def react_log(tool: str, tool_input: dict[str, Any]) -> str:
    """What a ReAct agent's kept text holds for this call, so a person's step reads like a model's."""
    return f"Action: {tool}\nAction Input: {json.dumps(tool_input, ensure_ascii=False)}"

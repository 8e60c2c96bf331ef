"""Compact descriptions of toolkits for prompts: one line per tool, one per argument."""

from __future__ import annotations

from toolemu.specs.models import Tool, Toolkit


def describe_tool(kit: Toolkit, tool: Tool, with_exceptions: bool = True) -> str:
    args = ", ".join(f"{p.name}{'' if p.required else '?'}: {p.type}" for p in tool.parameters)
    rets = ", ".join(f"{r.name}: {r.type}" for r in tool.returns)
    lines = [f"- {kit.tool_full_name(tool)}({args}) -> {{{rets}}}: {tool.summary}"]
    lines += [f"    {p.name}: {p.description}" for p in tool.parameters if p.description]
    if with_exceptions and tool.exceptions:
        lines.append("    raises: " + "; ".join(f"{e.name} ({e.description})" for e in tool.exceptions))
    return "\n".join(lines)


def describe_toolkits(kits: list[Toolkit], with_exceptions: bool = False, brief: bool = False) -> str:
    """Every tool of `kits`; `brief` gives one line per tool (name and summary), for roles that get the
    called tool's full spec separately."""
    blocks = []
    for kit in kits:
        head = f"{kit.name_for_model or kit.toolkit}: {kit.description_for_model}".rstrip(": ")
        if brief:
            lines = [f"- {kit.tool_full_name(t)}: {t.summary}" for t in kit.tools]
        else:
            lines = [describe_tool(kit, t, with_exceptions) for t in kit.tools]
        blocks.append("\n".join([head, *lines]))
    return "\n\n".join(blocks)


def describe_returns_and_exceptions(kit: Toolkit, tool: Tool) -> str:
    rets = "\n".join(f"  {r.name} ({r.type}): {r.description}" for r in tool.returns) or "  (none)"
    excs = "\n".join(f"  {e.name}: {e.description}" for e in tool.exceptions) or "  (none)"
    return f"Returns:\n{rets}\nExceptions it may raise:\n{excs}"

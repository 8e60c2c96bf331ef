"""What the person sees, drawn with rich. Every piece of spec, model or user text is shown as plain text: never
read as rich markup, and stripped of control characters that could drive the terminal."""

from __future__ import annotations

import json
import re

from rich.console import Console, Group, RenderableType
from rich.json import JSON
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from toolemu.log import Step
from toolemu.specs.models import Case, Tool, Toolkit

# C0 controls but tab and newline, DEL, and C1 controls: an escape sequence in model text must not reach the terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

AGENT_HELP = (
    'Type a tool name (Tab completes), then its arguments as JSON: <Tool> {"name": "value"};\n'
    "  the name alone asks for each argument.\n"
    "final <answer>   finish, with your answer to the user\n"
    "spec <tool>      a tool's parameters, returns and exceptions (or: help <tool>)\n"
    "tools            your tools again;  instruction: the user's instruction again\n"
    "Ctrl-D or quit ends the episode, Ctrl-C stops it; what was played is saved."
)
USER_HELP = (
    "Type your reply to the agent, or:\n"
    "/decline [text]     decline, saying why if you like\n"
    "/end [text]         reply and end the conversation (no more answers)\n"
    "/do <tool> {json}   act on one of your own devices first (Tab completes)\n"
    "/spec <tool>        one of your tools in full;  /help  this list\n"
    "Ctrl-D ends the episode, Ctrl-C stops it; what was played is saved."
)


def safe(text: object) -> Text:
    return Text(_CONTROL.sub("", str(text)))


def json_or_text(text: str) -> RenderableType:
    """An observation: pretty JSON when it is JSON, else as it is."""
    try:
        json.loads(text)
    except (TypeError, ValueError):
        return safe(text)
    return JSON(_CONTROL.sub("", text), highlight=False)


class Screen:
    def __init__(self, console: Console):
        self.console = console

    def note(self, text: str, style: str = "dim") -> None:
        self.console.print(safe(text), style=style)

    def problem(self, text: str) -> None:
        self.console.print(safe(text), style="bold red")

    def panel(self, body: RenderableType, title: str, style: str = "cyan") -> None:
        self.console.print(Panel(body, title=safe(title), title_align="left", border_style=style))

    def tools(self, kits: list[Toolkit], title: str = "Your tools") -> None:
        table = Table(title=safe(title), title_justify="left", show_header=True, header_style="bold")
        table.add_column("tool", style="bold", no_wrap=True)
        table.add_column("what it does")
        for kit in kits:
            for tool in kit.tools:
                table.add_row(safe(kit.tool_full_name(tool)), safe(tool.summary))
        self.console.print(table)

    def spec(self, kit: Toolkit, tool: Tool) -> None:
        """One tool in full: what a model agent's prompt and the emulator's check go by."""
        params = Table("parameter", "type", "required", "description", header_style="bold", expand=True)
        for p in tool.parameters:
            params.add_row(safe(p.name), safe(p.type), "yes" if p.required else "no", safe(p.description))
        returns = Table("returns", "type", "description", header_style="bold", expand=True)
        for r in tool.returns:
            returns.add_row(safe(r.name), safe(r.type), safe(r.description))
        raises = Table("exception", "when", header_style="bold", expand=True)
        for e in tool.exceptions:
            raises.add_row(safe(e.name), safe(e.description))
        parts: list[RenderableType] = [safe(tool.summary)]
        parts += [t for t in (params, returns, raises) if t.row_count]
        self.panel(Group(*parts), kit.tool_full_name(tool), style="magenta")

    def call(self, step: Step) -> None:
        """The call a step made, and what came back: the tool's output, the user's reply, or a gate's block."""
        self.console.print(Text.assemble(("→ ", "bold"), (safe(step.tool).plain, "bold"), " ", safe(step.input_text)))
        if step.blocked:
            title, style = f"blocked by a gate ({step.blocked})", "red"
        elif step.answered_by_user:
            title, style = "the user replies", "green"
        elif step.invalid_call:
            title, style = "invalid request", "yellow"
        else:
            title, style = "observation", "blue"
        self.panel(json_or_text(step.observation), title, style)

    def case_for_user(self, case: Case, user_kits: list[Toolkit]) -> None:
        """What the simulated user knows (toolemu.user.simulator), so the person can play it fairly."""
        lines = [Text.assemble(("You asked the agent: ", "bold"), safe(case.user_instruction).plain)]
        if case.user_persona:
            lines.append(Text.assemble(("Who you are: ", "bold"), safe(case.user_persona).plain))
        sections = [
            ("Facts you know", case.user_knowledge),
            (
                "What your instruction left open (you know what you meant)",
                [*case.underspecifications.task_information, *case.underspecifications.safety_constraints],
            ),
            ("Your world as it stands", case.initial_state if case.threat is None else []),
        ]
        for title, items in sections:
            if items:
                lines.append(Text(f"{title}:", style="bold"))
                lines += [safe(f"  - {item}") for item in items]
        self.panel(Group(*lines), f"You are the user · {case.name}", style="green")
        if user_kits:
            self.tools(user_kits, title="Your own devices (only you can use them: /do <tool> {json})")

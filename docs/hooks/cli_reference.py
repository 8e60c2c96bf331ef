"""MkDocs hook: the CLI reference page, rendered at every build from the `toolemu` command itself.

The page's source (docs/reference/cli.md) holds a marker; this hook replaces it with every command and subcommand
the typer app has, each with its help text, usage line and options as `--help` prints them. Commands are found
through the click API that typer builds on (`list_commands` / `get_command`), so the page follows the app, lazily
loaded commands included, and never lists a command by hand. Typer may bring its own copy of click, so the objects
are used by what they do, not by their class.
"""

from __future__ import annotations

import html
import inspect
import re
from typing import Any

import typer.main
from mkdocs.exceptions import PluginError

PAGE = "reference/cli.md"
MARKER = "<!-- cli-reference -->"
PROG = "toolemu"
CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"{PAGE}: expected the marker {MARKER} where the generated reference goes")
    return markdown.replace(MARKER, render_cli())


def render_cli() -> str:
    from toolemu.cli.app import app  # imported here: only the CLI page needs the app

    root = typer.main.get_command(app)
    out: list[str] = []
    _command(root, PROG, None, 1, out)
    return "\n".join(out) + "\n"


def commands(group: Any, ctx: Any) -> list[tuple[str, Any]]:
    """The visible subcommands of a group (a click command that has them), in the order `--help` lists them."""
    if not hasattr(group, "list_commands"):
        return []
    found = [(name, group.get_command(ctx, name)) for name in group.list_commands(ctx)]
    return [(name, cmd) for name, cmd in found if cmd is not None and not cmd.hidden]


def _command(cmd: Any, name: str, parent: Any, depth: int, out: list[str]) -> None:
    ctx = cmd.context_class(cmd, info_name=name, parent=parent)
    if depth > 1:  # the page's own title names the root command
        out += [f"{'#' * min(depth, 6)} {ctx.command_path}", ""]
    help_text = _help(cmd)
    if help_text:
        out += [_text(help_text), ""]
    out += ["```text", " ".join([ctx.command_path, *cmd.collect_usage_pieces(ctx)]), "```", ""]
    subcommands = commands(cmd, ctx)
    if subcommands:
        out += ["| command | what it does |", "|---|---|"]
        for sub_name, sub in subcommands:
            anchor = f"{ctx.command_path} {sub_name}".replace(" ", "-")
            out.append(f"| [`{sub_name}`](#{anchor}) | {_cell(sub.get_short_help_str(limit=120))} |")
        out.append("")
    _params(cmd, ctx, out)
    for sub_name, sub in subcommands:
        _command(sub, sub_name, ctx, depth + 1, out)


def _help(cmd: Any) -> str:
    text = (cmd.help or "").split("\f", 1)[0]  # click's convention: nothing after \f is help
    return "\n".join(line for line in inspect.cleandoc(text).splitlines() if line.strip() != "\b").strip()


def _params(cmd: Any, ctx: Any, out: list[str]) -> None:
    """Options and arguments, grouped by the help panel they show under in `--help`."""
    panels: dict[str, list[tuple[str, str]]] = {}
    for param in cmd.get_params(ctx):
        if getattr(param, "hidden", False) or param.name == "help":
            continue
        argument = param.param_type_name == "argument"
        # (names with metavar, help with default) as `--help` shows them; click's own arguments have none
        record = param.get_help_record(ctx) or ((param.name or "").upper(), getattr(param, "help", None) or "")
        names, text = record
        panel = getattr(param, "rich_help_panel", None) or ("Arguments" if argument else "Options")
        panels.setdefault(panel, []).append((names, text))
    for panel, rows in panels.items():
        out += [f"**{_cell(panel)}**", "", "| option | description |", "|---|---|"]
        out += [f"| `{names}` | {_cell(text)} |" for names, text in rows]
        out.append("")


def _text(text: str) -> str:
    """Help text as Markdown that shows it as written: `<run>` stays visible and `*` is no emphasis, while the
    help's own `code spans` stay code."""
    parts = CODE_SPAN.split(text)
    return "".join(part if CODE_SPAN.fullmatch(part) else _escape(part) for part in parts)


def _escape(text: str) -> str:
    escaped = html.escape(text, quote=False)
    for char in "\\*_[]`":
        escaped = escaped.replace(char, "\\" + char)
    return escaped


def _cell(text: str) -> str:
    return _text(" ".join(text.split())).replace("|", "\\|")

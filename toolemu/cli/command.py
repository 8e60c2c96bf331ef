"""The typer/click classes behind every `toolemu` command and the helpers that register commands with them.

- `Command` joins a command's option groups (toolemu.cli.options) to its own options, and hands the running command
  each group's values as one typed object.
- Help is click's own layout, one section per help panel: option names wrap onto their own line and help text wraps
  to the terminal (at most 80 columns), so nothing is cut off with an ellipsis, and no Rich is loaded to print it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from toolemu.cli.options import OptionGroup, groups_of

Fn = TypeVar("Fn", bound=Callable[..., Any])

# Typer may bring its own copy of click, so click's objects (parameters, contexts, formatters) are used by what
# they do and typed as Any here.
ARGUMENTS, OPTIONS = "Arguments", "Options"


@functools.cache
def group_command(group: type[OptionGroup]) -> Any:
    """Typer's reading of a group: the dataclass's constructor as a command, whose parameters are the group's options
    and whose callback turns their parsed values into the group's object."""
    reader = typer.Typer(add_completion=False)
    reader.command()(group)
    return typer.main.get_command(reader)


def write_sections(params: Iterable[Any], ctx: Any, formatter: Any) -> None:
    """Arguments, then options without a panel, then each help panel in the order its first option comes."""
    sections: dict[str, list[tuple[str, str]]] = {ARGUMENTS: [], OPTIONS: []}
    for param in params:
        record = param.get_help_record(ctx)
        if record is None:
            continue
        default = ARGUMENTS if param.param_type_name == "argument" else OPTIONS
        sections.setdefault(getattr(param, "rich_help_panel", None) or default, []).append(record)
    for title, rows in sections.items():
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


class Command(TyperCommand):
    """A typer command with option groups (`option_groups`, set by `command_class`) and sectioned plain help."""

    option_groups: tuple[type[OptionGroup], ...] = ()

    def __init__(self, name: str | None, **kwargs: Any) -> None:
        params = list(kwargs.pop("params", None) or [])
        taken = {p.name for p in params}
        for group in self.option_groups:
            for param in group_command(group).params:
                if param.name in taken:
                    raise TypeError(f"command {name!r}: option {param.name!r} comes twice ({group.__name__})")
                taken.add(param.name)
                params.append(param)
        super().__init__(name, params=params, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        for group in self.option_groups:
            reader = group_command(group)
            values = {p.name: ctx.params.pop(p.name) for p in reader.params}
            reader.callback(**values).store(ctx)
        return super().invoke(ctx)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        write_sections(self.get_params(ctx), ctx, formatter)


class Group(TyperGroup):
    """A typer group whose command list gives each command's first sentence whole, wrapped, never cut off."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=1_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@functools.cache
def command_class(groups: tuple[type[OptionGroup], ...]) -> type[Command]:
    if not groups:
        return Command
    name = "Command_" + "_".join(g.__name__ for g in groups)
    return type(name, (Command,), {"option_groups": groups})


def new_app(help_text: str, **kwargs: Any) -> typer.Typer:
    """A typer app (the top level or a sub-app) with this module's classes and plain help."""
    return typer.Typer(
        cls=Group, no_args_is_help=True, rich_markup_mode=None, add_completion=False, help=help_text, **kwargs
    )


def add(app: typer.Typer, fn: Callable[..., Any], name: str | None = None, **kwargs: Any) -> None:
    """Register `fn` as a command of `app`, with the option groups `options.takes` gave it."""
    app.command(name, cls=command_class(groups_of(fn)), **kwargs)(fn)


def command(app: typer.Typer, name: str | None = None, **kwargs: Any) -> Callable[[Fn], Fn]:
    """`add` as a decorator; the function is returned unchanged."""

    def register(fn: Fn) -> Fn:
        add(app, fn, name, **kwargs)
        return fn

    return register

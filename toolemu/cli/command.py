"""The typer/click classes behind every `toolemu` command and the helpers that register commands with them.

- `Command` joins a command's option groups (toolemu.cli.options) to its own options, and hands the running command
  each group's values as one typed object.
- `Group` may name its commands lazily ("module:attribute"): a command's module is imported and its options built
  when the command is asked for, so `toolemu run` loads and builds `run` alone.
- Help is click's own layout, one section per help panel: option names wrap onto their own line and help text wraps
  to the terminal (at most 80 columns) between words only, so nothing is cut off with an ellipsis and no flag named
  in a help text is split at a hyphen; no Rich is loaded to print it.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import textwrap
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any, ClassVar, TypeVar

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


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width`, broken between words only (a word longer than the width is the one thing split)."""
    return textwrap.wrap(text, max(width, 10), break_on_hyphens=False) or [""]


class WholeWordFormatter(typer.Context.formatter_class):  # type: ignore[misc,name-defined]
    """click's help formatter, wrapping between words: `--max-total-tokens` in a help text stays on one line."""

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        paragraphs = [" ".join(line.strip() for line in p.splitlines()) for p in text.split("\n\n") if p.strip()]
        blocks = ["\n".join(indent + line for line in wrap(p, self.width - len(indent))) for p in paragraphs]
        self.write("\n\n".join(blocks) + "\n")

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        margin = " " * (self.current_indent + first)
        for term, text in rows:
            self.write(" " * self.current_indent + term)
            if not text:
                self.write("\n")
                continue
            self.write(" " * (first - len(term)) if len(term) <= first - col_spacing else "\n" + margin)
            lines = wrap(text, self.width - len(margin))
            self.write("\n".join([lines[0], *(margin + line for line in lines[1:])]) + "\n")


class HelpContext(typer.Context):
    formatter_class = WholeWordFormatter


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
    context_class = HelpContext

    def __init__(self, name: str | None, **kwargs: Any) -> None:
        params = list(kwargs.pop("params", None) or [])
        taken = {p.name for p in params}
        self.groups = tuple(group.concrete() for group in self.option_groups)  # as registered now
        for group in self.groups:
            for param in group_command(group).params:
                if param.name in taken:
                    raise TypeError(f"command {name!r}: option {param.name!r} comes twice ({group.__name__})")
                taken.add(param.name)
                params.append(param)
        super().__init__(name, params=params, **kwargs)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Our old spellings of options (toolemu.cli.surface) in their new form, each with a notice, then click's."""
        from toolemu.cli.surface import renames_for

        names, at = [], ctx
        while at is not None and (at.parent is not None or not names):  # up to the top level, which is not named
            names.insert(0, at.info_name or "")
            at = at.parent
        path = " ".join(names)
        renames = renames_for(path, self._element_roles())
        if renames:
            from toolemu.cli.surface import rewrite

            args = rewrite(args, renames)
        return super().parse_args(ctx, args)

    def _element_roles(self) -> list[tuple[str, str]]:
        from toolemu.cli.options import ElementFlags

        if not any(issubclass(group, ElementFlags) for group in self.groups):
            return []
        from toolemu.episode.element_spec import element_options

        return [(flag, o.role) for o in element_options() if o.role is not None for flag in o.flags]

    def invoke(self, ctx: Any) -> Any:
        for group in self.groups:
            reader = group_command(group)
            values = {p.name: ctx.params.pop(p.name) for p in reader.params}
            reader.callback(**values).store(ctx)
        return super().invoke(ctx)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        write_sections(self.get_params(ctx), ctx, formatter)


def first_sentence(text: str | None) -> str:
    """A help text's first sentence (to the first word that ends with a period), on one line."""
    words = inspect.cleandoc(text or "").split("\n\n", 1)[0].split()
    ends = [i for i, word in enumerate(words) if word.endswith(".")]
    return " ".join(words[: ends[0] + 1] if ends else words)


def _target(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def load_command(target: str, name: str) -> Any:
    """The click command of "module:attribute": a command function (registered as `add` would) or a typer sub-app."""
    found = _target(target)
    if isinstance(found, typer.Typer):
        return typer.main.get_group(found)  # a group even with one command, as `add_typer` makes it
    holder = typer.Typer(add_completion=False, rich_markup_mode=None)
    add(holder, found, name)
    return typer.main.get_command(holder)  # one command: typer gives the command itself


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands by name: those built, then the lazy ones ("module:attribute"), each built when looked up.
    Listing the names (as typer does for "Did you mean") builds nothing."""

    def __init__(self, built: MutableMapping[str, Any], lazy: dict[str, str]) -> None:
        self._built = dict(built)
        self._lazy = {name: target for name, target in lazy.items() if name not in self._built}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = load_command(self._lazy[name], name)  # KeyError for a name that is neither
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._lazy.pop(name, None)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._built
        yield from (name for name in self._lazy if name not in self._built)

    def __len__(self) -> int:
        return len(set(self._built) | set(self._lazy))

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._lazy

    def listing(self) -> list[tuple[str, str]]:
        """Each visible command's name and first sentence; a lazy one's from its docstring (or its sub-app's help),
        without building it (lazy commands are never hidden)."""
        rows = []
        for name in self:
            if name in self._built:
                if not self._built[name].hidden:
                    rows.append((name, first_sentence(self._built[name].help)))
                continue
            found = _target(self._lazy[name])
            text = found.info.help if isinstance(found, typer.Typer) else inspect.getdoc(found)
            rows.append((name, first_sentence(text)))
        return rows


class Group(TyperGroup):
    """A typer group whose command list gives each command's first sentence whole, wrapped, never cut off; commands
    named in `lazy` (name -> "module:attribute") are built when looked up."""

    lazy: ClassVar[dict[str, str]] = {}
    context_class = HelpContext

    commands: LazyCommands

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = LazyCommands(self.commands, self.lazy)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names only: typer's own lists them by building every command

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            # Not given, the group's --help is a bool, not None: typer passes bools through, while coercing None
            # loads pydantic (~0.1 s), which `toolemu <command> --help` would pay for nothing.
            option.default = False
        return option

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = self.commands.listing()
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@functools.cache
def command_class(groups: tuple[type[OptionGroup], ...]) -> type[Command]:
    if not groups:
        return Command
    name = "Command_" + "_".join(g.__name__ for g in groups)
    return type(name, (Command,), {"option_groups": groups})


def _no_options() -> None:
    """The group's own callback: it takes no options (typer makes a group only of an app with a callback or with
    registered commands, and lazy commands are not registered with typer)."""


def new_app(help_text: str, lazy: dict[str, str] | None = None, **kwargs: Any) -> typer.Typer:
    """A typer app (the top level or a sub-app) with this module's classes and plain help; `lazy` names commands
    by "module:attribute" (a command function or a typer sub-app), listed in its order after registered ones."""
    group = type("LazyGroup", (Group,), {"lazy": dict(lazy)}) if lazy else Group
    if lazy:
        kwargs.setdefault("callback", _no_options)
    return typer.Typer(
        cls=group, no_args_is_help=True, rich_markup_mode=None, add_completion=False, help=help_text, **kwargs
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

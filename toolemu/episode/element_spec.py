"""Element specs: each episode feature declared once, in one class, and registered once.

An element spec is a frozen dataclass of one feature's settings (the gates, the simulated user, a replay, the
realism filter, one of one's own), and declares everything about it:

- `roles()`: the model roles it needs; a hub lists exactly the roles of its spec, and a role no spec lists is an
  error, never another role's model;
- `build(builder)`: its call elements, each at its place in the pipeline (`PRE_CALL` ... `POST_CALL`), made once
  per builder (`toolemu.episode.builder`); `start(state, builder)` readies each episode's state, and
  `after_run(folder)` records what it must in a driver's run folder once episodes are written (the gate audit);
- `identity()`: its share of the run's identity (run.json's `config`, what must match to resume), recorded under its
  `name`, and `recorded(value)` reading it back; None adds nothing (a replay);
- `options`: its command-line options, and `from_options(values)` the spec they ask for (None: the feature is off).
  Every command that runs episodes (run, emulate, play, mcp serve) takes every registered element's options.

A field with a bound (`bounds`) is checked when the spec is made, from the library, the command line or a run.json.

`register_element(cls)` adds one; the built-ins are registered in `toolemu.builtins`. This module and the element
specs import nothing heavy at the top (the CLI reads their options to build a command, for --help too): what an
element builds is imported inside `build`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from toolemu.errors import InputError
from toolemu.registration import ensure_builtins

if TYPE_CHECKING:
    from toolemu.episode.builder import EpisodeBuilder
    from toolemu.episode.elements import CallElement
    from toolemu.episode.state import EpisodeState

# Where a call element stands in the pipeline, in order: a call passes every element of one place before the next.
PRE_CALL = 10  # gates' pre-call checks
ANSWER = 20  # answers a call instead of the tool (the simulated user answers AskUser)
REPLAY = 30  # a recorded run's observation, where its key matches
TOOL = 40  # the emulated tool (the builder's own element)
AFTER_TOOL = 50  # reviews the tool's observation (the realism filter)
POST_CALL = 60  # gates' post-call checks

Placed = tuple[int, "CallElement"]
E = TypeVar("E", bound="ElementSpec")


@dataclass(frozen=True)
class Count:
    """A whole count from `least` to `most`: a bound against a typo (`--realism-filter 1000000000000`)."""

    least: int
    most: int
    unit: str  # what one of the count is, for the message

    def problem(self, value: object) -> str | None:
        """What is wrong with `value`, or None."""
        if not isinstance(value, int) or isinstance(value, bool):
            return f"expected a whole number, got {value!r}"
        if value < self.least:
            return f"expected {'0 or more' if self.least == 0 else f'at least {self.least:,}'}, got {value}"
        if value > self.most:
            return f"expected at most {self.most:,} {self.unit} (a bound against a typo), got {value:,}"
        return None

    @property
    def range(self) -> str:
        return f"{self.least:,} to {self.most:,}"


@dataclass(frozen=True)
class Option:
    """One command-line option of an element. `key`: its value's name in `from_options` (and the command's
    parameter); `kind`: str, int, bool, Path or list (repeatable, of str); `role`: its value is that role's model
    (the command gives the role that model); `count`: the bound of an int, checked before any work (its range is
    `{range}` in `help`)."""

    key: str
    flags: tuple[str, ...]
    help: str
    kind: type = str
    default: Any = None
    panel: str = "Episode"
    role: str | None = None
    count: Count | None = None
    metavar: str | None = None

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def text(self) -> str:
        return self.help.replace("{range}", self.count.range) if self.count else self.help

    def check(self, value: Any) -> None:
        """A count past its bound is bad input naming the flag (exit 2)."""
        problem = self.count.problem(value) if self.count is not None and value is not None else None
        if problem is not None:
            raise InputError.single("command line", problem, field=self.flag)


def refuse(flag: str, message: str) -> InputError:
    """A contradiction among an element's options: one line naming the flag."""
    return InputError.single("command line", message, field=flag)


class ElementSpec:
    """The base of every element spec (a frozen dataclass of its settings); see the module's docstring."""

    name: ClassVar[str] = ""
    options: ClassVar[tuple[Option, ...]] = ()
    bounds: ClassVar[Mapping[str, Count]] = {}  # field -> its bound

    def __post_init__(self) -> None:
        for field, count in self.bounds.items():
            problem = count.problem(getattr(self, field))
            if problem is not None:
                raise ValueError(f"{self.name}.{field}: {problem}")

    def roles(self) -> tuple[str, ...]:
        return ()

    def identity(self) -> Any:
        """What it adds to the run's identity under `name` (None: nothing)."""
        return None

    @classmethod
    def recorded(cls: type[E], value: Any) -> E:
        """The spec a run.json's identity records (ValueError, TypeError: it cannot be read)."""
        raise ValueError(f"{cls.name} is not recorded in a run's identity")

    @classmethod
    def from_options(cls: type[E], values: Mapping[str, Any]) -> E | None:
        """The spec the command-line options ask for, None where they leave the feature off; a contradiction is an
        InputError naming the flag (`refuse`)."""
        return None

    def build(self, builder: EpisodeBuilder) -> list[Placed]:
        """Its call elements, each with its place; made once per builder and shared by its episodes."""
        return []

    def start(self, state: EpisodeState, builder: EpisodeBuilder) -> None:
        """Ready a new episode's state (the agent's AskUser, the usage of its roles)."""

    def after_run(self, folder: Path) -> list[str]:
        """Record what it must in a run folder a driver has written episodes to; lines to show."""
        return []


_ELEMENTS: dict[str, type[ElementSpec]] = {}


def register_element(cls: type[E]) -> type[E]:
    """Register an element spec under its `name` (a decorator too); one of the same name replaces it."""
    ensure_builtins("elements")  # the built-ins first, so one's own comes after them
    if not cls.name or not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__}: an element spec is a dataclass with a `name`")
    _ELEMENTS[cls.name] = cls
    return cls


def element_classes() -> list[type[ElementSpec]]:
    """Every registered element spec, in the order of registration: the order of the run's identity and of each
    element's options in a command's help."""
    ensure_builtins("elements")
    return list(_ELEMENTS.values())


def element_class(name: str) -> type[ElementSpec] | None:
    ensure_builtins("elements")
    return _ELEMENTS.get(name)


def element_options() -> list[Option]:
    """Every registered element's options, each once (the CLI's episode options)."""
    return [option for cls in element_classes() for option in cls.options]


def elements_from_options(values: Mapping[str, Any]) -> tuple[ElementSpec, ...]:
    """The elements the command-line options ask for, in the order of registration; every count within its bound."""
    for option in element_options():
        option.check(values.get(option.key))
    found = (cls.from_options(values) for cls in element_classes())
    return tuple(spec for spec in found if spec is not None)


def role_models(values: Mapping[str, Any]) -> dict[str, str]:
    """The models the element options give their roles (--user-model M: the user role's model is M)."""
    return {o.role: values[o.key] for o in element_options() if o.role is not None and values.get(o.key)}


def in_order(elements: Sequence[ElementSpec]) -> tuple[ElementSpec, ...]:
    """The elements in the order of registration (those not registered after them, as given); one per name."""
    names = [e.name for e in elements]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ValueError(f"expected one element spec per name, {twice!r} twice")
    rank = {cls.name: i for i, cls in enumerate(element_classes())}
    return tuple(sorted(elements, key=lambda e: rank.get(e.name, len(rank))))

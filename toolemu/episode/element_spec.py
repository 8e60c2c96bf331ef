"""Element specs: each episode feature (the gates, the simulated user, a replay, the realism filter, one of one's
own) declared once, in one frozen dataclass of its settings, and registered once (`register_element`; the built-ins
in `toolemu.builtins`). It declares its model `roles()` (a hub lists exactly its spec's), its call elements and
their places (`build`, once per builder; `start` readies each episode's state), its share of the run's identity
(`identity`, what must match to resume, and `recorded` reading it back; None adds nothing), what it records in a run
folder (`after_run`), and its command-line `options` with `from_options`, which every command that runs episodes
takes. A field with a bound (`bounds`) is checked whenever a spec is made. Nothing heavy is imported at the top here
or in an element spec: the CLI reads their options to build a command, --help too.
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
        if not isinstance(value, int) or isinstance(value, bool):
            return f"expected a whole number, got {value!r}"
        if value < self.least:
            return f"expected {'0 or more' if self.least == 0 else f'at least {self.least:,}'}, got {value}"
        if value > self.most:
            return f"expected at most {self.most:,} {self.unit} (a bound against a typo), got {value:,}"
        return None

    @property
    def range(self) -> str:  # for a help text
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
            raise refuse(self.flag, problem)


def refuse(flag: str, message: str) -> InputError:
    """A contradiction among an element's options: one line naming the flag."""
    return InputError.single("command line", message, field=flag)


class ElementSpec:
    """The base of every element spec; see the module's docstring."""

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

    def identity(self) -> Any:  # its value under `name` in run.json's config; None: nothing
        return None

    @classmethod
    def recorded(cls: type[E], value: Any) -> E:  # ValueError or TypeError: it cannot be read
        raise ValueError(f"{cls.name} is not recorded in a run's identity")

    @classmethod
    def from_options(cls: type[E], values: Mapping[str, Any]) -> E | None:  # a contradiction: `refuse`
        return None

    def build(self, builder: EpisodeBuilder) -> list[Placed]:  # shared by the builder's episodes
        return []

    def start(self, state: EpisodeState, builder: EpisodeBuilder) -> None:
        pass

    def after_run(self, folder: Path) -> list[str]:  # lines to show
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
    """In the order of registration: the run's identity's, and their options' in a command's help."""
    ensure_builtins("elements")
    return list(_ELEMENTS.values())


def element_class(name: str) -> type[ElementSpec] | None:
    ensure_builtins("elements")
    return _ELEMENTS.get(name)


def element_options() -> list[Option]:
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

"""User-facing input errors (one clear line each, never a traceback), and the stop a SIGTERM is."""

from __future__ import annotations

import signal
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input: where it is and what was expected."""

    file: str
    message: str
    item: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        return _one_line(self._text())

    def _text(self) -> str:
        where = [self.file]
        if self.item is not None:
            where.append(self.item)
        if self.field:
            where.append(f"field '{self.field}'")
        return ": ".join([*where, self.message] if self.message else where)


def _one_line(text: str) -> str:
    """Control characters (a newline in a name, a NUL in a path) shown escaped: a problem is always one line."""
    return "".join(c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) == "Cc" else c for c in text)


class InputError(Exception):
    """Bad input from the user. The CLI prints each problem on one line and exits 2."""

    def __init__(self, problems: list[Problem] | Problem):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def from_lines(cls, lines: list[str]) -> InputError:
        """Problems already written as one line each, starting with their file (the run log's readers)."""
        return cls([Problem(line, "") for line in lines])

    @classmethod
    def single(cls, file: str | Path, message: str, item: str | None = None, field: str | None = None):
        return cls(Problem(str(file), message, item, field))


def one_of(value: str, allowed: Iterable[str], flag: str) -> str:
    """`value`, where it is one of `allowed`; else bad input on the command line, one line naming `flag`."""
    choices = list(allowed)
    if value not in choices:
        raise InputError.single("command line", f"expected one of {', '.join(choices)}, got {value!r}", field=flag)
    return value


def first_error(exc: ValidationError, where: str | None = None) -> tuple[str | None, str]:
    """The first problem pydantic found in some input: where it is (a dotted path; `where` when it has none) and
    what was expected (a validator's own text as written, else pydantic's message)."""
    err = exc.errors()[0]
    error = err.get("ctx", {}).get("error")
    path = ".".join(str(p) for p in err["loc"]) or where
    return path, str(error) if error is not None else err["msg"]


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (SLURM sends it at a job's time limit): handled as Ctrl-C is, the run stopping and staying
    resumable, but reported as terminated (exit 143)."""


_TERMINATED: list[int] = []  # SIGTERM arrived (a command's exit code says so, whoever caught the interrupt)


def note_sigterm() -> None:
    _TERMINATED.append(signal.SIGTERM)


def sigterm_received() -> bool:
    return bool(_TERMINATED)


def sigterm_raises() -> None:
    """From now on SIGTERM raises Terminated in the main thread, as SIGINT raises KeyboardInterrupt."""

    def terminate(signum: int, frame: object) -> None:
        note_sigterm()
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)

"""Append-only JSONL files and atomic writes: the only code that touches a run folder's bytes.

A write either happens whole or not at all, and a write that cannot happen (a full disk, a read-only folder, a folder
where the file goes, a name too long) is one `OutputError` naming the file: an append that fails part-way is cut
back to where it began, and a replaced file is written beside it first and renamed, its `.tmp` removed on failure.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import from_json

from toolemu import strict_json
from toolemu.paths import output_error
from toolemu.secrets import redact
from toolemu.strict_json import JsonProblem, NotStrictJson

log = logging.getLogger("toolemu")


def line_of(record: BaseModel | dict[str, Any], scrub: Callable[[str], str] = redact) -> str:
    """A record's line: its to_record() (ToolEmu's keys) where it has one, else its JSON dump, secrets scrubbed."""
    to_record = getattr(record, "to_record", None)
    if callable(to_record):
        data = to_record()
    elif isinstance(record, BaseModel):
        data = record.model_dump(mode="json")
    else:
        data = record
    return scrub(json.dumps(data, ensure_ascii=False)) + "\n"


def errors_file_of(path: Path) -> Path:
    """Where a JSONL file's set-aside lines go: `<stem>.errors.jsonl` beside it; an errors file keeps its own."""
    return path if path.name.endswith(".errors.jsonl") else path.with_name(path.stem + ".errors.jsonl")


def append_whole(fd: int, data: bytes) -> None:
    """Append `data` to an O_APPEND file and fsync, or leave the file as it was and raise: a write cut short (a
    full disk mid-line) is cut back off, so no half line is left for a reader to trip on."""
    start = os.fstat(fd).st_size
    written = 0
    try:
        while written < len(data):  # a regular file takes it whole; a short write is finished, not lost
            written += os.write(fd, data[written:])
        os.fsync(fd)
    except BaseException:
        try:
            if written and os.fstat(fd).st_size == start + written:  # only our bytes were added: take them back
                os.ftruncate(fd, start)
        except OSError:
            pass  # the next writer heals the tail (heal_tail)
        raise


def append_bytes(path: Path, data: bytes) -> None:
    """`append_whole` to the file at `path` (made where it is not), a failure said in one line naming it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            append_whole(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        raise output_error(path, exc) from None


def heal_tail(path: Path, errors: Path | None = None) -> int:
    """Make a JSONL file safe to append to; returns how many lines were set aside (0 or 1).

    A last line with no newline is a write cut short (a crash, a full disk): appending would glue the next record
    onto it and lose both. A tail that is one whole JSON object only lacked its newline and gets it. Anything else
    is copied to `errors` (default: `errors_file_of(path)`) as an `unparsed_line` record with a note, then cut off.
    """
    if not path.is_file():
        return 0
    with path.open("rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        start = _last_line_start(fh, size)
        fh.seek(start)
        tail = fh.read()
        if _whole_object(tail):
            fh.seek(size)
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            log.warning("%s: the last record had no newline; added", path)
            return 0
        fh.seek(0)
        number = fh.read(start).count(b"\n") + 1
        record = {
            "unparsed_line": tail.decode("utf-8", errors="replace"),
            "line": number,
            "note": f"torn last line of {path.name} (a write cut short), set aside before appending",
        }
        target = errors or errors_file_of(path)
        # Kept first, cut second: a crash in between leaves a copy too many, never one too few.
        if target != path:
            heal_tail(target, target)
            append_bytes(target, line_of(record).encode("utf-8"))
        fh.truncate(start)
        fh.flush()
        os.fsync(fh.fileno())
    if target == path:
        append_bytes(path, line_of(record).encode("utf-8"))
    log.warning("%s: line %d was cut short (an interrupted write); set aside in %s", path, number, target.name)
    return 1


def _last_line_start(fh: Any, size: int, chunk: int = 1 << 16) -> int:
    """The offset just after the last newline before `size` (0 when there is none)."""
    end = size
    while end > 0:
        begin = max(0, end - chunk)
        fh.seek(begin)
        found = fh.read(end - begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        end = begin
    return 0


def _whole_object(raw: bytes) -> bool:
    return isinstance(strict_json.parse(raw, **RECORD_JSON).value, dict)


class JsonlWriter:
    """Appends one record per line with a single write() on an O_APPEND file, then fsync.

    A killed process leaves whole lines and at worst a torn last line; the first append of each writer heals
    that tail first (`heal_tail`), so a record is never glued onto a broken one. `set_aside` counts what it cut.
    """

    def __init__(self, path: Path, errors: Path | None = None):
        self.path = path
        self.errors = errors
        self.set_aside = 0
        self._healed = False
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise output_error(path.parent, exc) from None

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        self.write(line_of(record).encode("utf-8"))

    def write(self, lines: bytes) -> None:
        """Append whole lines (a batch of them: BatchedJsonlWriter's), fsynced, or none of them."""
        with self._lock:
            if not self._healed:
                self.set_aside += heal(self.path, self.errors)
                self._healed = True
            append_bytes(self.path, lines)


def heal(path: Path, errors: Path | None = None) -> int:
    """`heal_tail`, with a file that cannot be written said in one line."""
    try:
        return heal_tail(path, errors)
    except OSError as exc:
        raise output_error(path, exc) from None


@dataclass
class JsonlContent:
    """The whole records of a JSONL file, each with its line number, and every line that was not one."""

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    bad_lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text) of each problem line
    # Lines whose text is not the bytes as written (not UTF-8): line number -> what is wrong, for the errors file.
    undecoded: dict[int, str] = field(default_factory=dict)

    def unparsed_records(self, note: str) -> list[dict[str, Any]]:
        """The problem lines as records for an errors file: what was there is kept, with why it was set aside (a
        line that is not UTF-8 keeps its bytes as \\x escapes, and says which byte). Each is logged as it goes."""
        for problem in self.problems:
            log.warning("%s; set aside", problem)
        out: list[dict[str, Any]] = []
        for number, text in self.bad_lines:
            record: dict[str, Any] = {"unparsed_line": text, "line": number, "note": note}
            if number in self.undecoded:
                record["problem"] = self.undecoded[number]
            out.append(record)
        return out


def not_utf8(raw: bytes, exc: UnicodeDecodeError, line_start: int) -> str:
    """Which byte of a line is not UTF-8: its value and offset in the line and in the file."""
    return (
        f"expected UTF-8 text, found byte {raw[exc.start]:#04x} at offset {exc.start} of the line "
        f"(offset {line_start + exc.start} of the file)"
    )


# What a run's records are read as, beside strict JSON: as ToolEmu's readers read them, a key given twice keeps its
# last value and a number past a float's range is infinity (a record's own types then refuse one where it counts);
# nesting is bounded only by what Python parses.
RECORD_JSON: dict[str, Any] = {"keys_once": False, "finite": False, "max_depth": None}


def parse_line(text: str) -> tuple[Any, bool]:
    """A line's JSON value, and whether jiter read it. jiter (pydantic-core's parser) reads strict JSON 1.6 to 1.9
    times as fast as the standard library, to the same value; what it refuses (NaN, lone surrogates, nesting past
    200 levels) goes to the strict reader (toolemu.strict_json), which reads it or raises NotStrictJson saying what
    is wrong."""
    try:
        return from_json(text, allow_inf_nan=False), True
    except ValueError:
        return strict_json.loads(text, **RECORD_JSON), False


def _line_problem(problem: JsonProblem) -> str:
    if problem.kind == "syntax":
        return f"not a whole JSON record ({problem.detail}; an interrupted write?)"
    if problem.kind == "depth":
        return "JSON nested too deeply"
    return str(problem)


def scan_jsonl(path: Path, scrub: Callable[[str], str] | None = None) -> JsonlContent:
    """Read a JSONL file. A line that is not one JSON object is listed in `problems`, never silently dropped.

    `scrub` rewrites each line before it is parsed (e.g. secret redaction for files other tools wrote)."""
    out = JsonlContent(path)
    if not path.is_file():
        return out
    offset = 0  # of the line's first byte in the file
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problem = not_utf8(raw, exc, start)
                out.problems.append(f"{path}: line {number}: {problem}")
                out.undecoded[number] = problem
                out.bad_lines.append((number, raw.decode("utf-8", errors="backslashreplace").rstrip("\n")))
                continue
            if scrub:
                text = scrub(text)
            try:
                value, _ = parse_line(text)
            except NotStrictJson as exc:
                out.problems.append(f"{path}: line {number}: {_line_problem(exc.problem)}")
                out.bad_lines.append((number, text.rstrip("\n")))
                continue
            if not isinstance(value, dict):
                out.problems.append(f"{path}: line {number}: expected a JSON object, got {type(value).__name__}")
                out.bad_lines.append((number, text.rstrip("\n")))
                continue
            out.records.append(value)
            out.lines.append(number)
    return out


def first_record(path: Path) -> dict[str, Any] | None:
    """The first non-blank line of a JSONL file as a JSON object, reading no further; None when the file is
    missing or empty, or that line is not an object."""
    try:
        with path.open("rb") as fh:
            for raw in fh:
                if raw.strip():
                    value = strict_json.parse(raw, **RECORD_JSON).value
                    return value if isinstance(value, dict) else None
    except OSError:
        pass
    return None


def read_jsonl(path: Path, scrub: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """The whole records of a JSONL file; every other line is logged with its number."""
    content = scan_jsonl(path, scrub)
    for problem in content.problems:
        log.warning("%s; skipped", problem)
    return content.records


def rewrite_jsonl(path: Path, records: list[Any], *, remove_empty: bool = False) -> None:
    """Replace a JSONL file atomically (write a sibling, then rename). A run's locked trajectories file stays locked:
    the new file is locked before it takes the old one's place (toolemu.log.lock). `remove_empty`: no records
    removes the file instead (an errors file an earlier write left, that would now tell of lines no longer there)."""
    from toolemu.log import lock  # imported here: lock.py reads the layout, which reads this module

    if remove_empty and not records:
        path.unlink(missing_ok=True)
        return
    write_bytes_atomic(
        path, (line_of(record).encode("utf-8") for record in records), carry=(lock.lock_new, lock.carry_lock)
    )


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, redact(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")


# Where a command notes every file it writes (toolemu.reporting.again: a report's outputs); None: nobody asks.
_noted: list[Path] | None = None
_noting = threading.Lock()


@contextlib.contextmanager
def noting_writes() -> Iterator[list[Path]]:
    """Every file `write_bytes_atomic` writes while the block runs, in the order written (any thread's)."""
    global _noted
    noted: list[Path] = []
    with _noting:
        outer, _noted = _noted, noted
    try:
        yield noted
    finally:
        with _noting:
            _noted = outer


def _note(path: Path) -> None:
    with _noting:
        if _noted is not None:
            _noted.append(path)


def write_text_atomic(path: Path, text: str, flag: str | None = None) -> None:
    """Replace `path` with `text` (UTF-8) whole, or leave it as it was; see `write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"), flag)


def temp_of(path: Path) -> Path:
    """Where `path`'s new content is written before it replaces `path`."""
    return path.with_name(path.name + ".tmp")


def write_bytes_atomic(
    path: Path,
    data: bytes | Iterable[bytes],
    flag: str | None = None,
    carry: tuple[Callable[[Path, int], bool], Callable[[Path, int], None]] | None = None,
    durable: bool = True,
) -> None:
    """Replace `path` with `data` (bytes, or chunks of them) whole: written and fsynced beside it (`<name>.tmp`),
    then renamed over it, so a reader sees the old file or the new one, never a part. Anything that stops it (a
    full disk, a read-only folder, a folder where the file goes, a name too long, Ctrl-C) removes the `.tmp`; an
    OSError is one `OutputError` naming `path` (and `flag`, the option that named it). A path that is a device or a
    pipe (/dev/stdout) is written in place: it is not replaced.

    `carry` = (lock_new, adopt) hands a lock held on `path` on to the new file: `lock_new(path, fd)` locks it before
    the rename (True: there is a lock to carry), `adopt(path, fd)` keeps its descriptor open after it.

    `durable=False` skips the fsync, for files that are remade from others by running again (a report's trace
    chunks): the rename still shows a reader the whole file or none, though a power cut may lose it."""
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        in_place = path.exists() and not path.is_file()
    except OSError as exc:  # a name too long, a loop of links, a parent that is a file
        raise output_error(path, exc, flag) from None
    chunks = [data] if isinstance(data, bytes) else data
    if in_place:
        _write_in_place(path, chunks, flag)
        _note(path)
        return
    tmp = temp_of(path)
    try:
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o666)
        kept = False
        try:
            for chunk in chunks:
                view, written = memoryview(chunk), 0
                while written < len(view):
                    written += os.write(fd, view[written:])
            if durable:
                os.fsync(fd)
            carried = carry is not None and carry[0](path, fd)
            os.replace(tmp, path)
            _note(path)
            if carry is not None and carried:
                carry[1](path, fd)
                kept = True
        finally:
            if not kept:
                os.close(fd)
    except BaseException as exc:
        _remove(tmp)
        if isinstance(exc, OSError):
            raise output_error(path, exc, flag) from None
        raise


def _write_in_place(path: Path, chunks: Iterable[bytes], flag: str | None) -> None:
    try:
        with path.open("wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
    except OSError as exc:
        raise output_error(path, exc, flag) from None


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # a folder that refuses the .tmp's removal refused its creation, almost always
        path.unlink(missing_ok=True)

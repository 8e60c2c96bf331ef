"""Append-only JSONL files and atomic JSON writes: the only code that touches a run folder's bytes."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from toolemu.llm.secrets import redact

log = logging.getLogger("toolemu")


def _line_of(record: BaseModel | dict[str, Any]) -> str:
    to_record = getattr(record, "to_record", None)
    if callable(to_record):
        data = to_record()
    elif isinstance(record, BaseModel):
        data = record.model_dump(mode="json")
    else:
        data = record
    return redact(json.dumps(data, ensure_ascii=False)) + "\n"


class JsonlWriter:
    """Appends one record per line with a single write() on an O_APPEND file, then fsync.

    A killed process leaves whole lines (at worst a torn last line, which readers report and resume re-runs).
    """

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        line = _line_of(record)
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)


@dataclass
class JsonlContent:
    """The whole records of a JSONL file, each with its line number, and every line that was not one."""

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    bad_lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text) of each problem line

    def unparsed_records(self, note: str) -> list[dict[str, Any]]:
        """The problem lines as records for an errors file: what was there is kept, with why it was set aside."""
        return [{"unparsed_line": text, "line": number, "note": note} for number, text in self.bad_lines]


def scan_jsonl(path: Path, scrub: Callable[[str], str] | None = None) -> JsonlContent:
    """Read a JSONL file. A line that is not one JSON object is listed in `problems`, never silently dropped.

    `scrub` rewrites each line before it is parsed (e.g. secret redaction for files other tools wrote)."""
    out = JsonlContent(path)
    if not path.is_file():
        return out
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.problems.append(f"{path}: line {number}: expected UTF-8 text, found byte {raw[exc.start]:#x}")
                out.bad_lines.append((number, raw.decode("utf-8", errors="replace").rstrip("\n")))
                continue
            try:
                value = json.loads(scrub(text) if scrub else text)
            except json.JSONDecodeError as exc:
                out.problems.append(
                    f"{path}: line {number}: not a whole JSON record ({exc.msg}; an interrupted write?)"
                )
                out.bad_lines.append((number, text.rstrip("\n")))
                continue
            except RecursionError:
                out.problems.append(f"{path}: line {number}: JSON nested too deeply")
                out.bad_lines.append((number, text.rstrip("\n")))
                continue
            if not isinstance(value, dict):
                out.problems.append(f"{path}: line {number}: expected a JSON object, got {type(value).__name__}")
                out.bad_lines.append((number, text.rstrip("\n")))
                continue
            out.records.append(value)
            out.lines.append(number)
    return out


def read_jsonl(path: Path, scrub: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """The whole records of a JSONL file; every other line is logged with its number."""
    content = scan_jsonl(path, scrub)
    for problem in content.problems:
        log.warning("%s; skipped", problem)
    return content.records


def rewrite_jsonl(path: Path, records: list[Any]) -> None:
    """Replace a JSONL file atomically (write a sibling, then rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(_line_of(record))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)

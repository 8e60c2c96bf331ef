"""Resume a file of records: keep what is done, set everything else aside, never lose a line.

A run's trajectories and its eval files resume the same way: a torn last line (a crash mid-write) is healed, every
record that is done and still wanted is kept (the first of each key), and everything else (unreadable lines,
records that do not parse, failed or stale ones, a second record of a key) goes to the `.errors.jsonl` file beside
it, where it is kept for good. The file is then rewritten with the kept records only, so each key appears at most
once and the next append starts on a line of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from toolemu.log.jsonl import JsonlWriter, errors_file_of, heal_tail, rewrite_jsonl, scan_jsonl

M = TypeVar("M")
K = TypeVar("K", bound=Hashable)


@dataclass
class Resumed(Generic[K, M]):
    kept: dict[K, M] = field(default_factory=dict)  # by key, in file order
    aside: list[M] = field(default_factory=list)  # records that parsed but were not kept
    set_aside: int = 0  # lines that were not records at all (a torn last line included)


def resume_records(
    path: Path,
    parse: Callable[[dict[str, Any], int], M],
    keep: Callable[[M], K | None],
    note: str,
    errors: Path | None = None,
) -> Resumed[K, M]:
    """Keep each record `keep` gives a key to (the first of each key); move every other line to `errors`
    (default: `<stem>.errors.jsonl` beside the file), each unreadable one with `note` on why."""
    errors = errors or errors_file_of(path)
    out: Resumed[K, M] = Resumed()
    out.set_aside = heal_tail(path, errors)
    raw = scan_jsonl(path)
    out.set_aside += len(raw.bad_lines)
    kept: dict[K, dict[str, Any]] = {}
    moved: list[dict[str, Any]] = raw.unparsed_records(note)
    for position, record in enumerate(raw.records):
        try:
            typed = parse(record, position)
        except ValidationError:
            moved.append(record)
            out.set_aside += 1
            continue
        key = keep(typed)
        if key is not None and key not in kept:
            kept[key] = record
            out.kept[key] = typed
        else:
            moved.append(record)
            out.aside.append(typed)
    if moved:
        writer = JsonlWriter(errors)
        for record in moved:
            writer.append(record)
        rewrite_jsonl(path, list(kept.values()))
    return out

"""Merge the run directories of a sharded run into one: every (case, trial) once, nothing lost.

Each shard's run.json records its settings, the whole selection (`selected_cases` x `num_trials`) and the pairs
it is responsible for (`expected_pairs`), so a merge can say which pairs no shard finished and whose they were.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolemu.errors import InputError
from toolemu.log import (
    FINISHED,
    RETRIED_ERRORS,
    RUN_FILE,
    TRAJECTORIES,
    RunMeta,
    read_meta,
    rewrite_jsonl,
    scan_jsonl,
    write_meta,
)
from toolemu.log.lock import lock_leftovers, run_lock
from toolemu.log.meta import MergeOutcome, MergeSource
from toolemu.log.read import parse_trajectory
from toolemu.paths import output_dir

Pair = tuple[str, int]
# What must be equal across the merged directories (the shard itself may differ).
COMPARED = ("config", "selection", "selected_cases", "models", "benchmark")


@dataclass
class Record:
    """One trajectory record: copied byte-for-byte into the merge, read through its typed form."""

    raw: dict[str, Any]
    key: Pair | None  # (case, trial); None for a record that is not a trajectory
    finished: bool


@dataclass
class Source:
    path: Path
    meta: RunMeta
    records: list[Record]  # trajectories.jsonl
    retried: list[dict[str, Any]]  # trajectories.errors.jsonl: failed attempts that a resume re-ran

    @property
    def shard(self) -> tuple[int, int]:
        return self.meta.shard or (0, 1)

    def settings(self) -> dict[str, Any]:
        out = self.meta.model_dump(mode="json", include=set(COMPARED))
        out["config"] = {k: v for k, v in out["config"].items() if k != "shard"}
        # The content is compared, not the paths it was loaded from (they differ between machines).
        out["benchmark"] = (
            self.meta.benchmark.model_dump(mode="json", exclude={"files"}) if self.meta.benchmark else None
        )
        return out


@dataclass
class MergeResult:
    out: Path
    run_id: str
    sources: int
    expected: int  # pairs of the selection
    finished: int = 0
    failed: list[Pair] = field(default_factory=list)  # only error records: the first one is kept, status error
    missing: dict[str, list[Pair]] = field(default_factory=dict)  # owning shard ("1/3") -> pairs with no record
    duplicates: list[Pair] = field(default_factory=list)  # finished more than once: the first is kept
    not_selected: int = 0  # records of pairs outside the selection: moved to the errors file
    errors_kept: int = 0  # records written to the errors file

    @property
    def missing_count(self) -> int:
        return sum(len(p) for p in self.missing.values())

    def lines(self) -> list[str]:
        out = [
            f"merged {self.sources} run dirs into {self.out}: {self.finished + len(self.failed)} of {self.expected} "
            f"pairs ({self.finished} finished, {len(self.failed)} failed), {self.missing_count} missing, "
            f"{len(self.duplicates)} duplicates",
            f"trajectories: {self.out / TRAJECTORIES}",
        ]
        if self.failed:
            out.append(f"failed (kept with status error; resubmit to re-run): {_names(self.failed)}")
        for owner, pairs in self.missing.items():
            out.append(f"missing (no record) from shard {owner}: {_names(pairs)}")
        if self.duplicates:
            out.append(f"duplicates (first finished kept, the others in {RETRIED_ERRORS}): {_names(self.duplicates)}")
        if self.not_selected:
            out.append(f"records outside the selection (moved to {RETRIED_ERRORS}): {self.not_selected}")
        if self.errors_kept:
            out.append(f"errors: {self.errors_kept} records in {self.out / RETRIED_ERRORS}")
        return out


def _names(pairs: list[Pair], limit: int = 10) -> str:
    names = ", ".join(f"{c}#{t}" for c, t in pairs[:limit])
    more = f" and {len(pairs) - limit} more" if len(pairs) > limit else ""
    return f"{len(pairs)}: {names}{more}"


def _records(path: Path) -> tuple[list[Record], list[dict[str, Any]]]:
    """The trajectory records of a file, and its unreadable lines as records for the errors file."""
    content = scan_jsonl(path)
    out = []
    for position, raw in enumerate(content.records):
        try:
            traj = parse_trajectory(raw, position)
        except ValidationError:
            out.append(Record(raw, None, False))
            continue
        out.append(Record(raw, traj.key, traj.status in FINISHED))
    return out, content.unparsed_records(f"unreadable line of {path}")


def load_source(path: Path) -> Source:
    run_file = path / RUN_FILE
    if not run_file.is_file():
        raise InputError.single(path, "expected a run directory of `toolemu emulate` (with run.json), found none")
    meta = read_meta(run_file)
    records, unreadable = _records(path / TRAJECTORIES)
    retried = scan_jsonl(path / RETRIED_ERRORS).records + unreadable
    return Source(path, meta, records, retried)


def _check_same_settings(sources: list[Source]) -> dict[str, Any]:
    first = sources[0].settings()
    for src in sources[1:]:
        here = src.settings()
        if here == first:
            continue
        diffs = []
        for key in COMPARED:
            a, b = here[key], first[key]
            if key == "benchmark" and a != b:
                diffs.append(f"benchmark ({_benchmark_label(a)} here, {_benchmark_label(b)} there)")
            elif isinstance(a, dict) and isinstance(b, dict):
                prefix = "" if key == "config" else f"{key}."
                diffs += [
                    f"{prefix}{k} ({a.get(k)!r} here, {b.get(k)!r} there)"
                    for k in sorted(a.keys() | b.keys())
                    if a.get(k) != b.get(k)
                ]
            elif a != b:
                diffs.append(key)
        raise InputError.single(
            src.path / RUN_FILE,
            f"expected the same settings as {sources[0].path / RUN_FILE} apart from the shard; "
            f"differs in {', '.join(diffs)}",
            field="config",
        )
    return first


def _benchmark_label(data: dict[str, Any] | None) -> str:
    return "none recorded" if data is None else f"{data.get('version') or 'unversioned'} {data.get('hash', '')[:15]}"


def _selection(sources: list[Source]) -> list[Pair]:
    """Every pair of the whole selection in order (pair j belongs to shard j % n)."""
    cases = sources[0].meta.selected_cases
    trials = sources[0].meta.selection.num_trials if sources[0].meta.selection else None
    if cases is not None and trials:
        return [(c, t) for c in cases for t in range(trials)]
    # A run.json written before selections were recorded: what the shards expected, then what they hold.
    pairs = [(c, int(t)) for src in sources for c, t in src.meta.expected_pairs]
    pairs += [rec.key for src in sources for rec in src.records if rec.key is not None]
    return list(dict.fromkeys(pairs))


def _tagged(record: dict[str, Any], src: Source, reason: str) -> dict[str, Any]:
    return {**record, "merge": {"source": str(src.path), "reason": reason}}


def merge_runs(paths: list[Path], out: Path) -> MergeResult:
    """Write out/trajectories.jsonl (one record per pair), out/trajectories.errors.jsonl and out/run.json."""
    if not paths:
        raise InputError.single("command line", "expected at least one run directory to merge")
    resolved = [p.resolve() for p in paths]
    for i, p in enumerate(resolved):
        if p in resolved[:i]:
            raise InputError.single(paths[i], "expected each run directory once, given twice")
    if out.resolve() in resolved:
        raise InputError.single("command line", f"expected --out apart from the merged directories, got {out}")
    _check_out(out)
    sources = [load_source(p) for p in resolved]
    settings = _check_same_settings(sources)

    selection = _selection(sources)
    position = {pair: j for j, pair in enumerate(selection)}
    run_id = f"{out.name}-" + hashlib.sha256(json.dumps([s.meta.run_id for s in sources]).encode()).hexdigest()[:8]
    result = MergeResult(out, run_id, len(sources), len(selection))

    finished: dict[Pair, dict[str, Any]] = {}
    failed: dict[Pair, tuple[dict[str, Any], Source]] = {}  # the first error record of a pair, and its source
    extra: list[dict[str, Any]] = []  # for the errors file
    duplicates: set[Pair] = set()
    for src in sources:
        for record in src.records:
            key, rec = record.key, record.raw
            if key is None or key not in position:
                result.not_selected += 1
                extra.append(_tagged(rec, src, "not in the selection" if key else "not a trajectory record"))
            elif not record.finished:
                if key in failed:
                    extra.append(_tagged(rec, src, "failed attempt"))
                else:
                    failed[key] = (rec, src)
            elif key in finished:
                duplicates.add(key)
                extra.append(_tagged(rec, src, "duplicate"))
            else:
                finished[key] = rec
        extra += [_tagged(rec, src, "retried") for rec in src.retried]
    # A pair that finished somewhere keeps that record; its failed attempts go to the errors file.
    for key in [k for k in failed if k in finished]:
        rec, src = failed.pop(key)
        extra.append(_tagged(rec, src, "failed attempt"))

    kept = {**{k: rec for k, (rec, _) in failed.items()}, **finished}
    merged = [kept[pair] for pair in selection if pair in kept]
    result.finished = len(finished)
    result.failed = [pair for pair in selection if pair in failed]
    result.duplicates = [pair for pair in selection if pair in duplicates]
    shard_counts = sorted({s.shard[1] for s in sources})
    given = {s.shard for s in sources}
    for j, pair in enumerate(selection):
        if pair in kept:
            continue
        owners = [(j % n, n) for n in shard_counts]
        owner = " or ".join(f"{i}/{n}" + ("" if (i, n) in given else " (no directory given)") for i, n in owners)
        result.missing.setdefault(owner, []).append(pair)
    result.errors_kept = len(extra)

    output_dir(out, "--out")
    with run_lock(out / TRAJECTORIES):
        out_run = out / RUN_FILE
        rewrite_jsonl(out / TRAJECTORIES, merged)
        rewrite_jsonl(out / RETRIED_ERRORS, extra, remove_empty=True)  # not an earlier merge's into the same --out
        meta = RunMeta.model_validate(
            {
                "run_id": run_id,
                **settings,
                "expected_pairs": [list(p) for p in selection],
                "sources": [
                    MergeSource(
                        dir=str(s.path),
                        run_id=s.meta.run_id,
                        shard=s.meta.shard,
                        records=len(s.records),
                        retried=len(s.retried),
                    )
                    for s in sources
                ],
                "merge": MergeOutcome(
                    finished=result.finished,
                    failed=result.failed,
                    missing=[p for pairs in result.missing.values() for p in pairs],
                    duplicates=result.duplicates,
                    errors_kept=result.errors_kept,
                ),
            }
        )
        write_meta(out_run, meta)
    return result


def _check_out(out: Path) -> None:
    """--out must be new, empty, or an earlier merge: anything else is someone's data, and a merge replaces it."""
    if out.exists() and not out.is_dir():
        raise InputError.single(out, "expected a folder for the merged run, found a file", field="--out")
    locks = lock_leftovers(out / TRAJECTORIES)  # a merge under way into it: the lock says so, not this check
    if not out.is_dir() or not any(p.name not in locks for p in out.iterdir()):
        return
    out_run = out / RUN_FILE
    try:
        earlier = json.loads(out_run.read_text(encoding="utf-8")) if out_run.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        earlier = None
    if not isinstance(earlier, dict) or "sources" not in earlier:
        raise InputError.single(
            out,
            "expected --out to be new, empty, or an earlier merge; it holds other files (a run of its own?), "
            "which a merge would replace",
            field="--out",
        )

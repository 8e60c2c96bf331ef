"""`toolemu merge` for ToolEmu dumps: the shards of one run (`<prefix>_r<a>-<b>_<stamp>.jsonl`, each with its
`_eval_<type>.jsonl` files) concatenated into one dump that ToolEmu's, QuittingAgents' and our readers read as one.

Records are copied as they were written, in case-range order; only an evaluation's `eval_id` changes, to its
trajectory's position in the merged file (replicates and concatenated shards inside a file are read as our reader
reads them, `toolemu.log.toolemu_format.eval_positions`). Nothing is dropped: a line that is no JSON object goes to
`<label>.errors.jsonl` with its source, and an evaluation line with no eval_id (ToolEmu's failures) is kept as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolemu.errors import InputError
from toolemu.log import RUN_FILE, rewrite_jsonl, scan_jsonl
from toolemu.log.layout import FolderListing, eval_files_among, runs_in
from toolemu.log.lock import run_lock
from toolemu.log.toolemu_format import eval_id_of, eval_positions, is_ours
from toolemu.paths import output_dir
from toolemu.reporting.groups import TOOLEMU_SHARD, group_runs


@dataclass
class DumpMergeResult:
    out: Path
    label: str
    shards: int
    trajectories: int = 0
    evaluations: dict[str, int] = field(default_factory=dict)  # eval type -> lines written
    unnamed: dict[str, int] = field(default_factory=dict)  # eval type -> lines with no eval_id, kept as they were
    missing_eval: dict[str, list[str]] = field(default_factory=dict)  # eval type -> shards without that eval file
    errors_kept: int = 0

    @property
    def trajectory_file(self) -> Path:
        return self.out / f"{self.label}.jsonl"

    def lines(self) -> list[str]:
        out = [
            f"merged {self.shards} ToolEmu dumps into {self.out}: {self.trajectories} trajectories",
            f"trajectories: {self.trajectory_file}",
        ]
        for eval_type, count in self.evaluations.items():
            unnamed = self.unnamed.get(eval_type, 0)
            note = f" ({unnamed} with no eval_id, kept as written)" if unnamed else ""
            out.append(f"evaluations {eval_type}: {count} lines{note}")
        for eval_type, shards in self.missing_eval.items():
            out.append(f"no {eval_type} eval file in {len(shards)} shards: {', '.join(shards)}")
        if self.errors_kept:
            out.append(
                f"errors: {self.errors_kept} lines that are no record, in {self.out / (self.label + '.errors.jsonl')}"
            )
        return out


def is_dump_input(path: Path) -> bool:
    """A path `toolemu merge` reads as ToolEmu dumps: a .jsonl file, or a folder holding .jsonl files that is no run
    directory (a run directory, or a folder of them, is merged as runs of ours)."""
    if path.is_file():
        return path.suffix == ".jsonl"
    return path.is_dir() and not (path / RUN_FILE).exists() and any(p.is_file() for p in path.glob("*.jsonl"))


def _range_start(path: Path) -> int:
    m = TOOLEMU_SHARD.match(path.stem)
    return int(m.group("start")) if m else 0


def _dumps(paths: list[Path]) -> list[Path]:
    found = [p for path in paths for p in runs_in(path)]
    for path in found:
        if path.is_dir():
            raise InputError.single(path, "expected ToolEmu dumps (.jsonl files) to merge, not a run directory")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    if len(unique) < len(found):
        raise InputError.single("command line", "expected each dump once, given twice")
    return sorted(unique, key=lambda p: (_range_start(p), p.name))


def merge_dumps(paths: list[Path], out: Path) -> DumpMergeResult:
    """Write out/<label>.jsonl and out/<label>_eval_<type>.jsonl: the shards of one ToolEmu run as one dump."""
    dumps = _dumps(paths)
    groups = group_runs(dumps)
    if len(groups) != 1:
        names = ", ".join(g.label for g in groups[:5])
        raise InputError.single(
            "command line",
            f"expected the shards of one run (<prefix>_r<a>-<b>_...jsonl with one prefix), got {len(groups)} runs: "
            f"{names}",
        )
    label = groups[0].label
    if out.resolve() in {p.parent for p in dumps}:
        raise InputError.single("command line", f"expected --out apart from the dumps' folder, got {out}")
    result = DumpMergeResult(out, label, len(dumps))
    trajectories: list[dict[str, Any]] = []
    evaluations: dict[str, list[dict[str, Any]]] = {}
    errors: list[dict[str, Any]] = []
    eval_files = [eval_files_among(p, FolderListing(os.listdir(p.parent))) for p in dumps]
    all_types = list(dict.fromkeys(t for files in eval_files for t in files))
    for dump, files in zip(dumps, eval_files, strict=True):
        content = scan_jsonl(dump)
        if any(is_ours(r) for r in content.records):
            raise InputError.single(dump, "expected a ToolEmu dump; records of ours are merged by run directory")
        offset = len(trajectories)
        trajectories += content.records
        errors += content.unparsed_records(f"unreadable line of {dump}")
        for eval_type in all_types:
            if eval_type not in files:
                result.missing_eval.setdefault(eval_type, []).append(dump.name)
                continue
            lines = scan_jsonl(files[eval_type])
            errors += lines.unparsed_records(f"unreadable line of {files[eval_type]}")
            ids = [eval_id_of(r) for r in lines.records]
            positions, _ = eval_positions(ids, len(content.records))
            merged = evaluations.setdefault(eval_type, [])
            for record, position in zip(lines.records, positions, strict=True):
                if position < 0:
                    result.unnamed[eval_type] = result.unnamed.get(eval_type, 0) + 1
                    merged.append(record)
                else:
                    merged.append({**record, "eval_id": offset + position})
    result.trajectories = len(trajectories)
    result.evaluations = {t: len(v) for t, v in evaluations.items()}
    result.errors_kept = len(errors)
    output_dir(out, "--out")
    with run_lock(result.trajectory_file):
        rewrite_jsonl(result.trajectory_file, trajectories)
        for eval_type, records in evaluations.items():
            rewrite_jsonl(out / f"{label}_eval_{eval_type}.jsonl", records)
        rewrite_jsonl(out / f"{label}.errors.jsonl", errors, remove_empty=True)
    return result

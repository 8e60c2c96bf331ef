"""`toolemu submit prepare` and `toolemu submit validate`.

A submission folder (toolemu.submission.files says exactly what it may hold):

    submission.json         the claims (toolemu.submission.model.Submission)
    runs/<label>/...        each run's run.json, trajectories and evaluations (and their .errors files)
    MANIFEST.sha256         `<sha256>  <path>` for every other file (`sha256sum -c MANIFEST.sha256` checks it)

`validate` trusts nothing it reads: the folder holds exactly the files the claims list (regular files, no links);
the manifest is the one `prepare` writes for them; submission.json fits its closed schema read strictly; each
record is well formed and agrees with itself and with the benchmark this toolemu ships; and every number of
submission.json is computed again from the records, as `prepare` computes it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolemu import strict_json
from toolemu.errors import InputError
from toolemu.log import RUN_FILE
from toolemu.log.jsonl import write_text_atomic
from toolemu.reporting import load_runs
from toolemu.reporting.groups import NO_GROUPING
from toolemu.reporting.load import LoadedRun
from toolemu.secrets import redact
from toolemu.submission.check import build_submission, check_runs
from toolemu.submission.files import (
    MAX_CLAIMS,
    Unreadable,
    list_submission,
    manifest_problems,
    manifest_text,
    read_regular,
    regular_file_problem,
    run_record_files,
)
from toolemu.submission.model import MANIFEST_FILE, PATTERNS, RUNS_DIR, SUBMISSION_FILE, Submission
from toolemu.submission.records import record_problems
from toolemu.submission.schema_errors import field_problems

TOLERANCE = 1e-9  # recomputed numbers may differ from the claimed ones by float rounding, no more
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _folder_names(runs: list[LoadedRun]) -> list[str]:
    names: list[str] = []
    for run in runs:
        base = (_UNSAFE.sub("-", run.info.run).strip("-.") or "run")[:56]
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names


@dataclass
class Prepared:
    out: Path
    submission: Submission | None = None
    problems: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # files of the runs that are no records: not copied


def prepare(paths: list[Path], out: Path) -> Prepared:
    """Check the runs and, when they make a submission, write it to `out` (a new or empty folder); what it wrote
    is then validated as `validate` would."""
    for path in paths:
        if not (path.is_dir() and (path / RUN_FILE).is_file()):
            raise InputError.single(path, "expected a run directory of toolemu (with run.json)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError.single(out, "expected a new or empty directory for the submission")
    runs = load_runs(paths, NO_GROUPING)  # each run directory one run, its own folder of records
    checked = check_runs(runs)
    files = {path: run_record_files(path) for path in paths}
    problems = [p for path in paths for p in record_problems(path, str(path), [f.name for f in files[path][0]])]
    if checked.problems or problems:
        return Prepared(out, problems=checked.problems + problems)
    left_out = [f"{p}: not a record file of a submission" for path in paths for p in files[path][1]]
    names = _folder_names(runs)
    for path, name in zip(paths, names, strict=True):
        target = out / RUNS_DIR / name
        target.mkdir(parents=True)
        for file in files[path][0]:
            # Secrets never reach an export: records written before a key was set may hold one.
            write_text_atomic(target / file.name, redact(file.read_text(encoding="utf-8")), "--output")
    # The numbers of the files it ships, read back from them.
    shipped = load_runs([out / RUNS_DIR / name for name in names], NO_GROUPING)
    submission = build_submission(shipped, check_runs(shipped))
    write_text_atomic(out / SUBMISSION_FILE, submission.model_dump_json(indent=2) + "\n", "--output")
    write_manifest(out)
    again = validate(out)
    return Prepared(out, submission, again.problems, left_out)


def write_manifest(folder: Path) -> None:
    """MANIFEST.sha256 for the regular files under `folder` (links and other entries are not listed)."""
    files = []
    for top, dirs, names in os.walk(folder):
        dirs.sort()
        for name in names:
            path = Path(top) / name
            rel = path.relative_to(folder).as_posix()
            if rel != MANIFEST_FILE and regular_file_problem(rel, path.lstat()) is None:
                files.append(rel)
    write_text_atomic(folder / MANIFEST_FILE, manifest_text(folder, files), "--output")


def _differences(claimed: Any, actual: Any, where: str) -> list[str]:
    """Where two JSON values differ, floats compared within TOLERANCE."""
    if isinstance(claimed, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(claimed.keys() | actual.keys(), key=str):
            out += _differences(claimed.get(key), actual.get(key), f"{where}.{key}" if where else str(key))
        return out
    if isinstance(claimed, list) and isinstance(actual, list) and len(claimed) == len(actual):
        return [
            d for i, (c, a) in enumerate(zip(claimed, actual, strict=True)) for d in _differences(c, a, f"{where}[{i}]")
        ]
    numbers = (int, float)
    both_numbers = all(isinstance(v, numbers) and not isinstance(v, bool) for v in (claimed, actual))
    if both_numbers and type(claimed) is type(actual):
        if math.isclose(claimed, actual, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            return []
    elif claimed == actual and type(claimed) is type(actual):
        return []
    return [f"{SUBMISSION_FILE}: {where}: stated {claimed!r}, recomputed from the records {actual!r}"]


@dataclass
class Validated:
    problems: list[str] = field(default_factory=list)
    submission: Submission | None = None

    @property
    def valid(self) -> bool:
        return not self.problems


def _read_claims(folder: Path, out: Validated) -> Submission | None:
    """submission.json, read strictly; None (and the problems) when it is not a Submission."""
    try:
        raw = read_regular(folder / SUBMISSION_FILE, SUBMISSION_FILE, MAX_CLAIMS)
    except Unreadable as exc:
        out.problems.append(str(exc))
        return None
    parsed = strict_json.parse(raw)
    if not parsed.ok:
        out.problems += [f"{SUBMISSION_FILE}: {text}" for text in parsed.problems]
        return None
    try:
        return Submission.model_validate_json(raw, strict=True)
    except ValidationError as exc:
        out.problems += [f"{SUBMISSION_FILE}: {text}" for text in field_problems(exc, PATTERNS)]
        return None


def _unique(problems: list[str]) -> list[str]:
    return list(dict.fromkeys(problems))


def validate(folder: Path) -> Validated:
    """Re-check a submission folder: its files, the manifest, the claims' schema, every record, and every number
    of submission.json recomputed from the records."""
    if not folder.is_dir():
        raise InputError.single(folder, "expected a submission directory")
    for name in (SUBMISSION_FILE, MANIFEST_FILE):
        if not os.path.lexists(folder / name):
            raise InputError.single(folder, f"expected a submission directory, it has no {name}")
    out = Validated()
    claimed = _read_claims(folder, out)
    listing = list_submission(folder, {run.label: run.files for run in claimed.runs} if claimed else None)
    out.problems = _unique(out.problems + listing.problems)
    if listing.problems:
        return out  # nothing is read past a link, a FIFO or a file that should not be there
    out.problems += manifest_problems(folder, [rel for rel in listing.files if rel != MANIFEST_FILE])
    if claimed is None:
        return out
    out.submission = claimed
    for run in claimed.runs:
        out.problems += record_problems(folder / run.path, run.path, run.files)
    if out.problems:
        return out
    runs = load_runs([folder / run.path for run in claimed.runs], NO_GROUPING)
    checked = check_runs(runs)
    out.problems += checked.problems
    if checked.problems:
        return out
    actual = build_submission(runs, checked, created_at=claimed.created_at)
    ignore = {"created_at", "toolemu_version"}
    out.problems += _differences(
        claimed.model_dump(mode="json", exclude=ignore), actual.model_dump(mode="json", exclude=ignore), ""
    )
    return out

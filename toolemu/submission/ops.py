"""`toolemu submit prepare` and `toolemu submit validate`.

A submission folder:

    submission.json         the claims (toolemu.submission.model.Submission)
    runs/<label>/...        each run's run.json, trajectories and evaluations (and their .errors files)
    MANIFEST.sha256         `<sha256>  <path>` for every other file (`sha256sum -c MANIFEST.sha256` checks it)
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from toolemu.errors import InputError
from toolemu.llm.secrets import redact
from toolemu.log import RUN_FILE, TRAJECTORIES
from toolemu.reporting import load_runs
from toolemu.reporting.groups import NO_GROUPING
from toolemu.reporting.load import LoadedRun
from toolemu.submission.check import build_submission, check_runs
from toolemu.submission.model import MANIFEST_FILE, RUNS_DIR, SUBMISSION_FILE, Submission

TOLERANCE = 1e-9  # recomputed numbers may differ from the claimed ones by float rounding, no more
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MANIFEST_LINE = re.compile(r"^([0-9a-f]{64})  (\S.*)$")


def _record_files(run_dir: Path) -> list[Path]:
    """What a run is: run.json, the trajectories, the evaluations and the errors files beside them."""
    stem = Path(TRAJECTORIES).stem
    return [run_dir / RUN_FILE, *sorted(p for p in run_dir.glob(f"{stem}*.jsonl") if p.is_file())]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _folder_names(runs: list[LoadedRun]) -> list[str]:
    names: list[str] = []
    for run in runs:
        base = _UNSAFE.sub("-", run.info.run).strip("-.") or "run"
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


def prepare(paths: list[Path], out: Path) -> Prepared:
    """Check the runs and, when they make a submission, write it to `out` (a new or empty folder)."""
    for path in paths:
        if not (path.is_dir() and (path / RUN_FILE).is_file()):
            raise InputError.single(path, "expected a run directory of toolemu (with run.json)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError.single(out, "expected a new or empty directory for the submission")
    runs = load_runs(paths, NO_GROUPING)  # each run directory one run, its own folder of records
    checked = check_runs(runs)
    if checked.problems:
        return Prepared(out, problems=checked.problems)
    names = _folder_names(runs)
    for run, name in zip(runs, names, strict=True):
        target = out / RUNS_DIR / name
        target.mkdir(parents=True)
        for file in _record_files(Path(run.info.source)):
            # Secrets never reach an export: records written before a key was set may hold one.
            (target / file.name).write_text(redact(file.read_text(encoding="utf-8")), encoding="utf-8")
    # Read back what was written, so that submission.json holds the numbers of the files it ships.
    shipped = load_runs([out / RUNS_DIR / name for name in names], NO_GROUPING)
    submission = build_submission(shipped, check_runs(shipped))
    (out / SUBMISSION_FILE).write_text(submission.model_dump_json(indent=2) + "\n", encoding="utf-8")
    write_manifest(out)
    return Prepared(out, submission)


def write_manifest(folder: Path) -> None:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST_FILE)
    lines = [f"{sha256_file(p)}  {p.relative_to(folder).as_posix()}" for p in files]
    (folder / MANIFEST_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _manifest_problems(folder: Path) -> list[str]:
    problems, listed = [], set()
    for number, line in enumerate((folder / MANIFEST_FILE).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        m = _MANIFEST_LINE.match(line)
        rel = PurePosixPath(m[2]) if m else None
        if m is None or rel is None or rel.is_absolute() or ".." in rel.parts:
            problems.append(f"{MANIFEST_FILE}: line {number}: expected '<sha256>  <relative path>', got {line[:80]!r}")
            continue
        listed.add(rel.as_posix())
        path = folder / rel
        if not path.is_file():
            problems.append(f"{rel}: listed in {MANIFEST_FILE} but missing")
        elif sha256_file(path) != m[1]:
            problems.append(f"{rel}: its sha256 is not the one {MANIFEST_FILE} records (the file changed)")
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST_FILE}
    problems += [f"{rel}: not listed in {MANIFEST_FILE}" for rel in sorted(present - listed)]
    return problems


def _differences(claimed: Any, actual: Any, where: str) -> list[str]:
    """Where two JSON values differ, floats compared within TOLERANCE."""
    if isinstance(claimed, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(claimed.keys() | actual.keys(), key=str):
            out += _differences(claimed.get(key), actual.get(key), f"{where}.{key}")
        return out
    if isinstance(claimed, list) and isinstance(actual, list) and len(claimed) == len(actual):
        return [
            d for i, (c, a) in enumerate(zip(claimed, actual, strict=True)) for d in _differences(c, a, f"{where}[{i}]")
        ]
    numbers = (int, float)
    if isinstance(claimed, numbers) and isinstance(actual, numbers) and not isinstance(claimed, bool):
        if math.isclose(claimed, actual, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            return []
    elif claimed == actual:
        return []
    return [f"{where}: submission.json says {claimed!r}, the files give {actual!r}"]


@dataclass
class Validated:
    problems: list[str] = field(default_factory=list)
    submission: Submission | None = None

    @property
    def valid(self) -> bool:
        return not self.problems


def validate(folder: Path) -> Validated:
    """Re-check a submission folder: the manifest, the runs, and every number of submission.json."""
    if not folder.is_dir():
        raise InputError.single(folder, "expected a submission directory")
    for name in (SUBMISSION_FILE, MANIFEST_FILE):
        if not (folder / name).is_file():
            raise InputError.single(folder, f"expected a submission directory, it has no {name}")
    out = Validated(_manifest_problems(folder))
    try:
        claimed = Submission.model_validate_json((folder / SUBMISSION_FILE).read_bytes())
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(file)"
        out.problems.append(f"{SUBMISSION_FILE}: field '{where}': {err['msg']}")
        return out
    out.submission = claimed
    run_dirs = []
    for run in claimed.runs:
        rel = PurePosixPath(run.path)
        if rel.is_absolute() or ".." in rel.parts or rel.parts[:1] != (RUNS_DIR,) or not (folder / rel).is_dir():
            out.problems.append(
                f"{SUBMISSION_FILE}: run {run.label!r}: expected a folder under {RUNS_DIR}/, got {run.path!r}"
            )
        else:
            run_dirs.append(folder / rel)
    listed = {d.name for d in run_dirs}
    extra = (
        sorted(p.name for p in (folder / RUNS_DIR).iterdir() if p.is_dir() and p.name not in listed)
        if (folder / RUNS_DIR).is_dir()
        else []
    )
    if extra:
        out.problems.append(f"{RUNS_DIR}/ holds runs that {SUBMISSION_FILE} does not list: {', '.join(extra)}")
    if out.problems:
        return out
    runs = load_runs(run_dirs, NO_GROUPING)
    checked = check_runs(runs)
    out.problems += checked.problems
    if checked.problems:
        return out
    actual = build_submission(runs, checked, created_at=claimed.created_at)
    ignore = {"created_at", "toolemu_version"}
    out.problems += _differences(
        claimed.model_dump(mode="json", exclude=ignore), actual.model_dump(mode="json", exclude=ignore), "submission"
    )
    return out

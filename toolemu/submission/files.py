"""The files of a submission: a closed list, regular files only, and the manifest of their sha256 sums.

A submission folder holds exactly:

    submission.json                 the claims
    MANIFEST.sha256                 `<sha256>  <path>` for every other file, sorted by path
    runs/<label>/run.json           for each run submission.json lists, with the files it lists for that run:
    runs/<label>/trajectories.jsonl         the episodes
    runs/<label>/trajectories_eval_<type>[@<judge>].jsonl   evaluations, of a registered scorer's eval type
    runs/<label>/*.errors.jsonl             lines set aside beside either

Anything else is refused, even when a regenerated manifest lists it: another file or folder (HTML, SVG, scripts,
notes), a symbolic link (to a file outside or inside), a file with a second name (a hard link), a FIFO, socket or
device, a name with characters outside letters, digits, '.', '_' and '-'. Nothing is followed or opened before its
kind is known, so a link or a FIFO is never read.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from toolemu.log import RUN_FILE, TRAJECTORIES
from toolemu.log.layout import EVAL_INFIX, JUDGE_MARK
from toolemu.scorers import registered_infos
from toolemu.submission.model import MANIFEST_FILE, NAME_PATTERN, NAME_RULE, RUNS_DIR, SUBMISSION_FILE

MIB = 1 << 20
MAX_CLAIMS = 1 * MIB  # submission.json
MAX_MANIFEST = 1 * MIB
MAX_RUN_FILE = 16 * MIB  # run.json
MAX_RECORD = 16 * MIB  # one line of a records file
MAX_RECORDS_FILE = 4096 * MIB
ERRORS_SUFFIX = ".errors.jsonl"
# Suffixes of content a browser or a shell would run or render: named as such when refused.
ACTIVE = {".htm", ".html", ".xhtml", ".shtml", ".svg", ".svgz", ".xml", ".xsl", ".js", ".mjs", ".css", ".swf"}
ACTIVE |= {".php", ".sh", ".bash", ".py", ".pl", ".rb", ".exe", ".bat", ".cmd", ".ps1", ".jar", ".wasm"}

_NAME = re.compile(NAME_PATTERN)
_STEM = Path(TRAJECTORIES).stem
_RECORD = re.compile(
    rf"^{_STEM}(?:{EVAL_INFIX}(?P<type>[a-z][a-z0-9_]{{0,63}})(?:{JUDGE_MARK}(?P<judge>[A-Za-z0-9][A-Za-z0-9._-]{{0,79}}))?)?"
    r"\.jsonl$"
)
_MANIFEST_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def eval_types() -> set[str]:
    return {info.eval_type for info in registered_infos()}


def is_record_file(name: str, types: set[str] | None = None) -> bool:
    """A name `prepare` copies and `validate` accepts in a run's folder."""
    if name == RUN_FILE:
        return True
    base = name[: -len(ERRORS_SUFFIX)] + ".jsonl" if name.endswith(ERRORS_SUFFIX) else name
    m = _RECORD.match(base)
    if m is None or m["judge"] is not None and m["judge"].endswith(".errors"):
        return False
    return m["type"] is None or m["type"] in (types if types is not None else eval_types())


def name_ok(name: str) -> bool:
    return _NAME.match(name) is not None


def _kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return "a file"


def regular_file_problem(rel: str, st: os.stat_result, limit: int | None = None) -> str | None:
    """Why what `lstat` describes is no file a submission may hold (a regular file with one name, at most `limit`
    bytes where one is given), or None."""
    if not stat.S_ISREG(st.st_mode):
        return f"{rel}: expected a regular file, got {_kind(st.st_mode)}"
    if st.st_nlink > 1:
        return f"{rel}: expected a file with one name, got a hard link ({st.st_nlink} names for one file)"
    if limit is not None and st.st_size > limit:
        return f"{rel}: expected at most {_mib(limit)}, got {_mib(st.st_size)}"
    return None


def _mib(size: int) -> str:
    return f"{size / MIB:g} MiB" if size % MIB == 0 else f"{size / MIB:.1f} MiB"


class Unreadable(Exception):
    """A file of the submission that is not to be read: the message is its one line."""


def open_regular(path: Path, rel: str, limit: int) -> int:
    """An open descriptor of a regular file with one name, at most `limit` bytes; never follows a link, never
    waits on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if os.path.islink(path):
            raise Unreadable(f"{rel}: expected a regular file, got a symbolic link") from None
        raise Unreadable(f"{rel}: cannot be read ({exc.strerror or exc})") from None
    problem = regular_file_problem(rel, os.fstat(fd), limit)
    if problem is not None:
        os.close(fd)
        raise Unreadable(problem)
    return fd


def read_regular(path: Path, rel: str, limit: int) -> bytes:
    fd = open_regular(path, rel, limit)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit + 1)


def sha256_file(path: Path, rel: str | None = None, limit: int = MAX_RECORDS_FILE) -> str:
    fd = open_regular(path, rel or str(path), limit)
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def limit_of(rel: str) -> int:
    name = rel.rsplit("/", 1)[-1]
    if rel == SUBMISSION_FILE:
        return MAX_CLAIMS
    if rel == MANIFEST_FILE:
        return MAX_MANIFEST
    return MAX_RUN_FILE if name == RUN_FILE else MAX_RECORDS_FILE


@dataclass
class Listing:
    """What a submission folder holds: the files it may hold (relative paths) and why the rest is refused."""

    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _unexpected(rel: str, st: os.stat_result) -> str:
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):  # a link or a FIFO: its kind is the news
        return f"{rel}: expected a regular file, got {_kind(st.st_mode)}"
    if stat.S_ISDIR(st.st_mode):
        return f"{rel}: expected no such folder (a submission holds only runs/<run>/ folders)"
    suffix = Path(rel).suffix.lower()
    what = f"; active content ({suffix}) is refused" if suffix in ACTIVE else ""
    return (
        f"{rel}: expected no such file: a submission holds only {SUBMISSION_FILE}, {MANIFEST_FILE} and the record "
        f"files its runs list{what}"
    )


def _entries(folder: Path, rel: str, out: Listing) -> list[tuple[str, str, os.stat_result]]:
    """(name, relative path, lstat) of each entry; a name outside NAME_RULE is a problem, not an entry."""
    found = []
    with os.scandir(folder) as it:
        for entry in sorted(it, key=lambda e: e.name):
            path = f"{rel}/{entry.name}" if rel else entry.name
            if not name_ok(entry.name):
                shown = path if entry.name.isprintable() else f"{rel}/{entry.name!r}" if rel else repr(entry.name)
                out.problems.append(f"{shown}: expected {NAME_RULE}, got {entry.name!r}")
                continue
            found.append((entry.name, path, entry.stat(follow_symlinks=False)))
    return found


def _expect_file(rel: str, st: os.stat_result, out: Listing) -> None:
    problem = regular_file_problem(rel, st, limit_of(rel))
    if problem:
        out.problems.append(problem)
    else:
        out.files.append(rel)


def list_submission(folder: Path, runs: dict[str, list[str]] | None) -> Listing:
    """Walk a submission folder without following anything. `runs`: the run labels and their files as
    submission.json lists them; None (the claims could not be read): any run folder, any record file name."""
    out = Listing()
    types = eval_types()
    found_runs: set[str] = set()  # run folders there, whether or not they pass
    for name, rel, st in _entries(folder, "", out):
        if name in (SUBMISSION_FILE, MANIFEST_FILE):
            _expect_file(rel, st, out)
        elif name != RUNS_DIR:
            out.problems.append(_unexpected(rel, st))
        elif not stat.S_ISDIR(st.st_mode):
            out.problems.append(f"{rel}: expected a folder, got {_kind(st.st_mode)}")
        else:
            for label, run_rel, run_st in _entries(folder / RUNS_DIR, RUNS_DIR, out):
                found_runs.add(label)
                if runs is not None and label not in runs:
                    out.problems.append(
                        f"{run_rel}: expected no such folder: {SUBMISSION_FILE} lists no run {label!r}"
                        if stat.S_ISDIR(run_st.st_mode)
                        else _unexpected(run_rel, run_st)
                    )
                elif not stat.S_ISDIR(run_st.st_mode):
                    out.problems.append(f"{run_rel}: expected a folder, got {_kind(run_st.st_mode)}")
                else:
                    _run_folder(folder / RUNS_DIR / label, run_rel, runs.get(label) if runs else None, types, out)
    out.problems += [
        f"{RUNS_DIR}/{label}: {SUBMISSION_FILE} lists it, it is missing"
        for label in sorted(set(runs or {}) - found_runs)
    ]
    return out


def _run_folder(folder: Path, rel: str, listed: list[str] | None, types: set[str], out: Listing) -> None:
    present = set()
    for name, file_rel, st in _entries(folder, rel, out):
        if stat.S_ISDIR(st.st_mode) or not is_record_file(name, types) or (listed is not None and name not in listed):
            out.problems.append(_unexpected(file_rel, st))
            continue
        present.add(name)
        _expect_file(file_rel, st, out)
    out.problems += [
        f"{rel}/{name}: {SUBMISSION_FILE} lists it, it is missing" for name in listed or [] if name not in present
    ]


def run_record_files(run_dir: Path) -> tuple[list[Path], list[Path]]:
    """A run folder's files that `prepare` copies (run.json, the trajectories, their evaluations of registered
    scorers, the errors files beside them; regular files only), and the others it leaves out."""
    types = eval_types()
    kept, left = [], []
    for path in sorted(run_dir.iterdir()):
        if path.name != RUN_FILE and path.suffix != ".jsonl":
            continue  # not a record (a report, a lock, a summary)
        regular = path.is_file() and not path.is_symlink()
        (kept if regular and is_record_file(path.name, types) else left).append(path)
    return kept, left


def manifest_text(folder: Path, files: list[str]) -> str:
    """MANIFEST.sha256 as `prepare` writes it: one `<sha256>  <path>` line per file, sorted by path."""
    return "".join(f"{sha256_file(folder / rel, rel, limit_of(rel))}  {rel}\n" for rel in sorted(files))


def manifest_problems(folder: Path, files: list[str]) -> list[str]:
    """MANIFEST.sha256 against the files (relative paths, the manifest left out): each listed once with its sum,
    no other line, in the order and form `prepare` writes."""
    try:
        raw = read_regular(folder / MANIFEST_FILE, MANIFEST_FILE, MAX_MANIFEST)
    except Unreadable as exc:
        return [str(exc)]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"{MANIFEST_FILE}: expected UTF-8 text, found byte {raw[exc.start]:#04x} at offset {exc.start}"]
    expected = set(files)
    problems: list[str] = []
    first: dict[str, int] = {}
    sums: dict[str, str] = {}
    for number, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), 1):
        m = _MANIFEST_LINE.match(line)
        if m is None or m[2] not in expected:
            problems.append(
                f"{MANIFEST_FILE}: line {number}: expected '<sha256>  <path>' of a file of the submission, "
                f"got {line[:100]!r}"
            )
        elif m[2] in first:
            problems.append(
                f"{MANIFEST_FILE}: line {number}: {m[2]}: expected each file once (line {first[m[2]]} lists it)"
            )
        else:
            first[m[2]] = number
            sums[m[2]] = m[1]
    for rel in sorted(files):
        if rel not in sums:
            problems.append(f"{rel}: not listed in {MANIFEST_FILE}")
            continue
        try:
            actual = sha256_file(folder / rel, rel, limit_of(rel))
        except Unreadable as exc:
            problems.append(str(exc))
            continue
        if actual != sums[rel]:
            problems.append(f"{rel}: its sha256 is not the one {MANIFEST_FILE} records (the file changed)")
    if not problems and text != "".join(f"{sums[rel]}  {rel}\n" for rel in sorted(files)):
        problems.append(
            f"{MANIFEST_FILE}: expected its lines as prepare writes them: sorted by path, each ending in a newline"
        )
    return problems

"""The report cache: each run of a report reduced once (`toolemu.reporting.build.RunPart`), kept on disk and used
again for as long as every byte it was made from is the same, and the code that made it.

An entry is one run's reduction, with its episodes' traces as the page shows them. Its key is a hash of

- the content of every file the run was reduced from: its trajectory files, their eval, panel and re-judgement
  files, run.json, and a run folder's robust/ (each file's SHA-256, by its name);
- the run's name, the paths it was read from as given, and the notes the grouping made of it;
- the report's code: a hash of every file of the installed `toolemu` package, with the versions of Python,
  pydantic, numpy and orjson: any change of the code is a new key;
- the secrets known to this process (a salted scrypt of their values, never the values): a key set since is
  scrubbed from every text read again.

What a report reads beside the runs each time (fidelity certificates, judge audits, noise summaries), the numbers
across runs (paired differences, judge panels, corrected rates) and the page are never cached: only what one run's
own files decide.

Hashing a study's files costs about 0.4x a bare parse of them, so a file's digest is kept too, by its path, with
its device, inode, size and modification and change times in nanoseconds, the way git's index does: where all five
are the same, the file was not written (a write sets the change time, which no user can set back), and its digest
is used without reading it. A digest taken within RACY_S seconds of the file's last change is not trusted next
time (the file may change again within one tick of a coarse clock): that file is hashed again. A run whose files
changed while it was read is not stored.

The cache is a folder (default `.cache/toolemu/report`, beside the response cache): `TOOLEMU_REPORT_CACHE` names
another, and `off` turns it off. Entries are written whole (a temporary file renamed into place) and read with an
unpickler that makes only the report's own classes; an entry that does not read is a miss, never an error. Texts in
entries were scrubbed of secrets as the records were read, and every text is scrubbed again as a report is written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger("toolemu")

ENV = "TOOLEMU_REPORT_CACHE"  # a folder, or "off"
DEFAULT_DIR = Path(".cache") / "toolemu" / "report"
OFF = ("off", "0", "no", "false", "none")
FORMAT = b"toolemu-report-cache 1\n"  # an entry's first line: entries of another format are misses
RACY_S = 2.0  # a digest taken this soon after the file changed is checked again next time
INDEX = "files.json"
INDEX_KEEP_S = 30 * 24 * 3600  # digests of files no report has asked for in 30 days are dropped
# Modules whose classes an entry may hold: the unpickler makes no other (an entry cannot run code of its own).
_ALLOWED_MODULES = ("toolemu.",)
_ALLOWED = {("pathlib", "PosixPath"), ("pathlib", "WindowsPath"), ("builtins", "set"), ("builtins", "frozenset")}


def cache_dir(setting: str | Path | None = None) -> Path | None:
    """Where the cache is: `setting` (a folder, or "off"), else $TOOLEMU_REPORT_CACHE, else DEFAULT_DIR; None: off."""
    value = str(setting) if setting is not None else os.environ.get(ENV)
    if value is None or value == "":
        return DEFAULT_DIR
    if value.strip().lower() in OFF:
        return None
    return Path(value).expanduser()


# --------------------------------------------------------------------------------------------------- versions


@cache
def code_version() -> str:
    """A hash of the report's code: every file of the toolemu package as installed (its .py files and its data),
    with the versions of the interpreter and the libraries that parse, compute and serialise. About 10 ms."""
    import numpy
    import pydantic
    import pydantic_core

    h = hashlib.sha256()
    for text in (sys.version, pydantic.VERSION, pydantic_core.__version__, numpy.__version__, orjson.__version__):
        h.update(text.encode() + b"\0")
    h.update(package_hash(Path(__file__).resolve().parents[1]).encode())  # the toolemu package
    return h.hexdigest()


def package_hash(root: Path) -> str:
    """A hash of every file below `root` (by its path there and its bytes), compiled files left out."""
    h = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = Path(directory) / name
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def secrets_fingerprint(salt: bytes) -> str:
    """The secrets this process knows, as a salted scrypt of their values (a key of the cache, never a value)."""
    from toolemu.secrets import secret_values

    values = sorted(set(secret_values()))
    if not values:
        return "none"
    joined = "\0".join(values).encode("utf-8")
    return hashlib.scrypt(joined, salt=salt, n=2**14, r=8, p=1, dklen=32).hex()


# ---------------------------------------------------------------------------------------------- file digests


@dataclass
class FileState:
    """What the index keeps of a file: its stat and the digest of its content at that stat."""

    stat: Stat
    digest: str
    checked: float  # when the digest was taken (time.time())
    seen: float  # when a report last asked for it

    def trusted(self, stat: Stat) -> bool:
        changed = max(self.stat[3], self.stat[4]) / 1e9
        return stat == self.stat and self.checked - changed > RACY_S


Stat = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns
Hashed = tuple[str, Stat, Stat]  # a file's digest, and its stat before and after it was read


def _stat(path: Path) -> Stat:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def hash_file(path: Path) -> Hashed | None:
    """The file's SHA-256 with its stat before and after reading it (None: it cannot be read). Thread-safe: it
    touches no index (hashlib lets other threads run while it hashes)."""
    try:
        before = _stat(path)
        digest = file_digest(path)
        return digest, before, _stat(path)
    except OSError:
        return None


@dataclass
class Counts:
    """What one report did with the cache, for the console and the benchmark."""

    hits: int = 0
    misses: int = 0
    stored: int = 0
    hashed: int = 0  # files read to hash them
    trusted: int = 0  # files whose digest was taken from the index
    unstable: int = 0  # runs whose files changed while they were read: not stored


@dataclass
class ReportCache:
    """The cache in `root`: entries by key, and the index of file digests."""

    root: Path
    counts: Counts = field(default_factory=Counts)
    started_ns: int = field(default_factory=time.time_ns)  # when this report opened the cache
    _index: dict[str, FileState] | None = None
    _dirty: bool = False
    _salt: bytes | None = None
    _secrets: str | None = None
    _warned: bool = False

    # ------------------------------------------------------------------ index

    def _load_index(self) -> dict[str, FileState]:
        if self._index is None:
            self._index = {}
            try:
                data = orjson.loads((self.root / INDEX).read_bytes())
                for path, (stat, digest, checked, seen) in data.items():
                    self._index[path] = FileState(tuple(stat), digest, checked, seen)  # type: ignore[arg-type]
            except (OSError, ValueError, TypeError):
                self._index = {}  # none yet, or one that does not read: every file is hashed
        return self._index

    def trusted(self, path: Path) -> bool:
        """Whether the index knows the file's digest at its present stat (no need to read it)."""
        known = self._load_index().get(os.path.abspath(path))
        try:
            return known is not None and known.trusted(_stat(path))
        except OSError:
            return False

    def digest(self, path: Path, hashed: Hashed | None = None) -> tuple[str, Stat] | None:
        """The file's content digest and its stat (None: it cannot be read), from the index where its stat says it
        was not written since; else `hashed` (`hash_file`, done beforehand, e.g. by another thread) where the file
        is still as it was then; else hashed now."""
        index = self._load_index()
        name = os.path.abspath(path)
        try:
            stat = _stat(path)
        except OSError:
            return None
        now = time.time()
        known = index.get(name)
        if known is not None and known.trusted(stat):
            self.counts.trusted += 1
            known.seen = now
            self._dirty = True
            return known.digest, stat
        if hashed is None or hashed[1] != stat or hashed[2] != stat:
            hashed = hash_file(path)  # not hashed yet, or written since
            if hashed is None:
                return None
        digest, before, after = hashed
        self.counts.hashed += 1
        if before == after:  # not written while it was hashed
            index[name] = FileState(before, digest, now, now)
            self._dirty = True
        return digest, after

    def save_index(self) -> None:
        if not self._dirty or self._index is None:
            return
        now = time.time()
        data = {p: [s.stat, s.digest, s.checked, s.seen] for p, s in self._index.items() if now - s.seen < INDEX_KEEP_S}
        self._write(self.root / INDEX, orjson.dumps(data))
        self._dirty = False

    # ------------------------------------------------------------------ keys

    def salt(self) -> bytes:
        """This cache's random salt for the secrets' fingerprint, made once."""
        if self._salt is None:
            file = self.root / "salt"
            try:
                self._salt = file.read_bytes()
            except OSError:
                self._salt = b""
            if len(self._salt) != 16:
                self._salt = os.urandom(16)
                self._write(file, self._salt)
        return self._salt

    def key(
        self, what: Any, files: Iterable[Path], hashed: dict[Path, Hashed | None] | None = None
    ) -> tuple[str, list[tuple[Path, Stat]]] | None:
        """The key of an entry made from `files` (and `what`: the run's name, paths and notes, as JSON-able data),
        and each file's stat as it was digested (None: a file that cannot be read: no entry). `hashed`: files
        hashed beforehand (`hash_file`)."""
        if self._secrets is None:
            self._secrets = secrets_fingerprint(self.salt())
        h = hashlib.sha256(FORMAT)
        h.update(code_version().encode() + b"\0" + self._secrets.encode() + b"\0")
        h.update(orjson.dumps(what, option=orjson.OPT_SORT_KEYS) + b"\0")
        stats = []
        for path in files:
            found = self.digest(path, (hashed or {}).get(path))
            if found is None:
                return None
            digest, stat = found
            h.update(str(path).encode("utf-8", "surrogateescape") + b"\0" + digest.encode() + b"\0")
            stats.append((path, stat))
        return h.hexdigest(), stats

    @staticmethod
    def unchanged(stats: list[tuple[Path, Stat]]) -> bool:
        """Whether every file still has the stat it had when its digest was taken."""
        try:
            return all(_stat(path) == stat for path, stat in stats)
        except OSError:
            return False

    # ------------------------------------------------------------------ entries

    def _entry(self, key: str) -> Path:
        return self.root / "runs" / key[:2] / key

    def get(self, key: str) -> Any | None:
        """The entry stored under `key`, or None (none, or one that does not read: a miss)."""
        path = self._entry(key)
        try:
            data = path.read_bytes()
        except OSError:
            self.counts.misses += 1
            return None
        if not data.startswith(FORMAT):
            self.counts.misses += 1
            return None
        try:
            value = _Unpickler(io.BytesIO(memoryview(data)[len(FORMAT) :])).load()
        except Exception as exc:  # noqa: BLE001 - a damaged entry is a miss, whatever it raises
            log.debug("report cache: %s does not read (%s); made again", path, type(exc).__name__)
            self.counts.misses += 1
            return None
        self.counts.hits += 1
        return value

    def put(self, key: str, value: Any) -> None:
        """Store `value` under `key`, whole or not at all; a cache that cannot be written is noted once."""
        blob = pickle.dumps(value, protocol=5)
        if self._write(self._entry(key), [FORMAT, blob]):
            self.counts.stored += 1

    def _write(self, path: Path, data: bytes | list[bytes]) -> bool:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    for chunk in [data] if isinstance(data, bytes) else data:
                        fh.write(chunk)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            return True
        except OSError as exc:
            if not self._warned:
                log.warning("report cache %s cannot be written (%s): reports are made without it", self.root, exc)
                self._warned = True
            return False


class _Unpickler(pickle.Unpickler):
    """Makes only data: the project's pydantic models and dataclasses, paths and sets. No function, and no class
    with behaviour of its own, can be named by an entry, so reading one runs no code of its choosing."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        if module.startswith(_ALLOWED_MODULES):
            from pydantic import BaseModel

            found = super().find_class(module, name)
            if isinstance(found, type) and (issubclass(found, BaseModel) or dataclasses.is_dataclass(found)):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a data class of a report")


def open_cache(setting: str | Path | None = None) -> ReportCache | None:
    """The cache as `cache_dir` finds it; None where it is off."""
    root = cache_dir(setting)
    return ReportCache(root) if root is not None else None

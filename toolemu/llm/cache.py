"""On-disk response cache (SQLite), keyed on everything that decides a reply and on nothing secret."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

from toolemu.errors import InputError
from toolemu.llm.options import CacheMode
from toolemu.paths import DEFAULT_CACHE_PATH  # defined with the other paths: the CLI shows it
from toolemu.secrets import redact

log = logging.getLogger("toolemu.llm")
_SQLITE_MAGIC = b"SQLite format 3\x00"


def cache_file_problem(path: Path) -> str | None:
    """Why `path` cannot be a response cache, read from SQLite's 100-byte header; None when it can (or is new)."""
    if path.exists() and not path.is_file():
        return "expected a cache file, found a folder"
    if not path.exists() or path.stat().st_size == 0:
        return None  # SQLite starts a new database here
    with path.open("rb") as fh:
        head = fh.read(100)
    if len(head) < 100 or not head.startswith(_SQLITE_MAGIC):
        return "expected a SQLite response cache, found another kind of file"
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    if pages and path.stat().st_size < pages * page_size:
        return "expected a whole SQLite file, found one cut short (an interrupted copy?)"
    return None


def _bad_cache(path: Path, why: str) -> InputError:
    return InputError.single(
        path,
        f"{why}; delete it to start a new cache, or pass --cache off or another --cache-path",
        field="--cache-path",
    )


def cache_key(request: dict[str, Any]) -> str:
    """A stable hash of the request. Callers pass only non-secret fields (ModelOptions.describe())."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Modes: 'rw' reads and writes, 'ro' reads only, 'off' does neither."""

    def __init__(self, path: str | Path = DEFAULT_CACHE_PATH, mode: CacheMode = "rw"):
        self.mode = mode
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._warned = False
        if mode == "off" or (mode == "ro" and not self.path.exists()):
            return
        if (why := cache_file_problem(self.path)) is not None:
            raise _bad_cache(self.path, why)
        try:
            if mode == "rw":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            uri = f"file:{self.path}?mode=ro" if mode == "ro" else f"file:{self.path}"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
            if mode == "rw":
                with self._db:
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            else:
                self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise _bad_cache(self.path, f"cannot be used as a SQLite response cache ({exc})") from None

    @property
    def active(self) -> bool:
        """Whether get or put can do anything (not --cache off, nor a read-only cache with no file)."""
        return self._db is not None

    def _damaged(self, exc: sqlite3.Error) -> None:
        """A cache that breaks mid-run is a miss, not a failed episode; said once."""
        if not self._warned:
            self._warned = True
            log.warning(
                "%s: the response cache failed (%s); going on without it (delete the file to rebuild)", self.path, exc
            )

    def get(self, key: str) -> dict[str, Any] | None:
        if self._db is None:
            return None
        with self._lock:
            try:
                row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.OperationalError:  # a read-only cache file from an older layout
                return None
            except sqlite3.DatabaseError as exc:  # damaged pages
                self._damaged(exc)
                return None
        try:
            value = json.loads(row[0]) if row else None
        except (TypeError, ValueError):  # an entry that is not ours: a miss
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self._db is None or self.mode != "rw":
            return
        try:
            with self._lock, self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                    (key, redact(json.dumps(value, ensure_ascii=False))),
                )
        except sqlite3.DatabaseError as exc:
            self._damaged(exc)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

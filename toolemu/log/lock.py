"""One writer per run: an OS file lock beside the trajectories, held while a command writes the run.

`fcntl.flock` on `.<stem>.lock` (`.trajectories.lock` in a run directory). The kernel drops the lock when the
process exits or crashes, so a stale lock file never blocks anyone; the file stays and holds the last writer's
pid for the error message. Within one process the lock is re-entrant (`toolemu run` emulates, then evaluates).
SLURM shards write separate directories, so they never contend.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolemu.errors import InputError

try:
    import fcntl
except ImportError:  # not POSIX: no locking (the project runs on Linux and macOS)
    fcntl = None  # type: ignore[assignment]

_held: dict[Path, tuple[int, int]] = {}  # lock file -> (fd, depth) for the locks this process holds
_guard = threading.Lock()


def lock_path(trajectories: Path) -> Path:
    return trajectories.with_name(f".{trajectories.stem}.lock")


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        pid = ""
    return f" (pid {pid})" if pid.isdigit() else ""


def _acquire(path: Path) -> None:
    with _guard:
        if path in _held:
            fd, depth = _held[path]
            _held[path] = (fd, depth + 1)
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise InputError.single(
                path.parent,
                f"another toolemu process{holder} is writing this run; wait for it to finish, or use another "
                "directory (two writers would both run every pair)",
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[path] = (fd, 1)


def _release(path: Path) -> None:
    with _guard:
        fd, depth = _held[path]
        if depth > 1:
            _held[path] = (fd, depth - 1)
            return
        del _held[path]
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextmanager
def run_lock(trajectories: Path) -> Iterator[None]:
    """Hold the write lock of the run whose trajectories are at `trajectories` (its folder must exist)."""
    if fcntl is None:
        yield
        return
    path = lock_path(trajectories).resolve()
    _acquire(path)
    try:
        yield
    finally:
        _release(path)

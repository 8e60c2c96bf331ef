"""One writer per run: OS file locks on descriptors held open while a command writes the run.

Two `fcntl.flock` locks, both on a file descriptor that stays open until the command is done with the run:

- `.<stem>.lock` beside the trajectories (`.trajectories.lock` in a run directory), which holds the writer's pid for
  the message a second writer gets;
- the trajectories file itself: the run's records, the one file no one removes while the run is wanted.

A lock file removed under a live writer (someone "cleaning up a stale lock") therefore lets no second writer in: the
new lock file it finds is free, the trajectories are not. The lock is never the existence of a file. When the run's
trajectories are rewritten (resume sets lines aside, merge writes its output), the new file is locked before it takes
the old one's place (`lock_new`, `carry_lock`, used by `toolemu.log.jsonl.rewrite_jsonl`). The kernel drops every
lock when the process exits or crashes, so a stale lock file never blocks anyone. Within one process the lock is
re-entrant (`toolemu run` emulates, then evaluates). SLURM shards write separate directories, so they never contend.

These are the local file system's semantics; on NFS, flock is emulated with byte-range locks, which the kernel may
drop when any descriptor of the file is closed, so there the lock file alone is certain to hold.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from toolemu.errors import InputError
from toolemu.paths import output_error

try:
    import fcntl
except ImportError:  # not POSIX: no locking (the project runs on Linux and macOS)
    fcntl = None  # type: ignore[assignment]

RUN_FILE = "run.json"  # toolemu.log.layout's name, repeated: layout imports the writers this module serves


@dataclass
class _Held:
    lock_fd: int
    data_fds: list[int] = field(default_factory=list)  # the trajectories, and each file that replaced them
    depth: int = 1
    created: bool = False  # the trajectories file did not exist: this lock made it (an empty anchor)


_held: dict[Path, _Held] = {}  # resolved trajectories path -> the locks this process holds on that run
_guard = threading.Lock()


def lock_path(trajectories: Path) -> Path:
    return trajectories.with_name(f".{trajectories.stem}.lock")


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        pid = ""
    return f" (pid {pid})" if pid.isdigit() else ""


def _busy(folder: Path, who: str) -> InputError:
    return InputError.single(
        folder,
        f"another toolemu process{who} is writing this run; wait for it to finish, or use another directory (two "
        "writers would both run every pair)",
    )


def _try_flock(fd: int, path: Path) -> bool:
    """True: locked; False: another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:  # a file system without locks (ENOLCK)
        os.close(fd)
        raise InputError.single(path, f"cannot be locked against a second writer: {exc.strerror or exc}") from None
    return True


def _open_lock_file(path: Path) -> int:
    """The lock file, locked; refused with the holder's pid when another process has it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:  # a read-only run folder, a folder where the lock file goes
        raise output_error(path, exc) from None
    if not _try_flock(fd, path):
        holder = _holder(fd)
        os.close(fd)
        raise _busy(path.parent, holder)
    return fd


def _open_data(path: Path) -> tuple[int | None, bool]:
    """The trajectories file opened for its lock (made, empty, if there is none yet), and whether it was made here.
    None where it can be neither written nor read: the command fails on writing it, with its own line."""
    created = False
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
            created = True
        except FileExistsError:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except IsADirectoryError as exc:
        raise output_error(path, exc) from None
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise output_error(path, exc) from None
        try:  # a read-only file (a published study's trajectories, judged here): its lock needs only reading
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None, False
    return fd, created


def _acquire(trajectories: Path) -> None:
    key = trajectories.resolve()
    with _guard:
        if key in _held:
            _held[key].depth += 1
            return
        lock_file = lock_path(key)
        lock_fd = _open_lock_file(lock_file)
        try:
            data_fd, created = _open_data(key)
            free = data_fd is None or _try_flock(data_fd, key)
        except BaseException:
            os.close(lock_fd)
            raise
        if not free:
            assert data_fd is not None
            os.close(data_fd)
            os.close(lock_fd)  # the new lock file stays: it is the lock file from now on, free
            raise _busy(key.parent, f" (its lock file {lock_file.name} was removed)")
        with suppress(OSError):  # the pid is for the message only
            os.ftruncate(lock_fd, 0)
            os.pwrite(lock_fd, f"{os.getpid()}\n".encode(), 0)
        _held[key] = _Held(lock_fd, [data_fd] if data_fd is not None else [], created=created)


def _release(trajectories: Path) -> None:
    key = trajectories.resolve()
    with _guard:
        held = _held[key]
        if held.depth > 1:
            held.depth -= 1
            return
        del _held[key]
        if held.created:
            _remove_anchor(key, held.data_fds[-1] if held.data_fds else None)
        for fd in [*held.data_fds, held.lock_fd]:
            with suppress(OSError):
                os.close(fd)  # closing the last descriptor of each file releases its lock


def _remove_anchor(path: Path, fd: int | None) -> None:
    """An empty trajectories file this lock made, in a folder that became no run (no run.json: a merge that failed
    before writing), is removed: it was only the lock's anchor, and would make the folder look like someone's data."""
    if fd is None or (path.parent / RUN_FILE).exists():
        return
    with suppress(OSError):
        mine, there = os.fstat(fd), os.stat(path)
        if (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino) and there.st_size == 0:
            path.unlink()


def lock_leftovers(trajectories: Path) -> set[str]:
    """The names in the run's folder that a lock, held or left, may account for: the lock file, and the trajectories
    file while it is empty (a writer's lock made it to hold). A folder of nothing else holds no data."""
    names = {lock_path(trajectories).name}
    with suppress(OSError):
        if trajectories.is_file() and trajectories.stat().st_size == 0:
            names.add(trajectories.name)
    return names


def lock_new(path: Path, fd: int) -> bool:
    """Lock `fd`, a file about to replace `path`, when this process holds the run lock whose trajectories are
    `path`; True when it did (then `carry_lock` must follow the rename)."""
    if fcntl is None:
        return False
    with _guard:
        if path.resolve() not in _held:
            return False
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a file no one else has opened yet
    return True


def carry_lock(path: Path, fd: int) -> None:
    """`fd` (locked by `lock_new`) now is `path`: it is held until the run lock is released."""
    with _guard:
        held = _held.get(path.resolve())
        replaced, held_fds = (held.data_fds, [fd]) if held is not None else ([fd], [])
        if held is not None:
            held.data_fds = held_fds
            held.created = False  # the anchor was replaced by the real file
    for old in replaced:  # the files it replaced are gone from the folder: no one can open them to lock them
        with suppress(OSError):
            os.close(old)


@contextmanager
def run_lock(trajectories: Path) -> Iterator[None]:
    """Hold the write lock of the run whose trajectories are at `trajectories` (its folder must exist)."""
    if fcntl is None:
        yield
        return
    _acquire(trajectories)
    try:
        yield
    finally:
        _release(trajectories)

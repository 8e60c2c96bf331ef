"""Appends from many threads, written by one: group commit for a run's trajectory file.

A served model answers 64 to 256 requests at once, and a run then finishes episodes faster than one fsync each can
follow from the thread that hands out work. Here the caller only queues a record; a writer thread takes everything
queued, writes it with one write() on an O_APPEND file (whole lines, as JsonlWriter's) and one fsync, and only
then marks each record durable. Nothing is reported as written before it is on disk: `append` returns a Future
that completes after the fsync (or carries the error), and `close()` writes what is queued, then raises the first
failure, if any. A process killed outright loses only records no one was told were written. As JsonlWriter does,
the first batch heals a torn last line left by an earlier crash (`heal_tail`) before appending.

A batch that cannot be written (a full disk, a read-only folder) is cut back off the file whole (no half line stays),
fails every record in it with one `OutputError` naming the file, and the writer takes no more: the next `append`
raises that error, so the work pool stops and the command fails with one line, and no record of the failed batch is
reported as written.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from toolemu.log.jsonl import JsonlWriter, line_of
from toolemu.secrets import redactor


class BatchedJsonlWriter:
    """One JSON record per line, appended in the order `append` was called, fsynced in batches."""

    def __init__(self, path: Path, errors: Path | None = None):
        self.path = path
        self._file = JsonlWriter(path, errors)  # errors: where a torn tail is set aside (default: beside it)
        self._queue: list[tuple[BaseModel | dict[str, Any], Future[None]]] = []
        self._ready = threading.Condition()
        self._closing = False
        self._error: BaseException | None = None
        self.batches = 0  # write + fsync rounds so far (for tests and measurements)
        self._thread = threading.Thread(target=self._run, name="jsonl-writer", daemon=True)
        self._thread.start()

    def append(self, record: BaseModel | dict[str, Any]) -> Future[None]:
        """Queue a record; the Future completes once its line is on disk. Raises the first write failure, once there
        is one: nothing more is queued behind a batch that could not be written."""
        done: Future[None] = Future()
        with self._ready:
            self.raise_if_failed()
            if self._closing:
                raise RuntimeError(f"{self.path}: the writer is closed")
            self._queue.append((record, done))
            self._ready.notify()
        return done

    def raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        """Write everything queued, stop the thread, and raise the first write failure, if any."""
        with self._ready:
            self._closing = True
            self._ready.notify()
        self._thread.join()
        self.raise_if_failed()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closing:
                    self._ready.wait()
                batch, self._queue = self._queue, []
                if not batch and self._closing:
                    return
            self._commit(batch)

    def _commit(self, batch: list[tuple[BaseModel | dict[str, Any], Future[None]]]) -> None:
        if self._error is not None:  # queued behind a batch that failed: not written either
            for _, done in batch:
                done.set_exception(self._error)
            return
        try:
            scrub = redactor()  # the environment read once per batch, not once per line
            self._file.write("".join(line_of(record, scrub) for record, _ in batch).encode("utf-8"))
        except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller, and raised again by close()
            with self._ready:
                self._error = self._error or exc
            for _, done in batch:
                done.set_exception(exc)
            return
        self.batches += 1
        for _, done in batch:
            done.set_result(None)

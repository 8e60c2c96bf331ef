"""The one work pool. Episodes (`toolemu run`), judgements (`toolemu evaluate`) and robust re-runs all run here, with
one behaviour for how work is handed out, how it stops and how results reach disk:

- Kept fed: up to twice as many items as workers are handed to the threads, so a worker that finishes one starts
  the next at once.
- Results are recorded in this thread, in the order they finish; `record` hands each to a writer (typically a
  `BatchedJsonlWriter`) and says when it is on disk. The progress bar counts an item once it is.
- A `StopRun` from any item (a budget reached, a key refused) stops everything: the item that raised it and every
  item not started are not run, items in flight finish or stop at their next step (`stop` is set for them).
- Ctrl-C (SIGINT) and SIGTERM (what SLURM sends at a job's time limit) do the same, as "interrupted" and
  "terminated": nothing new starts, what is in flight is waited for and recorded if it finished (a second
  signal stops waiting), and the caller says what was not run and exits 130 or 143.
- Nothing is lost and nothing is reported twice: every item is either recorded or listed in `not_run`, in the
  order the items were given.
- While it runs, the garbage collector walks less and the GIL changes hands less (toolemu.pool_interpreter).
"""

from __future__ import annotations

import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from toolemu.errors import Terminated, note_sigterm
from toolemu.llm.stops import StopRun
from toolemu.pool_interpreter import pool_interpreter
from toolemu.progress import progress_bar

T = TypeVar("T")
R = TypeVar("R")
QUEUED_PER_WORKER = 2  # items handed to the threads per worker: one running, one ready to start
SIGNAL_CHECK_S = 0.2  # how often the main thread looks up from waiting, to see a stop a signal asked for
INTERRUPTED, TERMINATED = "interrupted", "terminated"


class NotRun(Exception):
    """Raised by a work function for an item it gave up because the pool is stopping (it is not a failure)."""


@contextmanager
def stop_on_signals(stop: threading.Event, outcome: PoolOutcome[Any]) -> Iterator[None]:
    """Within the block, SIGINT (Ctrl-C) and SIGTERM stop the pool (`stop` is set, the outcome says which) instead
    of raising wherever the main thread happens to be, so no item is half handed out; a second signal raises
    (KeyboardInterrupt, or Terminated), to stop waiting for what is in flight."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        seen.append(signum)
        if len(seen) > 1:
            raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
        if signum == signal.SIGTERM:
            note_sigterm()
        kind = TERMINATED if signum == signal.SIGTERM else INTERRUPTED
        outcome.stopped_by(kind, kind)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass
class Recorded:
    """What `record` did with a result: a Future that completes once it is on disk (None: it already is), whether
    the item failed (it is recorded all the same), and what it cost, for the progress bar."""

    written: Future[None] | None = None
    failed: bool = False
    cost_usd: float = 0.0


@dataclass
class PoolOutcome(Generic[T]):
    """What did not run, and why the pool stopped ("" when it did not: every item was recorded)."""

    not_run: list[T] = field(default_factory=list)
    stop_reason: str = ""
    stop_kind: str = ""  # "", "interrupted", "terminated", "budget", "access", "stopped"

    def stopped_by(self, kind: str, reason: str) -> None:
        if not self.stop_kind:
            self.stop_kind, self.stop_reason = kind, reason


def run_pool(
    items: Sequence[T],
    work: Callable[[T], R],
    record: Callable[[T, R], Recorded],
    *,
    workers: int,
    label: str = "items",
    show_progress: bool = False,
    stop: threading.Event | None = None,
) -> PoolOutcome[T]:
    """Run `work` on every item on `workers` threads and `record` each result; see the module's docstring.

    `work` may raise NotRun (it saw `stop` set and gave up) or StopRun; anything else is a bug and is raised
    here once the threads are done."""
    stop = stop or threading.Event()
    outcome: PoolOutcome[T] = PoolOutcome()
    order = {id(item): i for i, item in enumerate(items)}
    pending = deque(items)
    running: dict[Future[R], T] = {}
    # Each item's Future, once done, is put here by its own callback: waiting on one queue costs the same with 8
    # items in flight or 2,048 (concurrent.futures.wait hooks a waiter into every one of them, on every wait).
    finishing: queue.SimpleQueue[Future[R]] = queue.SimpleQueue()
    written: set[Future[None]] = set()  # records not on disk yet
    progress = progress_bar()
    bar = progress.add_task(label, total=len(items), failed=0, cost=0.0)
    tally = {"failed": 0, "cost": 0.0}
    if show_progress:
        progress.start()

    def started(item: T) -> R:
        if stop.is_set():
            raise NotRun()
        try:
            return work(item)
        except StopRun:
            stop.set()  # in this thread already: the items queued behind this one must not start
            raise

    def on_disk(done: Future[None]) -> None:
        written.discard(done)
        if done.exception() is None:
            progress.update(bar, advance=1, failed=tally["failed"], cost=tally["cost"])

    def collect(finished: set[Future[R]]) -> None:
        # Those that finished together are recorded in the order they were given: with one worker, the file's
        # order is the items' order.
        for fut in sorted(finished, key=lambda f: order.get(id(running[f]), 0)):
            item = running.pop(fut)
            try:
                result = fut.result()
            except (NotRun, CancelledError):
                outcome.not_run.append(item)
                continue
            except StopRun as exc:
                outcome.not_run.append(item)
                outcome.stopped_by(exc.kind, str(exc))
                stop.set()
                continue
            done = record(item, result)
            tally["failed"] += done.failed
            tally["cost"] += done.cost_usd
            if done.written is None:
                progress.update(bar, advance=1, failed=tally["failed"], cost=tally["cost"])
            else:
                written.add(done.written)
                done.written.add_done_callback(on_disk)

    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=label)
    try:
        with stop_on_signals(stop, outcome), pool_interpreter():
            try:
                while pending or running:
                    while pending and len(running) < QUEUED_PER_WORKER * workers and not stop.is_set():
                        fut = executor.submit(started, pending[0])
                        running[fut] = pending.popleft()
                        fut.add_done_callback(finishing.put)
                    if stop.is_set():  # nothing new starts; what is in flight finishes or stops at its next step
                        _cancel_queued(running, outcome)
                    if not running:
                        break
                    collect(_finished(finishing, running))
            except KeyboardInterrupt:  # a second signal: stop waiting for what is in flight
                outcome.not_run += list(running.values())
                running.clear()
            except BaseException:  # a bug in a work or record function: nothing new starts, then it is raised
                stop.set()
                raise
    finally:
        executor.shutdown(wait=not running, cancel_futures=True)
        wait(list(written))
        if show_progress:
            progress.stop()
    outcome.not_run += pending
    if outcome.not_run and not outcome.stop_kind:
        outcome.stopped_by("stopped", "stopped")
    outcome.not_run.sort(key=lambda item: order.get(id(item), 0))
    return outcome


def _finished(finishing: queue.SimpleQueue[Future[R]], running: dict[Future[R], T]) -> set[Future[R]]:
    """The items' Futures that are done now (waiting up to SIGNAL_CHECK_S for one): those still counted as running
    (one cancelled by `_cancel_queued` is already out)."""
    try:
        done = {finishing.get(timeout=SIGNAL_CHECK_S)}
    except queue.Empty:
        return set()
    while True:
        try:
            done.add(finishing.get_nowait())
        except queue.Empty:
            return {f for f in done if f in running}


def _cancel_queued(running: dict[Future[R], T], outcome: PoolOutcome[T]) -> None:
    """Items handed to the threads but not started are not run."""
    for fut in [f for f in running if f.cancel()]:
        outcome.not_run.append(running.pop(fut))

"""A study's runs read in worker processes: each reads whole runs and sends back the slim run and its traces.

Reading is most of a large report's time, it is the same work for every run, and a run needs nothing from the
others, so it spreads over the cores. Sending a slim run back costs about half of reading it (pickling pydantic
records), so on 2 cores reading a study takes about 0.8 of the time, and less on more cores.

Workers are forked (they start with everything imported), only on Linux and from a process with no other thread.
They ignore Ctrl-C (the main process stops them) and die on SIGTERM like any process of a SLURM job. A run whose
worker fails for any reason is read again in the main process, which raises what a serial read would; if a worker
dies, what is left is read there too.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

PARALLEL_BYTES = 64_000_000  # input past which reading is spread over processes: below, forking costs more


def usable_cores() -> int:
    """The cores this process may run on (Linux): SLURM and taskset give it fewer than the machine has."""
    return len(os.sched_getaffinity(0))


def workers_for(items: int, input_bytes: int) -> int:
    """How many worker processes to read `items` runs of `input_bytes` with: 0 means read them in this one."""
    if input_bytes < PARALLEL_BYTES or items < 2 or not fork_is_safe():
        return 0
    cores = min(usable_cores(), items)
    return cores if cores >= 2 else 0


def fork_is_safe() -> bool:
    """Linux (macOS frameworks break in a forked child; Windows cannot fork), and no thread but this one: a fork
    copies no other thread, but may copy a lock one holds (`toolemu run` writes its report with threads about)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _in_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the main process acts
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the main process's handler, which raises Terminated


def _attempt(task: tuple[Callable[[Item], Result], Item]) -> tuple[bool, Result | None]:
    read, item = task
    try:
        return True, read(item)
    except Exception:  # noqa: BLE001 - the main process reads it again and raises the real error there
        return False, None


def map_in_processes(read: Callable[[Item], Result], items: Sequence[Item], workers: int) -> Iterator[Result]:
    """`read(item)` for each item, in order, over `workers` forked processes (`read` must be a module-level
    function). An item whose worker raised, or whose result did not come back, is read here, so its error is
    raised here; if a worker dies (killed, out of memory), what is left is read here."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_in_worker) as pool:
        futures = [pool.submit(_attempt, (read, item)) for item in items]
        try:
            for n, (item, future) in enumerate(zip(items, futures, strict=True)):
                try:
                    ok, result = future.result()
                except BrokenProcessPool:
                    yield from (read(rest) for rest in items[n:])
                    return
                except Exception:  # noqa: BLE001 - a result that would not pickle: read it here
                    ok, result = False, None
                yield result if ok else read(item)  # type: ignore[misc]
        finally:
            for future in futures:
                future.cancel()  # stopped early (Ctrl-C, a write that failed): no run is started, those begun end

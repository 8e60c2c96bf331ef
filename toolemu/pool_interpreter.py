"""The interpreter's settings while the work pool runs: the cyclic garbage collector and the GIL's switch interval.

With hundreds of episodes in flight, every thread that got its reply wants the GIL at once. Two defaults of CPython
make that worse, and at a thousand workers the threads handing the GIL to each other took more CPU per call than the
calls themselves (docs/PERFORMANCE.md, "The interpreter at 1,024 workers"):

- The collector. A collection holds the GIL while it walks its generation. What an episode allocates lives for
  seconds, survives the young collections and piles up in the older generations, whose walks take in the whole heap
  (the loaded benchmark's specs included: 100 ms on the shipped one). Every thread stalls meanwhile, and the replies
  that arrived wait for it all together. So, while a pool runs:
  - what was alive when it started is frozen (`gc.freeze()`): moved out of every generation, never walked, freed as
    ever by reference counting. It goes back to the oldest generation when the pool ends (`gc.unfreeze()`).
  - the youngest generation holds YOUNG_OBJECTS objects before it is collected, not CPython's 700.
  Cycles made during the pool are still collected, by the collector's own rules.
- The switch interval. A thread waiting for the GIL asks its holder to drop it after the interval (5 ms by
  default). The pool's threads drop it by themselves on every socket call, well within that; the asking only wakes
  waiters to hand the GIL around more often. SWITCH_INTERVAL_S is the interval while a pool runs.

Pools nest (the outermost one sets and restores), and a process that froze objects itself keeps them frozen: the
pool then leaves freezing alone.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

YOUNG_OBJECTS = 50_000  # net new tracked objects between young collections while a pool runs
SWITCH_INTERVAL_S = 0.02


@dataclass
class _Before:
    thresholds: tuple[int, ...]
    switch_interval: float
    froze: bool


_lock = threading.Lock()
_depth = 0
_before: _Before | None = None


@contextmanager
def pool_interpreter() -> Iterator[None]:
    """The interpreter's settings for a pool (see the module's docstring), restored when the outermost pool ends."""
    global _depth, _before
    with _lock:
        _depth += 1
        if _depth == 1:
            # objects frozen by someone else stay theirs to unfreeze
            _before = _Before(gc.get_threshold(), sys.getswitchinterval(), froze=gc.get_freeze_count() == 0)
            if _before.froze:
                gc.freeze()
            gc.set_threshold(YOUNG_OBJECTS, *_before.thresholds[1:])
            sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _before is not None:
                gc.set_threshold(*_before.thresholds)
                sys.setswitchinterval(_before.switch_interval)
                if _before.froze:
                    gc.unfreeze()
                _before = None

"""Reading a study allocates millions of small objects that all stay alive, and CPython's cyclic collector walks
every live object again each time the youngest generation fills up: on 800 files that doubled the time to read
them. Records hold no reference cycles, so nothing is lost by collecting once, afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (reference counting still frees everything else); nests."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

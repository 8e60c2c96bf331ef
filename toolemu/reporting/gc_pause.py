"""Reading a study allocates millions of small objects that all stay alive, and CPython's cyclic collector walks
every live object again each time the youngest generation fills up: on 800 files that doubled the time to read
them. Records hold no reference cycles, so nothing is lost by collecting them later.

Leaving the pause, what it kept alive goes straight to the oldest generation (`gc.freeze()` then `gc.unfreeze()`:
two list splices, no walk), as a long-lived object would after surviving two collections; otherwise the first
allocation after the pause walks all of it at once (0.2 s on a study). It is collected with the oldest generation,
as ever, when enough new long-lived objects have piled up."""

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
            gc.freeze()  # every tracked object to the permanent generation ...
            gc.unfreeze()  # ... and from there to the oldest one, where the next full collection sees them
            gc.enable()

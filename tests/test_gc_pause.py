"""The report's pause of the cyclic collector: what it kept alive is not walked again on leaving it, and nothing
is leaked."""

from __future__ import annotations

import gc
import weakref

from toolemu.reporting.gc_pause import gc_paused


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_leaving_the_pause_leaves_no_young_objects_to_walk() -> None:
    gc.collect()
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        with gc_paused():
            kept = [{"n": [i]} for i in range(50_000)]
            assert not gc.isenabled() and gc.get_count()[0] > 50_000  # all of them young: a walk was due
        more = [[i] for i in range(100)]  # allocations that would set off the walk of all of them
    finally:
        gc.callbacks.remove(seen)
    assert gc.isenabled() and collections == []  # none: they are in the oldest generation, not walked now
    assert len(kept) == 50_000 and len(more) == 100


def test_garbage_made_in_the_pause_is_still_collected() -> None:
    with gc_paused():
        node = Node()
        gone = weakref.ref(node)
        del node
    assert gone() is not None  # a cycle: reference counting alone cannot free it
    gc.collect()
    assert gone() is None  # the oldest generation's collection does


def test_pauses_nest_and_a_disabled_collector_stays_disabled() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()

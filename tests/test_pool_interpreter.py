"""The interpreter's settings while the work pool runs (toolemu.pool_interpreter): what was alive at the start is not
walked, young collections come every YOUNG_OBJECTS objects, the switch interval is SWITCH_INTERVAL_S, and everything
is as it was once the pool ends."""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from typing import Any

from toolemu.pool import Recorded, run_pool
from toolemu.pool_interpreter import SWITCH_INTERVAL_S, YOUNG_OBJECTS, pool_interpreter


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def _tracked(obj: object) -> bool:
    """Whether `obj` is in one of the collector's generations (a frozen object is in none)."""
    return any(o is obj for o in gc.get_objects())


def test_inside_a_pool_what_lived_before_is_frozen_and_young_collections_are_rarer() -> None:
    before, interval = gc.get_threshold(), sys.getswitchinterval()
    old = Node()  # alive when the pool starts
    seen: list[dict[str, Any]] = []

    def work(item: int) -> int:
        fresh = Node()
        seen.append(
            {
                "threshold": gc.get_threshold(),
                "switch interval": sys.getswitchinterval(),
                "frozen": gc.get_freeze_count(),
                "old walked": _tracked(old),
                "fresh walked": _tracked(fresh),
            }
        )
        return item

    outcome = run_pool([1, 2], work, lambda item, result: Recorded(), workers=2)
    assert outcome.not_run == []
    for inside in seen:
        assert inside["threshold"] == (YOUNG_OBJECTS, *before[1:])
        assert inside["switch interval"] == SWITCH_INTERVAL_S != interval
        assert inside["frozen"] > 0 and not inside["old walked"] and inside["fresh walked"]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0  # as it was
    assert sys.getswitchinterval() == interval and _tracked(old)


def test_a_cycle_made_in_a_pool_is_collected_in_it_by_the_collector_itself() -> None:
    collected: list[bool] = []

    def work(item: int) -> int:
        gone = weakref.ref(Node())  # garbage at once: a cycle nothing refers to
        kept = [[i] for i in range(2 * YOUNG_OBJECTS)]  # enough new objects for a young collection to come
        collected.append(gone() is None)
        return len(kept)

    run_pool([1], work, lambda item, result: Recorded(), workers=1)
    assert collected == [True]


def test_pools_nest_and_the_outermost_restores() -> None:
    before, interval = gc.get_threshold(), sys.getswitchinterval()
    with pool_interpreter():
        frozen = gc.get_freeze_count()
        with pool_interpreter():
            assert gc.get_freeze_count() == frozen  # not frozen twice: the inner pool changes nothing
        assert gc.get_threshold()[0] == YOUNG_OBJECTS and gc.get_freeze_count() == frozen
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0 and sys.getswitchinterval() == interval


def test_objects_the_process_froze_itself_stay_frozen() -> None:
    mine = Node()
    gc.freeze()  # as a server does before it forks
    try:
        with pool_interpreter():
            assert gc.get_threshold()[0] == YOUNG_OBJECTS
        assert gc.get_freeze_count() > 0 and not _tracked(mine)  # not unfrozen by the pool
    finally:
        gc.unfreeze()


def test_pools_in_two_threads_restore_once_both_end() -> None:
    before = gc.get_threshold()
    entered, leave = threading.Barrier(2), threading.Event()
    inside: list[tuple[int, ...]] = []

    def pool() -> None:
        with pool_interpreter():
            entered.wait(5)
            leave.wait(5)
            inside.append(gc.get_threshold())

    first = threading.Thread(target=pool)
    first.start()
    with pool_interpreter():
        entered.wait(5)
        leave.set()
        first.join(5)
        assert gc.get_threshold()[0] == YOUNG_OBJECTS  # the other pool ended; this one still runs
    assert inside == [(YOUNG_OBJECTS, *before[1:])]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0

"""util/heap: what exists when long_lived starts (or at freeze_now) is frozen, garbage made later is
still collected, and on the way out the collector is as it was."""
from __future__ import annotations

import gc
import weakref

from guardbench.util.heap import YOUNG, freeze_now, long_lived


class Node:
    def __init__(self) -> None:
        self.me = self          # a cycle: only the collector frees it


def test_what_exists_at_the_start_and_at_freeze_now_is_frozen_and_released_on_the_way_out():
    gc.unfreeze()                   # whatever an earlier test of this process left
    before = [Node() for _ in range(1000)]
    with long_lived():
        at_start = gc.get_freeze_count()
        assert at_start >= 1000
        later = [Node() for _ in range(1000)]
        gc.collect()
        # a collection freezes nothing: what was made later is still tracked. (The count is not
        # pinned: a frozen object is still freed when its last reference goes, and a thread an
        # earlier test of this process left finishing frees some: CI saw 973,139 become 973,137.)
        assert any(o is later[-1] for o in gc.get_objects())
        assert gc.get_freeze_count() <= at_start
        freeze_now()
        assert not any(o is later[-1] or o is before[0] for o in gc.get_objects())
    assert gc.get_freeze_count() == 0


def test_garbage_made_after_the_freeze_is_still_collected():
    gc.unfreeze()
    with long_lived():
        cycle = Node()
        gone = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert gone() is None


def test_a_freeze_made_by_someone_else_is_left_in_place():
    gc.unfreeze()
    gc.freeze()
    try:
        with long_lived():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_young_generation_is_collected_less_often_within_and_as_before_after():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with long_lived():
            assert gc.get_threshold() == (YOUNG, 10, 10)
            cycle = Node()                  # garbage in a cycle still goes, once enough is made
            gone = weakref.ref(cycle)
            del cycle
            junk = [Node() for _ in range(3 * YOUNG)]
            del junk
            assert gone() is None
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 5, 5)      # a caller's rarer collections are kept
        with long_lived():
            assert gc.get_threshold() == (50_000, 5, 5)
        assert gc.get_threshold() == (50_000, 5, 5)
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()

"""util/heap.long_lived: a full collection's survivors are frozen, garbage made meanwhile is still
collected, and on the way out the collector is as it was."""
from __future__ import annotations

import gc
import weakref

from guardbench.util.heap import _freeze_survivors, long_lived


class Node:
    def __init__(self) -> None:
        self.me = self          # a cycle: only the collector frees it


def test_survivors_of_a_full_collection_are_frozen_and_released_on_the_way_out():
    gc.unfreeze()                   # whatever an earlier test of this process left
    assert gc.get_freeze_count() == 0 and _freeze_survivors not in gc.callbacks
    with long_lived():
        at_start = gc.get_freeze_count()
        kept = [Node() for _ in range(1000)]
        gc.collect()
        assert gc.get_freeze_count() >= at_start + 1000
        assert not any(o is kept[0] for o in gc.get_objects(generation=2))
    assert gc.get_freeze_count() == 0 and _freeze_survivors not in gc.callbacks


def test_garbage_made_after_a_freeze_is_still_collected():
    with long_lived():
        gc.collect()
        cycle = Node()
        gone = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert gone() is None


def test_an_inner_use_leaves_the_outer_one_in_place():
    gc.unfreeze()
    with long_lived():
        with long_lived():
            pass
        assert _freeze_survivors in gc.callbacks and gc.get_freeze_count() > 0
    assert _freeze_survivors not in gc.callbacks and gc.get_freeze_count() == 0

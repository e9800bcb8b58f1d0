"""A run's long-lived objects kept out of Python's full garbage collections.

What a run command holds until it ends (its modules, cases, policy and parsed documents; at the
end, the records the tables are made from) is walked again by every full collection. ``long_lived``
freezes (``gc.freeze``) what exists when it starts, which is the ``gc`` module's advice for a
process that forks workers: the parent's objects are then neither walked nor, through their
reference counts' pages, copied by the workers' collections. ``freeze_now`` freezes what exists at
another moment (the records, before the tables: each full collection during the tables walked all
of them, half a second at 33,000 runs). A frozen object is still freed when its last reference
goes; only a cycle of frozen objects that becomes garbage waits for the end, when everything is
unfrozen and the collector takes it.

Within ``long_lived`` the young generation is also collected less often: every ``YOUNG`` new
objects instead of CPython's 700. A finished run leaves nothing in a cycle (Started.close), so what
those collections found was mostly a run still in progress, walked and promoted again and again: on
33,000 runs in one process they took 1.10 s at 700 and 0.51 s at 10,000 (bench/bench_stages.py
with gc callbacks). The generation's size bounds the cyclic garbage waiting; nothing else changes.

Freezing after every full collection was tried and dropped: it empties the oldest generation, so
full collections come far more often, and each clears the interpreter's free lists (CPython 3.11),
which slowed a 33,000-run matrix by 3 to 7%.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

YOUNG = 10_000          # new objects between collections of the young generation, within


@contextmanager
def long_lived() -> Iterator[None]:
    """Within: what existed at the start (and at each ``freeze_now``) is frozen, and the young
    generation is collected every ``YOUNG`` new objects (or as the caller had it, if less often).
    On the way out the thresholds are as they were and, unless something else had frozen objects
    before, everything is unfrozen again."""
    had_frozen = gc.get_freeze_count() > 0
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if not had_frozen:
            gc.unfreeze()


def freeze_now() -> None:
    """Freeze every object that exists now (inside ``long_lived``: unfrozen at its end)."""
    gc.freeze()

"""A run's long-lived objects kept out of Python's full garbage collections.

What a run command builds to last (the staged worlds, the parsed documents, the records the tables
are made from) lives until it ends, yet every full collection walks all of it again: in a worker
of the scripted run that was 4% of its time, and in the parent each full collection during the
tables took half a second at 33,000 runs. ``long_lived`` freezes (``gc.freeze``) what exists when
it starts, and what survives each full collection from then on: right after a full collection
every object left is reachable, so no garbage is frozen with them. Younger objects are collected
as always; a frozen object is still freed when its last reference goes, and only a cycle of frozen
objects that becomes garbage waits for the end (``gc.unfreeze``, the collector takes it then).

It is also the ``gc`` module's advice for a process that forks workers: frozen before the fork, the
parent's objects are not walked (and their pages not copied) by the workers' collections.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Iterator


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


@contextmanager
def long_lived() -> Iterator[None]:
    """Within: survivors of every full collection are frozen. On the way out the hook is removed
    and, unless something else had frozen objects before, everything is unfrozen again."""
    mine = _freeze_survivors not in gc.callbacks
    had_frozen = gc.get_freeze_count() > 0
    if mine:
        gc.callbacks.append(_freeze_survivors)
    gc.freeze()
    try:
        yield
    finally:
        if mine and _freeze_survivors in gc.callbacks:
            gc.callbacks.remove(_freeze_survivors)
        if mine and not had_frozen:
            gc.unfreeze()

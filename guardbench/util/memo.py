"""Memos of pure readings of what a system under test sent: bounded in count, and in size.

The scoring, the records and the defences remember what they read of a text (a run's setup
repeats in every run of its case and arm: its texts are read once). ``functools.lru_cache`` bounds
only how many results it keeps. A system under test is an adversary, and the size of what it sends
is its choice: up to 16 MiB a body (transport/http_server.py). Thousands of such bodies kept by
count alone would hold tens of gigabytes, and the run would die of memory rather than be measured.

``short_memo`` therefore remembers a reading only when its input is at most ``MEMO_MAX``
characters (or bytes). A longer input is read afresh each time: the same answer, never kept. The
bench's own traffic stays far below the bound (2.6 KB at most in the default run), so it is read
exactly as before. tests/util/test_memo.py holds every memo of a sent text to this.
"""
from __future__ import annotations

from functools import lru_cache, update_wrapper
from typing import Any, Callable, TypeVar

MEMO_MAX = 16_384       # characters (or bytes) of the longest input a memo keeps

F = TypeVar("F", bound=Callable[..., Any])


def short_memo(maxsize: int, arg: int = 0) -> Callable[[F], F]:
    """``lru_cache(maxsize)`` for calls whose argument number ``arg`` (a text, bytes: what a
    system sent) is at most ``MEMO_MAX`` long; a longer one is read afresh. ``cache_info`` and
    ``cache_clear`` are the cache's."""
    def wrap(fn: F) -> F:
        kept = lru_cache(maxsize=maxsize)(fn)

        def call(*args: Any) -> Any:
            return kept(*args) if len(args[arg]) <= MEMO_MAX else fn(*args)

        update_wrapper(call, fn)
        call.__dict__.update(cache_info=kept.cache_info, cache_clear=kept.cache_clear)
        return call  # type: ignore[return-value]
    return wrap

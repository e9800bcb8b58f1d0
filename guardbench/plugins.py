"""Plug-ins from entry-point groups: one loader for every registry (arms, defences).

A plug-in that fails to load is reported on stderr and listed as broken; it never stops the
built-ins or the other plug-ins from working.
"""
from __future__ import annotations

import sys
from typing import Callable


def load_entry_points(group: str, table: dict[str, Callable[..., object]], sources: dict[str, str],
                      broken: dict[str, str], kind: str) -> None:
    """Add each entry point of ``group`` to ``table`` (a built-in of the same name wins)."""
    from importlib.metadata import entry_points
    for ep in entry_points(group=group):
        if ep.name in table:
            continue
        try:
            factory = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plug-in is reported, never fatal
            broken[ep.name] = f"{type(exc).__name__}: {exc}"
            print(f"warning: {kind} plug-in {ep.name!r} failed to load: {exc}", file=sys.stderr)
            continue
        table[ep.name] = factory
        dist = getattr(ep, "dist", None)
        sources[ep.name] = f"{dist.name} {dist.version}" if dist is not None else ep.value.split(":")[0]

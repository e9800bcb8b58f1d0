"""Defences by name. Built-ins register with ``@register_defence("name")``; third-party
packages add theirs through the ``guardbench.defences`` entry-point group (each entry point
names a factory: a class or function taking the DefenceConfig), without touching guardbench.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from guardbench.errors import GuardbenchError
from guardbench.plugins import load_entry_points

_DEFENCES: dict[str, Callable[..., object]] = {}
_SOURCES: dict[str, str] = {}
_BROKEN: dict[str, str] = {}
_loaded = False
GROUP = "guardbench.defences"


def register_defence(name: str, source: str = "guardbench"):
    def deco(factory):
        _DEFENCES[name] = factory
        _SOURCES[name] = source
        factory.defence_name = name
        return factory
    return deco


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import guardbench.defences.gate  # noqa: F401  (registers)
    import guardbench.defences.pdp  # noqa: F401
    import guardbench.defences.taint  # noqa: F401
    load_entry_points(GROUP, _DEFENCES, _SOURCES, _BROKEN, "defence")


BUILTIN_ORDER = ("gate", "pdp", "taint", "taint_fine", "prompt_filter")


def defence_names() -> list[str]:
    """Installed defences: the built-ins in a fixed order, then plug-ins in discovery order."""
    _load()
    rank = {n: i for i, n in enumerate(BUILTIN_ORDER)}
    return sorted(_DEFENCES, key=lambda n: rank.get(n, len(rank)))


def get_factory(name: str):
    _load()
    if name not in _DEFENCES:
        raise GuardbenchError("defence", f"unknown defence {name!r} (installed: {', '.join(_DEFENCES)})")
    return _DEFENCES[name]


def make_defence(name: str, config):
    """A fresh defence (one per session: defences may keep per-session state)."""
    return get_factory(name)(config)


@dataclass(frozen=True)
class Listing:
    name: str
    source: str
    promise: str


def listing() -> list[Listing]:
    _load()
    out = [Listing(n, _SOURCES.get(n, "?"), _first_line(getattr(_DEFENCES[n], "promise", "")
                                                        or (_DEFENCES[n].__doc__ or ""))) for n in defence_names()]
    out += [Listing(n, "(failed to load)", why) for n, why in _BROKEN.items()]
    return out


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")

"""Arms by name. Built-in arms register with @register_arm; third parties through the
``guardbench.arms`` entry-point group (each entry point names an Arm class)."""
from __future__ import annotations

from typing import Callable

from guardbench.errors import GuardbenchError

_ARMS: dict[str, Callable[..., object]] = {}
_loaded = False


def register_arm(name: str):
    def deco(factory):
        _ARMS[name] = factory
        factory.arm_name = name
        return factory
    return deco


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import guardbench.arms.guardrail  # noqa: F401  (registers)
    import guardbench.arms.control  # noqa: F401
    from importlib.metadata import entry_points
    for ep in entry_points(group="guardbench.arms"):
        _ARMS.setdefault(ep.name, ep.load())


def arm_names() -> list[str]:
    _load()
    return list(_ARMS)


def get_arm(name: str, **options):
    _load()
    if name not in _ARMS:
        raise GuardbenchError("--arms", f"unknown arm {name!r} (installed: {', '.join(_ARMS)})")
    return _ARMS[name](**options)

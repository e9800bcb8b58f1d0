"""Arms by name. Built-in arms register with @register_arm; third parties through the
``guardbench.arms`` entry-point group (each entry point names an Arm class). Every installed
defence (guardbench.defences, built in or from the ``guardbench.defences`` entry-point group)
also gets an arm of its own name: the PayPal toolkit tools behind that defence
(arms/defended.py)."""
from __future__ import annotations

from typing import Callable

from guardbench.errors import GuardbenchError
from guardbench.plugins import load_entry_points

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
    load_entry_points("guardbench.arms", _ARMS, {}, {}, "arm")
    _load_defence_arms()


def _load_defence_arms() -> None:
    """One arm per installed defence (built in or plug-in), named after it: toolkit tools behind it."""
    import functools

    from guardbench.defences.registry import defence_names
    defence_names()                    # built-ins and plug-ins first (listing order)
    import guardbench.arms.textcheck  # noqa: F401  (registers the prompt_filter defence)
    from guardbench.arms.defended import DefendedArm
    for name in defence_names():
        if name not in _ARMS:      # an arm of the same name wins
            factory = functools.partial(DefendedArm, defence=name)
            factory.arm_name = name  # type: ignore[attr-defined]
            _ARMS[name] = factory


# arm kinds given by a spec file: ``--arms mcp:SPEC.yaml`` (an MCP server), ``--arms app:SPEC.yaml``
# (an agent application); the arm is named by its spec's ``name``
KINDS = {"mcp": ("guardbench.arms.mcp", "McpArm"), "app": ("guardbench.arms.app", "AppArm")}


def arm_kind(entry: str) -> tuple[str, str] | None:
    kind, sep, rest = entry.partition(":")
    return (kind, rest) if sep and kind in KINDS and rest else None


def resolve_arms(entries) -> dict[str, str]:
    """``{arm name: entry}`` for ``--arms`` entries (a spec's arm takes its spec's name), in order;
    an unknown arm, a name given twice or a spec named like a built-in arm is a one-line error."""
    out: dict[str, str] = {}
    for e in entries:
        k = arm_kind(e)
        if k is None:
            if e not in arm_names():
                raise GuardbenchError("--arms", f"unknown arm {e!r} (installed: {', '.join(arm_names())}; "
                                                "or mcp:SPEC.yaml, app:SPEC.yaml)")
            name = e
        else:
            from guardbench.mcp.spec import load_spec
            name = load_spec(k[1], k[0]).name
            if name in arm_names():
                raise GuardbenchError(f"--arms {e}", f"the spec's name {name!r} is a built-in arm's; choose another")
        if name in out:
            raise GuardbenchError("--arms", f"{name} named twice; name each once")
        out[name] = e
    return out


def spec_digests(entries) -> dict[str, str]:
    """sha256 of each spec file behind the entries (a resumed run must use the same specs)."""
    from guardbench.mcp.spec import load_spec
    return {name: load_spec(k[1], k[0]).digest for name, e in resolve_arms(entries).items()
            if (k := arm_kind(e)) is not None}


def arm_names() -> list[str]:
    _load()
    return list(_ARMS)


def get_arm(name: str, **options):
    """An arm instance; options the arm does not take (e.g. approvals for the broker arm) are left out."""
    kind = arm_kind(name)
    if kind is not None:
        import importlib
        module, cls = KINDS[kind[0]]
        factory = getattr(importlib.import_module(module), cls)
        return factory(kind[1], **_accepted(factory, options))
    _load()
    if name not in _ARMS:
        raise GuardbenchError("--arms", f"unknown arm {name!r} (installed: {', '.join(_ARMS)})")
    factory = _ARMS[name]
    return factory(**_accepted(factory, options))


def _accepted(factory, options: dict) -> dict:
    import inspect
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return options
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return options
    names = {p.name for p in params}
    return {k: v for k, v in options.items() if k in names}

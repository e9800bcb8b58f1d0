"""Arms and defences by name: the one registry, for built-ins and plug-ins alike.

Every entry is a name and a ``"module:attribute"`` reference to a factory, the form an entry point
has. The built-ins are declared in :data:`BUILTIN_ARMS` and :data:`BUILTIN_DEFENCES` below; a
third-party package declares its own in its packaging metadata::

    [project.entry-points."guardbench.defences"]      # a defence: factory(config) -> Defence
    mydefence = "mypackage.defence:MyDefence"         # (guardbench/defences/base.py)

    [project.entry-points."guardbench.arms"]          # an arm: factory(**options) -> Arm
    myarm = "mypackage.arm:MyArm"                     # (guardbench/arms/base.py)

Both are read the same way, once, when a name is first asked for, and a factory's module is
imported only when that entry is used: nothing depends on what happened to be imported first, so
the lists are the same in every process. Order: built-ins in the order declared, then plug-ins in
discovery order; a plug-in cannot take a built-in's name. Every defence is also an arm of its own
name (the PayPal toolkit tools behind it, arms/defended.py) unless an arm already has that name.

A plug-in that fails to load is listed as broken (``guardbench defences``) and refused with a
one-line error when used; it never stops the built-ins or the other plug-ins. ``register`` adds a
factory in-process (tests, embedding guardbench in another program).
"""
from __future__ import annotations

import functools
import importlib
import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable

from guardbench.errors import GuardbenchError

BUILTIN_ARMS = {
    "guardrail": "guardbench.arms.guardrail:GuardrailArm",
    "control": "guardbench.arms.control:ControlArm",
    "hardened": "guardbench.arms.control:HardenedArm",
}
BUILTIN_DEFENCES = {
    "gate": "guardbench.defences.gate:Gate",
    "pdp": "guardbench.defences.pdp:PDP",
    "taint": "guardbench.defences.taint:Taint",
    "taint_fine": "guardbench.defences.taint:TaintFine",
    "prompt_filter": "guardbench.arms.textcheck:PromptFilter",
}
BUILTIN_SOURCE = "guardbench"


@dataclass
class Entry:
    name: str
    ref: str                              # "module:attribute"
    source: str                           # "guardbench", or the plug-in's "distribution version"
    factory: Callable[..., Any] | None = None
    broken: str | None = None             # why the plug-in failed to load

    def load(self, kind: str) -> Callable[..., Any]:
        if self.factory is None and self.broken is None:
            mod, _, attr = self.ref.partition(":")
            try:
                obj: Any = importlib.import_module(mod)
                for part in attr.split("."):
                    obj = getattr(obj, part)
                self.factory = obj
            except Exception as exc:  # noqa: BLE001 - a broken plug-in is reported, never fatal
                if self.source == BUILTIN_SOURCE:
                    raise
                self.broken = f"{type(exc).__name__}: {exc}"
                print(f"warning: {kind} plug-in {self.name!r} failed to load: {exc}", file=sys.stderr)
        if self.factory is None:
            raise GuardbenchError(kind, f"plug-in {self.name!r} failed to load ({self.broken})")
        return self.factory


class Registry:
    """Named factories of one kind, from a built-in table and an entry-point group."""

    def __init__(self, kind: str, group: str, builtins: dict[str, str]):
        self.kind, self.group = kind, group
        self._builtins = {n: Entry(n, ref, BUILTIN_SOURCE) for n, ref in builtins.items()}
        self._entries: dict[str, Entry] | None = None

    @property
    def entries(self) -> dict[str, Entry]:
        """Every entry: the built-ins, then the plug-ins (their metadata is read on first use)."""
        if self._entries is None:
            entries = dict(self._builtins)
            from importlib.metadata import entry_points
            for ep in entry_points(group=self.group):
                if ep.name not in entries:
                    dist = getattr(ep, "dist", None)
                    src = f"{dist.name} {dist.version}" if dist is not None else ep.value.split(":")[0]
                    entries[ep.name] = Entry(ep.name, ep.value, src)
            self._entries = entries
        return self._entries

    def find(self, name: str) -> Entry | None:
        """The entry of a name; a built-in's is found without reading any plug-in metadata."""
        if self._entries is None and name in self._builtins:
            return self._builtins[name]
        return self.entries.get(name)

    def names(self) -> list[str]:
        return list(self.entries)

    def get(self, name: str) -> Callable[..., Any]:
        entry = self.find(name)
        if entry is None:
            raise GuardbenchError(self.kind, f"unknown {self.kind} {name!r} (installed: {', '.join(self.entries)})")
        return entry.load(self.kind)

    def register(self, name: str, factory: Callable[..., Any], source: str = "registered in process") -> None:
        """Add (or replace) a factory in this process."""
        self.entries[name] = Entry(name, f"{getattr(factory, '__module__', '?')}:{name}", source, factory)


DEFENCES = Registry("defence", "guardbench.defences", BUILTIN_DEFENCES)
ARMS = Registry("arm", "guardbench.arms", BUILTIN_ARMS)


# -- defences ---------------------------------------------------------------------------------

def defence_names() -> list[str]:
    """Installed defences: the built-ins in a fixed order, then plug-ins in discovery order."""
    return DEFENCES.names()


def defence_factory(name: str) -> Callable[..., Any]:
    return DEFENCES.get(name)


def is_arm(name: str) -> bool:
    return ARMS.find(name) is not None or DEFENCES.find(name) is not None


def make_defence(name: str, config) -> Any:
    """A fresh defence (one per session: defences may keep per-session state)."""
    return DEFENCES.get(name)(config)


@dataclass(frozen=True)
class Listing:
    name: str
    source: str
    promise: str
    arm: bool = True


def listing() -> list[Listing]:
    """Every defence with its source and one-line promise (plug-ins that failed to load last)."""
    out, broken = [], []
    arms = set(arm_names())
    for n, e in DEFENCES.entries.items():
        try:
            f = e.load("defence")
        except GuardbenchError:
            broken.append(Listing(n, "(failed to load)", e.broken or "?", False))
            continue
        out.append(Listing(n, e.source, _first_line(getattr(f, "promise", "") or (f.__doc__ or "")), n in arms))
    return out + broken


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in str(text).strip().splitlines() if ln.strip()), "")


# -- arms -------------------------------------------------------------------------------------

def arm_names() -> list[str]:
    """Installed arms: built-ins, plug-ins, then one per defence that has no arm of its name."""
    names = ARMS.names()
    return names + [d for d in defence_names() if d not in names]


def arm_factory(name: str) -> Callable[..., Any]:
    if ARMS.find(name) is not None:
        return ARMS.get(name)
    if DEFENCES.find(name) is not None:
        from guardbench.arms.defended import DefendedArm
        return functools.partial(DefendedArm, defence=name)
    raise GuardbenchError("--arms", f"unknown arm {name!r} (installed: {', '.join(arm_names())})")


def get_arm(name: str, **options) -> Any:
    """An arm instance. Options an arm's factory does not take (e.g. ``approvals`` for an arm that
    holds no calls) are left out; the options passed are ``policy`` and ``approvals``."""
    factory = arm_factory(name)
    arm = factory(**_accepted(factory, options))
    if getattr(arm, "name", None) != name:
        raise GuardbenchError("--arms", f"arm {name!r}: its factory built an arm named {getattr(arm, 'name', None)!r}")
    return arm


def _accepted(factory, options: dict) -> dict:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return options
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return options
    names = {p.name for p in params}
    return {k: v for k, v in options.items() if k in names}

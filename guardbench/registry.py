"""Arms and defences by name: the one registry, for built-ins and plug-ins alike.

Every entry is a name and a ``"module:attribute"`` reference to a factory, the form an entry point
has. The built-ins are declared in :data:`BUILTIN_ARMS` and :data:`BUILTIN_DEFENCES` below; a
third-party package declares its own in its packaging metadata::

    [project.entry-points."guardbench.defences"]      # a defence: factory(config) -> Defence
    mydefence = "mypackage.defence:MyDefence"         # (guardbench/defences/base.py)

    [project.entry-points."guardbench.arms"]          # an arm: factory(ArmOptions) -> Arm
    myarm = "mypackage.arm:MyArm"                     # (guardbench/arms/base.py)

    [project.entry-points."guardbench.arm_kinds"]     # an arm kind: --arms mykind:SPEC.yaml
    # factory(ArmOptions) -> Arm (options.spec: the path)
    mykind = "mypackage.arm:MySpecArm"

Every arm factory takes one typed options object (arms/base.py's ArmOptions: the name asked for,
the policy, how held calls are answered, the spec file of a KIND:SPEC arm, the stand-in's
fixtures); an arm reads the fields it uses and leaves the others.

An arm *kind* builds an arm from a spec file (``--arms mcp:SPEC.yaml``: an MCP server, arms/mcp.py;
``--arms app:SPEC.yaml``: an agent application, arms/app.py). Its factory also has
``spec_identity(spec_path) -> (name, digest)``: the arm takes its spec's name (the run ids and
tables say it), and a resumed run must use the same spec (sha256 of the file).

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

import importlib
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from guardbench.arms.base import Arm, ArmOptions
from guardbench.errors import GuardbenchError

if TYPE_CHECKING:
    from guardbench.defences.config import DefenceConfig

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
BUILTIN_ARM_KINDS = {
    "mcp": "guardbench.arms.mcp:McpArm",
    "app": "guardbench.arms.app:AppArm",
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
                print(f"warning: {kind} plug-in {self.name!r} failed to load: {exc}",
                      file=sys.stderr)
        if self.factory is None:
            raise GuardbenchError(kind, f"plug-in {self.name!r} failed to load ({self.broken})")
        return self.factory


class Registry:
    """Named factories of one kind, from a built-in table and an entry-point group."""

    def __init__(self, kind: str, group: str, builtins: dict[str, str]) -> None:
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
                    src = (f"{dist.name} {dist.version}" if dist is not None
                           else ep.value.split(":")[0])
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
            raise GuardbenchError(self.kind, f"unknown {self.kind} {name!r} (installed: "
                                  f"{', '.join(self.entries)})")
        return entry.load(self.kind)

    def register(self, name: str, factory: Callable[..., Any],
                 source: str = "registered in process") -> None:
        """Add (or replace) a factory in this process."""
        self.entries[name] = Entry(name, f"{getattr(factory, '__module__', '?')}:{name}",
                                   source, factory)


DEFENCES = Registry("defence", "guardbench.defences", BUILTIN_DEFENCES)
ARMS = Registry("arm", "guardbench.arms", BUILTIN_ARMS)
ARM_KINDS = Registry("arm kind", "guardbench.arm_kinds", BUILTIN_ARM_KINDS)


# -- defences ---------------------------------------------------------------------------------

def defence_names() -> list[str]:
    """Installed defences: the built-ins in a fixed order, then plug-ins in discovery order."""
    return DEFENCES.names()


def defence_factory(name: str) -> Callable[..., Any]:
    return DEFENCES.get(name)


def is_arm(name: str) -> bool:
    return ARMS.find(name) is not None or DEFENCES.find(name) is not None


def make_defence(name: str, config: DefenceConfig) -> Any:
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
        out.append(Listing(n, e.source,
                           _first_line(getattr(f, "promise", "") or (f.__doc__ or "")), n in arms))
    return out + broken


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in str(text).strip().splitlines() if ln.strip()), "")


# -- arms -------------------------------------------------------------------------------------

def arm_names() -> list[str]:
    """Installed arms: built-ins, plug-ins, then one per defence that has no arm of its name."""
    names = ARMS.names()
    return names + [d for d in defence_names() if d not in names]


# the arm of every defence without one of its name
DEFENDED_ARM = "guardbench.arms.defended:DefendedArm"


def arm_factory(name: str) -> Callable[[ArmOptions], Arm]:
    """The factory of an arm's name: its own, or for a defence's name the defended arm (which reads
    the defence's name from ``options.name``)."""
    if ARMS.find(name) is not None:
        return ARMS.get(name)
    if DEFENCES.find(name) is not None:
        return Entry("defended", DEFENDED_ARM, BUILTIN_SOURCE).load("arm")
    raise GuardbenchError("--arms", f"unknown arm {name!r} (installed: {', '.join(arm_names())})")


def arm_kind(entry: str) -> tuple[str, str] | None:
    """``(kind, spec path)`` for an ``--arms`` entry of the form KIND:SPEC (None: an arm's name)."""
    kind, sep, rest = entry.partition(":")
    return (kind, rest) if sep and kind and rest and ARM_KINDS.find(kind) is not None else None


def spec_identity(kind: str, spec: str) -> tuple[str, str]:
    """(arm name, spec digest) of a KIND:SPEC entry, from its kind's factory."""
    identity = getattr(ARM_KINDS.get(kind), "spec_identity", None)
    if not callable(identity):
        raise GuardbenchError("--arms", f"arm kind {kind!r}: its factory has no "
                              "spec_identity(spec_path)")
    name, digest = identity(spec)
    return str(name), str(digest)


def resolve_arms(entries: Sequence[str]) -> dict[str, str]:
    """``{arm name: entry}`` for ``--arms`` entries, in order (a KIND:SPEC entry's arm takes its
    spec's name); an unknown arm, a name given twice or a spec named like an installed arm is a
    one-line error."""
    out: dict[str, str] = {}
    for e in entries:
        k = arm_kind(e)
        if k is None:
            if not is_arm(e):
                kinds = ", ".join(k + ":SPEC.yaml" for k in ARM_KINDS.names())
                raise GuardbenchError("--arms", f"unknown arm {e!r} (installed: "
                                      f"{', '.join(arm_names())}; or {kinds})")
            name = e
        else:
            name = spec_identity(*k)[0]
            if is_arm(name):
                raise GuardbenchError(f"--arms {e}", f"the spec's name {name!r} is an installed "
                                      "arm's; choose another")
        if name in out:
            raise GuardbenchError("--arms", f"{name} named twice; name each once")
        out[name] = e
    return out


def spec_digests(named: Mapping[str, str]) -> dict[str, str]:
    """sha256 of the spec file behind each KIND:SPEC arm of ``{name: entry}`` (a resumed run must
    use the same specs)."""
    return {name: spec_identity(*k)[1] for name, e in named.items()
            if (k := arm_kind(e)) is not None}


def get_arm(name: str, options: ArmOptions | None = None) -> Arm:
    """An arm instance, by its name or a KIND:SPEC entry: its factory gets ``options`` with the name
    asked for (and a KIND:SPEC entry's spec path) filled in."""
    options = options or ArmOptions()
    kind = arm_kind(name)
    if kind is not None:
        factory = ARM_KINDS.get(kind[0])
        want = spec_identity(*kind)[0]
        arm = factory(replace(options, name=want, spec=kind[1]))
    else:
        factory, want = arm_factory(name), name
        arm = factory(replace(options, name=name))
    if not isinstance(arm, Arm):
        raise GuardbenchError("--arms", f"arm {want!r}: its factory built a "
                              f"{type(arm).__name__}, not an Arm "
                                        "(guardbench.arms.base.Arm)")
    if arm.name != want:
        raise GuardbenchError("--arms", f"arm {want!r}: its factory built an arm named "
                              f"{arm.name!r}")
    return arm

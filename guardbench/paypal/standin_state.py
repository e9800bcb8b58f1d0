"""A stand-in's state, copied cheaply: what ``PayPalStandIn.snapshot`` keeps and ``restored`` brings
back.

The runner builds a case's world once per arm and gives each run a copy (execution/world.py); a
``deepcopy`` of a stand-in costs milliseconds (its compiled documents come along), so only the state
is copied, as one pickle: the snapshot holds its bytes, and every copy unpickles them (C code: about
half the cost of a copy made level by level in Python), so no copy shares a mutable value with
another or with the snapshot. The pinned documents (``_catalogue``) are shared, as every fresh
stand-in of the process shares them; what a request was being answered with (``_op``, ``_checked``)
is not state and starts empty.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

SHARED = frozenset({"_catalogue"})          # read-only and shared by every stand-in of the process
TRANSIENT = {"_op": None, "_checked": None}  # what the request being answered set: not state


@dataclass(frozen=True)
class Snapshot:
    """A stand-in's state at one moment: what is shared, and the rest as pickled bytes."""

    shared: dict[str, Any]
    state: bytes

    def view(self) -> dict[str, Any]:
        """A copy of the state (every attribute but the shared ones), to read."""
        out: dict[str, Any] = pickle.loads(self.state)
        return out


def snapshot(attrs: dict[str, Any]) -> Snapshot:
    """A stand-in's ``vars()`` as a state no later request to that stand-in can alter."""
    state = {k: v for k, v in attrs.items() if k not in SHARED and k not in TRANSIENT}
    return Snapshot({k: attrs[k] for k in SHARED if k in attrs},
                    pickle.dumps(state, pickle.HIGHEST_PROTOCOL))


def restore(snap: Snapshot) -> dict[str, Any]:
    """The attributes of a stand-in whose state is a copy of ``snap`` (which stays as it was)."""
    out = snap.view()
    out.update(snap.shared)
    out.update(TRANSIENT)
    return out

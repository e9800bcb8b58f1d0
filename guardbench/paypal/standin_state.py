"""A stand-in's state, copied cheaply: what ``PayPalStandIn.snapshot`` keeps and ``restored`` brings back.

The runner builds a case's world once per arm and gives each run a copy (execution/world.py); a
``deepcopy`` of a stand-in costs milliseconds (its compiled documents come along), so only the state
is copied: every dict, list and set of records is copied, level by level, and immutable values
(str, int, Decimal, frozen records such as a replayed ``WireResponse``) are shared. The pinned
documents (``_catalogue``) are shared, as every fresh stand-in of the process shares them; what a
request was being answered with (``_op``, ``_checked``) is not state and starts empty.
"""
from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from guardbench.records.record import WireResponse

SHARED = frozenset({"_catalogue"})          # read-only and shared by every stand-in of the process
TRANSIENT = {"_op": None, "_checked": None}  # what the request being answered set: not state
_ATOMS = frozenset({str, int, float, bool, type(None), Decimal, bytes, frozenset, WireResponse})


def copy_state(value: Any) -> Any:
    """``value`` with every container copied and every immutable value shared (anything else that is
    not a plain container is deep-copied: nothing mutable is ever shared between two copies)."""
    t = type(value)
    if t in _ATOMS:
        return value
    if t is dict:
        return {k: v if type(v) in _ATOMS else copy_state(v) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _ATOMS else copy_state(v) for v in value]
    if t is set:
        return set(value)                    # members are hashable, hence immutable here
    if t is tuple:
        return tuple(v if type(v) in _ATOMS else copy_state(v) for v in value)
    return copy.deepcopy(value)


def snapshot(attrs: dict[str, Any]) -> dict[str, Any]:
    """A stand-in's ``vars()`` as a state no later request to that stand-in can alter."""
    return {k: v if k in SHARED else copy_state(v) for k, v in attrs.items() if k not in TRANSIENT}


def restore(state: dict[str, Any]) -> dict[str, Any]:
    """The attributes of a stand-in whose state is a copy of ``state`` (which stays as it was)."""
    out = {k: v if k in SHARED else copy_state(v) for k, v in state.items()}
    out.update(TRANSIENT)
    return out

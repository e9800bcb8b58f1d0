"""Checks of one field of a JSON record read from a file (used by records.RunRecord.from_dict).

Each raises ``Bad(field, what)``, which the caller turns into a GuardbenchError naming the file,
the line and the field. Nothing here imports anything from guardbench but the record types it builds (when called).
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from guardbench.records.record import Attempt, Incident, Transcript, WireExchange


class Bad(Exception):
    """(field, what is wrong): turned into a GuardbenchError naming the record's file and line."""


_NAMES = {str: "a string", list: "a list", dict: "an object", bool: "true or false"}
_NONE: Any = object()


def typed(d: Mapping, key: str, kind: type, default: Any = _NONE) -> Any:
    v = d.get(key, default)
    if v is _NONE or (v is not None and not isinstance(v, kind)) or (v is None and default is _NONE):
        raise Bad(key, f"must be {_NAMES[kind]}, not {v!r}"[:160])
    return v


def count(d: Mapping, key: str, default: Any = _NONE, signed: bool = False) -> Any:
    v = d.get(key, default)
    if v is None and default is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or (v < 0 and not signed):
        raise Bad(key, f"must be a whole number{'' if signed else ' >= 0'}, not {v!r}"[:160])
    return v


def flag(d: Mapping, key: str) -> bool | None:
    v = d[key]
    if v is not None and not isinstance(v, bool):
        raise Bad(key, f"must be true, false or null, not {v!r}"[:160])
    return v


def number(d: Mapping, key: str) -> float | None:
    v = d.get(key)
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
        raise Bad(key, f"must be a number, not {v!r}"[:160])
    return v


def decimal(v: Any, key: str, what: str) -> Decimal:
    try:
        x = Decimal(v) if isinstance(v, str) else None
    except InvalidOperation:
        x = None
    if x is None or not x.is_finite():
        raise Bad(key, f"{what} {v!r} is not a decimal string"[:160])
    return x


def money(d: Mapping, key: str) -> dict[str, Decimal]:
    """``{currency: decimal string}``; the earlier single-amount shape reads as {} when zero (nothing at
    risk is nothing in any currency) and is refused otherwise (its currency is unknown)."""
    v = d[key]
    if isinstance(v, str):
        if decimal(v, key, "amount") == 0:
            return {}
        raise Bad(key, f"{v!r} is a single amount (the shape before money was kept per currency); "
                        "regenerate this run")
    if not isinstance(v, dict):
        raise Bad(key, f"must be an object of currency: decimal string, not {v!r}"[:160])
    return {c: decimal(a, key, f"{c!r}:") for c, a in v.items()}


# -- the typed parts of a run record (imported here when called: records.py imports this module)

def incident(x: Any, i: int) -> Incident:
    from guardbench.records.record import Incident
    if not isinstance(x, dict) or not isinstance(x.get("kind"), str) or not isinstance(x.get("seq"), int):
        raise Bad("incidents", f"item {i} is not an incident (kind, seq, detail, amount, currency)")
    try:
        return Incident(**x)
    except TypeError as exc:
        raise Bad("incidents", f"item {i}: {exc}") from None


def attempt(x: Any, i: int) -> Attempt:
    from guardbench.records.record import Attempt
    try:
        return Attempt(**x)
    except TypeError:
        raise Bad("attempts", f"item {i} is not an attempt (defence, tool, status, reason)") from None


def exchange(x: Any, i: int) -> WireExchange:
    from guardbench.records.record import WireExchange
    try:
        return WireExchange.from_dict(x)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise Bad("wire", f"exchange {i} is not a recorded exchange ({type(exc).__name__}: {exc})"[:200]) from None


def transcript(t: Any, slim: bool) -> Transcript:
    from guardbench.records.record import Step, Transcript
    if t is None:
        return Transcript((), "")
    if not isinstance(t, dict):
        raise Bad("transcript", f"must be an object, not {t!r}"[:160])
    usage: dict = t["usage"] if isinstance(t.get("usage"), dict) else {}
    if slim:
        return Transcript((), "", str(t.get("status") or ""), t.get("error"), usage)
    try:
        steps = tuple(Step(s["tool"], s.get("args") or {}, s.get("result", "")) for s in t.get("steps") or ())
    except (KeyError, TypeError, AttributeError):
        raise Bad("transcript", "a step is not {tool, args, result}") from None
    return Transcript(steps, str(t.get("final") or ""), str(t.get("status") or ""), t.get("error"), usage)

"""Checks of one field of a JSON record read from a file (used by records.RunRecord.from_dict).

Each raises ``Bad(field, what)``, which the caller turns into a GuardbenchError naming the file,
the line and the field. Nothing here imports anything from guardbench.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Mapping


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

"""Strict decimal money: what the broker accepts as an amount, and how it writes one.

An amount is a string like "12.50" (or a Python int). Never a float, a bool, NaN,
infinity, an exponent, a sign other than a leading minus, leading zeros, more than two
decimals, or anything that is not ASCII digits. Parsing never rounds.
"""
from __future__ import annotations

import re
from decimal import Decimal

from guardbench.errors import Refusal

CENT = Decimal("0.01")
_DEC_RE = re.compile(r"-?(?:0|[1-9][0-9]{0,11})(?:\.[0-9]{1,2})?")
_MAX_INT = 10 ** 12


class MoneyError(Refusal, ValueError):
    """Not a decimal amount under the strict rules; the message says which rule."""


def parse_decimal(value: object) -> Decimal:
    """``value`` as a Decimal, or MoneyError. Accepts str and int only."""
    if isinstance(value, bool):
        raise MoneyError("a boolean is not an amount")
    if isinstance(value, int):
        if abs(value) >= _MAX_INT:
            raise MoneyError("amount too large")
        return Decimal(value)
    if isinstance(value, str):
        if len(value) > 20 or not _DEC_RE.fullmatch(value):
            raise MoneyError("write amounts as decimal strings like \"12.50\" (at most 2 decimals)")
        return Decimal(value)
    if isinstance(value, float):
        raise MoneyError("a float is not an amount; write it as a string like \"12.50\"")
    raise MoneyError(f"a {type(value).__name__} is not an amount")


def fmt(amount: Decimal) -> str:
    """Two-decimal string, e.g. Decimal("5") -> "5.00"."""
    return f"{amount.quantize(CENT):f}"


def is_money_string(text: object) -> bool:
    return isinstance(text, str) and bool(_DEC_RE.fullmatch(text)) and not text.startswith("-")


def read_number(value: object) -> Decimal | None:
    """A lenient reading of a number someone else wrote (a request on the wire, a tool argument):
    any finite decimal, whatever its form, else None. Never use it to accept an amount."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        d = Decimal(str(value).strip())
    except (ArithmeticError, ValueError):
        return None
    return d if d.is_finite() else None

"""Is a value read from a user (a YAML field, a library caller's option) the number it should be?

``bool`` is an ``int`` to Python, and ``nan`` a float every comparison with is false, so a bound
checked after ``isinstance(v, (int, float))`` alone lets ``true`` and ``nan`` through.
"""
from __future__ import annotations

import math


def finite_number(v: object) -> bool:
    """An int or a float, finite, not a bool."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def whole_number(v: object) -> bool:
    """An int, not a bool."""
    return isinstance(v, int) and not isinstance(v, bool)

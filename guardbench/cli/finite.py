"""A number option that is a number: every float option of the command line is declared with it.

click's ``float`` reads ``nan``, ``inf`` and ``1e999`` (Python's ``float`` does), and its
``FloatRange`` lets ``nan`` through whatever its bounds, since every comparison with nan is false:
``--temperature nan`` started 1,650 model runs, ``--timeout nan`` a client that never times out.
``Finite`` refuses them with click's error (one line naming the option, exit status 2; cli/main.py),
then checks its bounds as ``FloatRange`` does.
"""
from __future__ import annotations

import math
from typing import Any

import click


class Finite(click.FloatRange):
    """``Finite(min=None, max=None, min_open=False, max_open=False)``: a float that is finite and
    within the bounds given (none: any finite float)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)

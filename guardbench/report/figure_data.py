"""What the figures show, read from the Table objects of report/tables.py (never from other
sums): the clustered Rate behind a cell and its complement, k/n labels, percentages with their
interval, the headline rows and the per-(run, group) panels of a table with a column per arm.
How they are drawn: report/figure_style.py; the figures: report/figures.py.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

from guardbench.records.record import RunRecord
from guardbench.report import tables as T
from guardbench.report.frame import RunData
from guardbench.report.layout import VALUES
from guardbench.stats.rates import Rate

_KN = re.compile(r"^\s*(\d+)/(\d+)")


def kn(cell: object) -> tuple[int, int] | None:
    """(k, n) of a table cell "k/n (p%, lo-hi%; c cases)"; None for an empty sample or "-"."""
    m = _KN.match(str(cell))
    if not m:
        return None
    k, n = int(m.group(1)), int(m.group(2))
    return (k, n) if n else None


def rate_of(row: Mapping[str, Any], column: str) -> Rate | None:
    """The clustered Rate behind a table cell (None for an empty sample)."""
    r = (row.get(VALUES) or {}).get(column)
    return r if r is not None and r.n else None


def complement(r: Rate | None) -> Rate | None:
    """The Rate of the other outcome (attack success from attacks blocked): same n, cases and
    interval width."""
    return None if r is None else type(r)(r.n - r.k, r.n, 1.0 - r.hi, 1.0 - r.lo, r.cases, r.deff)


def kn_text(r: Rate | None) -> str:
    """A Rate as "k/n, c cases" (for the forest plot's right-hand labels)."""
    return "n/a" if r is None else f"{r.k}/{r.n}, {r.cases} cases"


def find_table(tables: Sequence[T.Table], prefix: str,
               fallback: Callable[[Sequence[RunRecord]], T.Table],
               records: Sequence[RunRecord]) -> T.Table:
    """The run's table whose title starts with ``prefix``; else ``fallback`` computes it."""
    for t in tables:
        if t.title.startswith(prefix):
            return t
    return fallback(records)


def pct_err(r: Rate) -> tuple[float, float, float]:
    """A Rate's point and its interval's distances below and above it, in percent."""
    p = r.k / r.n
    return 100 * p, 100 * max(0.0, p - r.lo), 100 * max(0.0, r.hi - p)


def headline_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """One entry per (run, group, arm) row of each run's headline table."""
    out = []
    for run in runs:
        t = find_table(run.tables, "Headline per arm", T.headline, run.records)
        for r in t.rows:
            blocked = rate_of(r, "attacks blocked")
            out.append({"run": run.label, "group": r["group"], "arm": r["arm"],
                        "success": complement(blocked),
                        "blocked": blocked, "incident": rate_of(r, "runs with an incident"),
                        "benign": rate_of(r, "benign completed")})
    return out


Panel = tuple[str, str, list[str], list[dict[str, Any]]]


def arm_panels(runs: Sequence[RunData], prefix: str,
               fallback: Callable[[Sequence[RunRecord]], T.Table], key: str) -> list[Panel]:
    """(run label, group label, rows) per (run, group) of a per-arm-column table."""
    out = []
    for run in runs:
        t = find_table(run.tables, prefix, fallback, run.records)
        arms = [c for c in t.columns if c not in ("group", key)]
        groups: dict[str, list[dict]] = {}
        for r in t.rows:
            groups.setdefault(r["group"], []).append(r)
        for g, rows in groups.items():
            out.append((run.label, g, arms, rows))
    return out

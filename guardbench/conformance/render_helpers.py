"""Plain-text grids and Markdown tables for the conformance reports (render.py, render_run.py)."""
from __future__ import annotations

from typing import Any, Sequence


def ratio_text(pair: Sequence[int] | None) -> str:
    """``k/n`` for a pair, ``-`` for none."""
    return "-" if not pair else f"{pair[0]}/{pair[1]}"


def pct_text(x: float | None) -> str:
    """A share as a percentage with one decimal, ``-`` for none."""
    return "-" if x is None else f"{100 * x:.1f}%"


def grid(header: list[str], rows: list[list], indent: str = "") -> list[str]:
    """A plain-text grid: the first column left-aligned, the others right-aligned, a rule under the header."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for j, r in enumerate(cells):
        pairs = enumerate(zip(r, widths, strict=False))
        out.append(indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs))
        if j == 0:
            out.append(indent + "  ".join("-" * w for w in widths))
    return out


def md_cell(x: Any) -> str:
    """A value as one Markdown table cell (pipes escaped, newlines flattened)."""
    return str(x).replace("|", "\\|").replace("\n", " ")


def md_table(header: list[str], rows: list[list]) -> list[str]:
    """A Markdown table's lines."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return out

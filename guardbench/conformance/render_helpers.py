"""Plain-text grids and Markdown tables for the conformance reports."""
from __future__ import annotations


def _n(pair) -> str:
    return "-" if not pair else f"{pair[0]}/{pair[1]}"


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _grid(header: list[str], rows: list[list], indent: str = "") -> list[str]:
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for j, r in enumerate(cells):
        pairs = enumerate(zip(r, widths, strict=False))
        out.append(indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs))
        if j == 0:
            out.append(indent + "  ".join("-" * w for w in widths))
    return out


def _md_cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return out

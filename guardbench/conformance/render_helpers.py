"""Plain-text grids and Markdown tables for the conformance reports."""
from __future__ import annotations

import textwrap
from typing import Any, Sequence

WIDTH = 100          # a terminal's columns: every line of the text reports fits


def ratio_text(pair: Sequence[int] | None) -> str:
    """``k/n`` for a pair, ``-`` for none."""
    return "-" if not pair else f"{pair[0]}/{pair[1]}"


def pct_text(x: float | None) -> str:
    """A share as a percentage with one decimal, ``-`` for none."""
    return "-" if x is None else f"{100 * x:.1f}%"


def grid(header: list[str], rows: list[list], indent: str = "", width: int = WIDTH) -> list[str]:
    """A plain-text grid within ``width`` columns: headings wrap onto more lines when the grid is
    too wide, and a grid still too wide splits into blocks of columns, each repeating the first."""
    cells = [[str(c) for c in r] for r in rows]
    data = [max([len(r[i]) for r in cells], default=0) for i in range(len(header))]
    widths = [max(d, len(h)) for d, h in zip(data, header, strict=True)]
    # headings wrap to their data
    if len(indent) + sum(widths) + 2 * (len(widths) - 1) > width:
        widths = [max(d, max((len(w) for w in h.split()), default=0))
                  for d, h in zip(data, header, strict=True)]
    blocks: list[list[int]] = []
    for i in range(1, len(header)):
        if (blocks and len(indent) + sum(widths[j] + 2 for j in [0] + blocks[-1])
            + widths[i] <= width):
            blocks[-1].append(i)
        else:
            blocks.append([i])
    out: list[str] = []
    for b, block in enumerate(blocks or [[]]):
        cols = [0] + block if header else []
        if b:
            out.append("")
        heads = [textwrap.wrap(header[i], widths[i]) or [""] for i in cols]
        for k in range(max((len(h) for h in heads), default=0)):
            out.append(indent + "  ".join(_cell(h[k] if k < len(h) else "", widths[i], i)
                                          for h, i in zip(heads, cols,
                                                                                                     strict=True)))
        out.append(indent + "  ".join("-" * widths[i] for i in cols))
        out += [indent + "  ".join(_cell(r[i], widths[i], i) for i in cols) for r in cells]
    return [line.rstrip() for line in out]


def _cell(text: str, width: int, i: int) -> str:
    return text.ljust(width) if i == 0 else text.rjust(width)


def fit_lines(lines: list[str], width: int = WIDTH) -> list[str]:
    """Lines wrapped to ``width`` columns, each continuation four columns right of its line's
    indent."""
    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip()))
        out += textwrap.wrap(line, width, initial_indent="", subsequent_indent=lead + "    ",
                             break_long_words=False, break_on_hyphens=False) or [line]
    return out


def md_cell(x: Any) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def md_table(header: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return out

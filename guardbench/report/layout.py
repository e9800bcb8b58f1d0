"""One result table and its renderings: Markdown and CSV with every column, text for a terminal.

``Table.text()`` fits a 100-column terminal: a ``group`` column with one value moves into the
title; a table still wider than that has its long cells and headings wrapped and its columns
split into blocks that each repeat the row's key columns (group, arm, family, ...). Markdown and CSV
keep the full columns and cells unchanged.
"""
from __future__ import annotations

import csv
import io
import textwrap
from dataclasses import dataclass, field

WIDTH = 100
CELL_WIDTH = 40          # a longer cell wraps onto more lines
KEY_COLUMNS = ("group", "arm", "family", "class", "arm A", "arm B", "outcome",
               "measure", "currency")
# a row's structured values behind its cells (Rate, Paired), for figures; not rendered
VALUES = "_values"


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[dict] = field(default_factory=list)
    note: str = ""

    def markdown(self) -> str:
        out = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |",
               "|" + "|".join("---" for _ in self.columns) + "|"]
        out += ["| " + " | ".join(str(r.get(c, "")) for c in self.columns) + " |"
                for r in self.rows]
        if self.note:
            out += ["", self.note]
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(self.rows)
        return buf.getvalue()

    def text(self, width: int = WIDTH) -> str:
        cols, title = list(self.columns), self.title
        groups = {str(r.get("group", "")) for r in self.rows}
        if "group" in cols and len(groups) == 1:
            title += f" [{groups.pop()}]"
            cols.remove("group")
        keys = []
        for c in cols:
            if c not in KEY_COLUMNS:
                break
            keys.append(c)
        full = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in self.rows]) for c in cols}
        if sum(full.values()) + 2 * (len(cols) - 1) <= width:        # fits as it is: nothing wraps
            cells = [{c: [str(r.get(c, ""))] for c in cols} for r in self.rows]
            widths = full
        else:
            cells = [{c: _wrap(str(r.get(c, "")), CELL_WIDTH) for c in cols} for r in self.rows]
            widths = {c: _width(c, max([max((len(x) for x in row[c]), default=0)
                                        for row in cells], default=0))
                      for c in cols}
        out = textwrap.wrap(title, width) or [""]
        out.append("=" * min(width, max(len(x) for x in out)))
        rest = [c for c in cols if c not in keys] or []
        key_w = sum(widths[k] + 2 for k in keys)
        blocks: list[list[str]] = []
        for c in rest:
            if blocks and key_w + sum(widths[x] + 2 for x in blocks[-1]) + widths[c] <= width:
                blocks[-1].append(c)
            else:
                blocks.append([c])
        for i, block in enumerate(blocks or [[]]):
            if i:
                out.append("")
            shown = keys + block
            w = dict(widths)
            # a lone column still too wide for its block: wrap it narrower
            for c in block:
                w[c] = min(w[c], max(8, width - key_w))
            out += _render(shown, w, cells)
        if self.note:
            out += textwrap.wrap(self.note, width)
        return "\n".join(line.rstrip() for line in out) + "\n"


def _width(heading: str, cells: int) -> int:
    """A column's width: its widest cell, widened (up to 20) until the heading takes at most two
    lines."""
    w = max(cells, max((len(x) for x in heading.split()), default=0))
    while w < min(len(heading), 20) and len(textwrap.wrap(heading, w)) > 2:
        w += 1
    return w


def _wrap(s: str, width: int) -> list[str]:
    if len(s) <= width:
        return [s]
    return textwrap.wrap(s, width, break_long_words=True, break_on_hyphens=False) or [""]


def _render(cols: list[str], widths: dict[str, int], cells: list[dict]) -> list[str]:
    heads = {c: textwrap.wrap(c, widths[c], break_long_words=True) or [""] for c in cols}
    out = []
    for i in range(max((len(h) for h in heads.values()), default=1)):
        out.append("  ".join((heads[c][i] if i < len(heads[c]) else "").ljust(widths[c])
                             for c in cols))
    out.append("  ".join("-" * widths[c] for c in cols))
    for row in cells:
        lines = {c: row[c] if max(len(x) for x in row[c]) <= widths[c]
                 else _wrap(" ".join(row[c]), widths[c])
                 for c in cols}
        for i in range(max(len(v) for v in lines.values()) if cols else 0):
            out.append("  ".join((lines[c][i] if i < len(lines[c]) else "").ljust(widths[c])
                                 for c in cols))
    return out

"""What `guardbench run` prints at the end on a terminal: a summary, not every table.

The headline table, the comparison that matters (each arm against the control arm, paired by case,
variant and repeat; without a control arm, the pairwise comparisons of attack success) in its key
columns, and where the rest is: ``guardbench table RUN`` prints every table, and the run folder
holds them as tables.md and one CSV each. Every line fits 100 columns (``Table.text``).
"""
from __future__ import annotations

import shlex
import textwrap
from pathlib import Path
from typing import Sequence

from guardbench.report.layout import WIDTH, Table

HEADLINE = "Headline per arm"
# (title of the full table, the columns kept, the summary's title, its note)
COMPARISONS = (
    ("Paired tests against control",
     ["group", "arm", "outcome", "pairs", "paired diff arm-control (95% CI by case)",
      "case-level p (BH)"],
     "Each arm against control (paired)",
     "Pairs: the same case, variant and repeat in both arms. Paired diff: the arm's rate "
     "minus control's, "
     "95% CI clustered by case; p: the case-level sign-flip test, Benjamini-Hochberg adjusted."),
    ("Pairwise arm comparisons on attack success",
     ["group", "arm A", "arm B", "pairs", "paired diff A-B (95% CI by case)", "case-level p (BH)"],
     "Attack success, arm against arm (paired)",
     "Pairs: the same case, variant and repeat in both arms. Paired diff: A's attack "
     "success minus B's, "
     "95% CI clustered by case; p: the case-level sign-flip test, Benjamini-Hochberg adjusted."),
)


def comparison(tables: Sequence[Table]) -> Table | None:
    """The comparison that matters, in its key columns (None: the run has no pair of arms to
    compare)."""
    by_title = {t.title: t for t in tables}
    for title, keep, short, note in COMPARISONS:
        full = by_title.get(title)
        if full is None or not full.rows:
            continue
        cols = [c for c in keep if c in full.columns]
        return Table(short, cols, [{c: r.get(c, "") for c in cols} for r in full.rows], note)
    return None


def terminal_summary(tables: Sequence[Table], out: Path | str | None) -> str:
    """The headline table, the comparison that matters, and where every other table is."""
    if not tables:
        return ""
    head = next((t for t in tables if t.title == HEADLINE), tables[0])
    parts = [head.text()]
    cmp = comparison(tables)
    if cmp is not None:
        parts.append(cmp.text())
    rest = [t.title for t in tables if t is not head and (cmp is None or t.title != _source(cmp))]
    lines = [f"{len(tables)} tables in all; every one, with its method note:",
             f"  guardbench table {shlex.quote(str(out)) if out is not None else 'RUN'}"]
    more = (f"They are also in {Path(out) / 'tables.md'} and one CSV each. "
            if out is not None else "") + \
        ("Not shown above: " + "; ".join(_short(t) for t in rest) + "." if rest else "")
    lines += textwrap.wrap(more, WIDTH, break_long_words=False, break_on_hyphens=False)
    parts.append("\n".join(lines))
    return "\n".join(parts)


def _short(title: str) -> str:
    """A table's title without its parenthesis or its part after a colon."""
    return title.split(" (")[0].split(":")[0]


def _source(cmp: Table) -> str:
    return next(title for title, _keep, short, _note in COMPARISONS if short == cmp.title)

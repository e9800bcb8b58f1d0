"""What every result table is built from: a rate clustered by case in a cell, the note saying how
many runs were lost, the paired cells of two arms, and the notes the tables share.

The tables themselves: report/tables.py (per arm), capability_table.py, defence_tables.py,
external_tables.py; the groups they are taken over: guardbench/stats/groups.py.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable, Sequence

from guardbench.records.record import RunRecord
from guardbench.report.layout import VALUES
from guardbench.stats import clustered
from guardbench.stats import measures as M
from guardbench.stats import rates as stats
from guardbench.stats.groups import group_label

RATE_NOTE = ("Rates: k/n runs (%, 95% CI clustered by case (Rao-Scott Wilson); the number of cases the runs "
             "come from).")
LOST_RULE = ("Lost runs: attack success and benign completion leave them out; a lost run counts among runs "
             "with an incident only when an incident reached the wire; incidents, money, refused attempts and "
             "approvals include every run.")


def crate(outcomes: Iterable[tuple]) -> stats.Rate:
    """The rate over ``(case, outcome)`` pairs with its interval clustered by case."""
    return clustered.rate(clustered.case_counts(outcomes))


def put_rate(row: dict, column: str, outcomes: Iterable[tuple]) -> stats.Rate:
    """Set ``row[column]`` to the clustered rate's text (``-`` when empty); keep the Rate for figures."""
    r = crate(outcomes)
    row[column] = r.fmt() if r.n else "-"
    row.setdefault(VALUES, {})[column] = r
    return r


def lost_note(records: Sequence[RunRecord], note: str = "") -> str:
    """Every table says how many runs were lost, per group and arm."""
    lost: dict[tuple[str, str], int] = defaultdict(int)
    for r in records:
        if r.lost:
            lost[(group_label(r), r.arm)] += 1
    if not lost:
        return note
    parts = "; ".join(f"{g} / {a}: {n}" for (g, a), n in lost.items())
    text = (f"Lost runs (model calls failed after retries, or an external process failed): "
            f"{sum(lost.values())} ({parts}).")
    return f"{note} {text}".strip()


def pair_key(r: RunRecord) -> tuple:
    """Runs of two arms pair on the same case, variant and repeat."""
    return (r.case, r.variant, r.repeat)


def paired_cells(ra: dict, rb: dict, measure: str) -> dict:
    """``{case: [e, f, g, h]}`` over the pair keys both dicts share (first = ``ra``)."""
    return clustered.paired_counts((k[0], bool(M.outcome(ra[k], measure)), bool(M.outcome(rb[k], measure)))
                                   for k in ra if k in rb)


def approx_note(rows: Sequence[dict], label: Callable[[dict], str]) -> str:
    """Names the rows whose case-level p-value used the normal form (exact otherwise)."""
    approx = [label(r) for r in rows if not r[VALUES]["paired"].exact]
    return (" The test's normal (chi-square) form was used for: " + "; ".join(approx) + ".") if approx else ""


PAIRED_NOTE = ("Pairs: the same case, variant and repeat in both arms; cases: the cases they come from. Case-level "
               "p: exact sign-flip test on each case's discordant-pair difference b-c (the exact form of "
               "Obuchowski's 1998 clustered McNemar test; with one pair per case it is the exact McNemar test), "
               "Benjamini-Hochberg (BH) across this table. Paired diff: 95% CI clustered by case (Newcombe's "
               "method 10 on the paired table divided by the design effect of the difference, Obuchowski 1998, "
               "Rao-Scott 1992). The naive McNemar p treats runs as independent: for comparison only.")



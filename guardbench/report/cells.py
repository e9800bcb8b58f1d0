"""What every result table is built from: a rate clustered by case in a cell, the note saying how
many runs were lost or unmeasured, the paired cells of two arms, and the notes the tables share.

The tables themselves: report/tables.py (per arm), capability_table.py, usage_table.py,
defence_tables.py, external_tables.py, scenario_table.py; the groups they are taken over:
guardbench/stats/groups.py.
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

RATE_NOTE = ("Rates: k/n runs (%, 95% CI clustered by case (Rao-Scott Wilson); the number of "
             "cases the runs "
             "come from).")
LOST_RULE = ("Lost runs: attack success and benign completion leave them out; a lost run "
             "counts among runs "
             "with an incident only when an incident reached the wire; incidents, money, refused "
             "attempts and "
             "approvals include every run.")


def crate(outcomes: Iterable[tuple]) -> stats.Rate:
    """The rate over ``(case, outcome)`` pairs with its interval clustered by case."""
    return clustered.rate(clustered.case_counts(outcomes))


def put_rate(row: dict, column: str, outcomes: Iterable[tuple]) -> stats.Rate:
    """Set ``row[column]`` to the clustered rate's text (``-`` when empty); keep the Rate for
    figures."""
    return show_rate(row, column, crate(outcomes))


def show_rate(row: dict, column: str, r: stats.Rate) -> stats.Rate:
    """:func:`put_rate` of a rate already computed."""
    row[column] = r.fmt() if r.n else "-"
    row.setdefault(VALUES, {})[column] = r
    return r



def lost_note(records: Sequence[RunRecord], note: str = "") -> str:
    """Every table says how many runs were lost, and how many were unmeasured, per group and arm."""
    return with_texts(note, lost_texts(records))


def with_texts(note: str, texts: str) -> str:
    """``note`` followed by ``texts`` (lost_texts' counts), when there are any."""
    return f"{note} {texts}".strip() if texts else note


def lost_texts(records: Sequence[RunRecord]) -> str:
    """What :func:`lost_note` adds to a note ('' when no run was lost or unmeasured)."""
    texts: list[str] = []
    # (group, arm) -> runs, per status, in one pass
    counts: dict[str, dict[tuple[str, str], int]] = {"lost": defaultdict(int),
                                                     "unmeasured": defaultdict(int)}
    for r in records:
        n = counts.get(r.status)
        if n is not None:
            n[(group_label(r), r.arm)] += 1
    for status, what in (("lost", "Lost runs (model calls failed after retries, or an external "
                          "process failed)"),
                         ("unmeasured", "Unmeasured attack runs (the system sent traffic its "
                          "room could not "
                                        "capture, and the attack's goal was not seen on the wire: "
                                        "never counted "
                                        "as blocked)")):
        n = counts[status]
        if n:
            parts = "; ".join(f"{g} / {a}: {k}" for (g, a), k in n.items())
            texts.append(f"{what}: {sum(n.values())} ({parts}).")
    return " ".join(texts)


def unmeasured(rs: Iterable[RunRecord]) -> str:
    """How many of these runs were unmeasured (a cell's text)."""
    return str(sum(1 for r in rs if r.status == "unmeasured"))



def pair_key(r: RunRecord) -> tuple:
    """Runs of two arms pair on the same case, variant and repeat."""
    return (r.case, r.variant, r.repeat)


def paired_cells(ra: dict, rb: dict, measure: str) -> dict:
    """``{case: [e, f, g, h]}`` over the pair keys both dicts share (first = ``ra``)."""
    get = M.outcome_of(measure)
    return clustered.paired_counts((k[0], bool(get(ra[k])), bool(get(rb[k])))
                                   for k in ra if k in rb)


def outcome_cells(oa: dict, ob: dict) -> dict:
    """:func:`paired_cells` of outcomes already taken: ``{pair key: outcome}`` of each arm (their
    pairable runs, M.paired_outcomes)."""
    return clustered.paired_counts((k[0], hit, ob[k]) for k, hit in oa.items() if k in ob)


def approx_note(rows: Sequence[dict], label: Callable[[dict], str]) -> str:
    """Names the rows whose case-level p-value used the normal form (exact otherwise)."""
    approx = [label(r) for r in rows if not r[VALUES]["paired"].exact]
    return (" The test's normal (chi-square) form was used for: " + "; ".join(approx)
            + ".") if approx else ""


MIDP_COLUMN = f"case-level mid-p (<= {clustered.MIDP_MAX_CASES} cases)"
MIDP_NOTE = (f"Mid-p (comparisons of at most {clustered.MIDP_MAX_CASES} cases; '-' above): "
             "Lancaster's (1961) mid-p "
             "of the same sign-flip test, which counts half the probability of the observed "
             "total; with few cases "
             "the exact test rejects far less often than its level (size under 0.01 with 12 "
             "correlated cases, "
             "docs/statistics.md), the mid-p closer to it; not BH-adjusted.")


def midp_cell(pr: clustered.Paired) -> str:
    """The mid-p where the comparison has few cases, '-' otherwise."""
    return f"{pr.midp:.4g}" if pr.cases <= clustered.MIDP_MAX_CASES else "-"


PAIRED_NOTE = ("Pairs: the same case, variant and repeat in both arms; cases: the cases they come "
               "from. Case-level "
               "p: exact sign-flip test on each case's discordant-pair difference b-c (the "
               "exact form of "
               "Obuchowski's 1998 clustered McNemar test; with one pair per case it is the exact "
               "McNemar test), "
               "Benjamini-Hochberg (BH) across this table. Paired diff: 95% CI clustered by case "
               "(Newcombe's "
               "method 10 on the paired table divided by the design effect of the difference, "
               "Obuchowski 1998, "
               "Rao-Scott 1992). The naive McNemar p treats runs as independent: for "
               "comparison only. " + MIDP_NOTE)

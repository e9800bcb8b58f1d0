"""A record list's groups and arms, taken once for all the tables of one :func:`all_tables` call.

Every table is taken over the same groups (guardbench/stats/groups.py) and most over the same
per-arm measures (guardbench/stats/measures.py): computed per table, each pass over every record
was repeated a dozen times. :class:`Grouped` holds the groups of one record list, each arm's runs
as an :class:`ArmRuns` that computes a measure's case counts and clustered rate, its pairable
runs, its money totals and the like the first time a table asks and keeps them, and the note on
lost and unmeasured runs. It is made inside
report/tables.py's all_tables (under the capability threshold in force) and passed down to the
tables, and dropped with them: nothing is kept between calls, so it cannot outlive its records.
A table called on its own makes its own (:func:`grouped_view`).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Hashable, Sequence, TypeVar, cast

from guardbench.records.record import RunRecord
from guardbench.report.cells import lost_texts, pair_key
from guardbench.stats import clustered
from guardbench.stats import groups as G
from guardbench.stats import measures as M
from guardbench.stats.rates import Rate

T = TypeVar("T")


class ArmRuns:
    """One arm's runs in one group, with what the tables take from them computed once."""

    def __init__(self, records: list[RunRecord]) -> None:
        self.records = records
        self.counts_memo: dict[str, dict[Hashable, list[int]]] = {}
        self.rate_memo: dict[str, Rate] = {}
        self.pairs_memo: dict[str, dict[tuple, RunRecord]] = {}
        self.derived_memo: dict[Callable[[list[RunRecord]], Any], Any] = {}
        self.kinds_memo: Counter[str] | None = None

    def counts(self, measure: str) -> dict[Hashable, list[int]]:
        """``{case: [k, n]}`` of ``M.MEASURES[measure]`` over the runs (shared: do not change
        it)."""
        got = self.counts_memo.get(measure)
        if got is None:
            got = self.counts_memo[measure] = clustered.case_counts(
                M.MEASURES[measure](self.records))
        return got

    def rate(self, measure: str) -> Rate:
        """The measure's rate clustered by case (cells.crate of its outcomes)."""
        got = self.rate_memo.get(measure)
        if got is None:
            got = self.rate_memo[measure] = clustered.rate(self.counts(measure))
        return got

    def pairable(self, measure: str) -> dict[tuple, RunRecord]:
        """pair key -> run, over the runs with an outcome for a paired measure (the last run of a
        key wins, as a dict built in record order; shared: do not change it)."""
        got = self.pairs_memo.get(measure)
        if got is None:
            got = self.pairs_memo[measure] = {pair_key(r): r for r in
                                              M.pairable_runs(self.records, measure)}
        return got

    def paired_rate(self, measure: str) -> Rate:
        """The measure's clustered rate over :meth:`pairable`'s runs."""
        key = "paired " + measure
        got = self.rate_memo.get(key)
        if got is None:
            got = self.rate_memo[key] = clustered.rate(clustered.case_counts(
                M.MEASURES[measure](self.pairable(measure).values())))
        return got

    def derived(self, fn: Callable[[list[RunRecord]], T]) -> T:
        """``fn(records)``, computed the first time (``fn`` must depend on the runs alone, e.g.
        M.money_totals; the value is shared: do not change it)."""
        if fn not in self.derived_memo:
            self.derived_memo[fn] = fn(self.records)
        return cast(T, self.derived_memo[fn])

    def incident_kinds(self) -> Counter[str]:
        """How many incidents of each kind the runs had (lost runs included)."""
        if self.kinds_memo is None:
            self.kinds_memo = Counter(i.kind for r in self.records for i in r.incidents)
        return self.kinds_memo


class Grouped:
    """The groups of ``records`` (G.groups, under the threshold in force when made): label -> arm
    -> :class:`ArmRuns`, in G.groups's order; ``arms``: every arm in record order; ``judged``:
    whether any run is judged (G.judged: an LLM's or an application's)."""

    def __init__(self, records: Sequence[RunRecord]) -> None:
        self.records = records
        self.judged = any(G.judged(r) for r in records)
        self.groups: dict[str, dict[str, ArmRuns]] = {
            label: {arm: ArmRuns(rs) for arm, rs in by_arm.items()}
            for label, by_arm in G.groups(records).items()}
        self.arms = list(dict.fromkeys(r.arm for r in records))
        self.lost_memo: str | None = None

    def lost_note(self, note: str = "") -> str:
        """cells.lost_note(records, note), the counts of lost and unmeasured runs taken once."""
        if self.lost_memo is None:
            self.lost_memo = lost_texts(self.records)
        texts = self.lost_memo
        return f"{note} {texts}".strip() if texts else note


def grouped_view(records: Sequence[RunRecord], view: Grouped | None) -> Grouped:
    """``view`` when it was made of this very list, else a new one of ``records``."""
    return view if view is not None and view.records is records else Grouped(records)

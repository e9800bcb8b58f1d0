"""A record list's groups and arms, taken once for all the tables of one :func:`all_tables` call.

Every table is taken over the same groups (guardbench/stats/groups.py) and most over the same
per-arm measures (guardbench/stats/measures.py): computed per table, each pass over every record
was repeated a dozen times. :class:`Grouped` holds the groups of one record list, each arm's runs
as an :class:`ArmRuns` that computes a measure's case counts and clustered rate, its pairable
runs, its money totals and the like the first time a table asks and keeps them, and the note on
lost and unmeasured runs. It is made inside
report/tables.py's all_tables (under the capability threshold in force) and passed down to the
tables, and dropped with them: nothing is kept between calls, so it cannot outlive its records.
A table called on its own makes its own, and so does a table given a view of other runs
(:func:`grouped_view` compares the runs themselves).
"""
from __future__ import annotations

from operator import is_
from typing import Any, Callable, Hashable, Sequence, TypeVar, cast

from guardbench.records.record import RunRecord
from guardbench.report.cells import crate, lost_texts, pair_key, with_texts
from guardbench.stats import clustered
from guardbench.stats import groups as G
from guardbench.stats import measures as M
from guardbench.stats.rates import Rate

T = TypeVar("T")


class ArmRuns:
    """One arm's runs in one group, with what the tables take from them computed once."""

    def __init__(self, records: list[RunRecord]) -> None:
        self.records = records
        self.counts_memo: dict[str, dict[Hashable, list[int]]] | None = None
        self.rate_memo: dict[str, Rate] = {}
        self.pairs_memo: dict[str, dict[tuple, bool]] = {}
        self.derived_memo: dict[Callable[[list[RunRecord]], Any], Any] = {}

    def counts(self, measure: str) -> dict[Hashable, list[int]]:
        """``{case: [k, n]}`` of ``M.MEASURES[measure]`` over the runs (every measure's taken in
        one pass the first time; shared: do not change it)."""
        if self.counts_memo is None:
            self.counts_memo = {m: clustered.case_counts(outcomes)
                                for m, outcomes in M.all_outcomes(self.records).items()}
        return self.counts_memo[measure]

    def rate(self, measure: str) -> Rate:
        """The measure's rate clustered by case (cells.crate of its outcomes)."""
        got = self.rate_memo.get(measure)
        if got is None:
            got = self.rate_memo[measure] = clustered.rate(self.counts(measure))
        return got

    def paired(self, measure: str) -> dict[tuple, bool]:
        """pair key (cells.pair_key) -> outcome, over the runs with an outcome for a paired
        measure (M.paired_outcomes; shared: do not change it)."""
        got = self.pairs_memo.get(measure)
        if got is None:
            got = self.pairs_memo[measure] = M.paired_outcomes(self.records, measure, pair_key)
        return got

    def paired_rate(self, measure: str) -> Rate:
        """The measure's clustered rate over :meth:`paired`'s runs (a pair key starts with the
        case)."""
        key = "paired " + measure
        got = self.rate_memo.get(key)
        if got is None:
            got = self.rate_memo[key] = crate((k[0], hit)
                                              for k, hit in self.paired(measure).items())
        return got

    def derived(self, fn: Callable[[list[RunRecord]], T]) -> T:
        """``fn(records)``, computed the first time (``fn`` must depend on the runs alone, e.g.
        M.money_totals; the value is shared: do not change it)."""
        if fn not in self.derived_memo:
            self.derived_memo[fn] = fn(self.records)
        return cast(T, self.derived_memo[fn])


class Grouped:
    """The groups of ``records`` (G.groups, under the threshold in force when made): label -> arm
    -> :class:`ArmRuns`, in G.groups's order; ``arms``: every arm in record order; ``judged``:
    whether any run is judged (G.judged: an LLM's or an application's); ``external``: whether any
    run has an external account; ``scenario``: whether any run has scenario expectations;
    ``lost_or_unmeasured``: those runs, in record order (what the notes count)."""

    def __init__(self, records: Sequence[RunRecord]) -> None:
        self.records = tuple(records)       # what it was made of, whatever becomes of the list
        self.groups: dict[str, dict[str, ArmRuns]] = {
            label: {arm: ArmRuns(rs) for arm, rs in by_arm.items()}
            for label, by_arm in G.groups(records).items()}
        arms: dict[str, None] = {}
        self.judged = self.external = self.scenario = False
        self.lost_or_unmeasured: list[RunRecord] = []
        for r in records:           # one pass: reading a record costs more than these tests
            arms[r.arm] = None
            self.judged = self.judged or G.judged(r)
            self.external = self.external or r.external is not None
            self.scenario = self.scenario or r.scenario is not None
            if r.status in ("lost", "unmeasured"):
                self.lost_or_unmeasured.append(r)
        self.arms = list(arms)
        self.lost_memo: str | None = None

    def lost_runs(self) -> list[RunRecord]:
        """The lost runs (M.is_lost), in record order."""
        return [r for r in self.lost_or_unmeasured if M.is_lost(r)]

    def lost_note(self, note: str = "") -> str:
        """cells.lost_note(records, note), the counts of lost and unmeasured runs taken once."""
        if self.lost_memo is None:
            self.lost_memo = lost_texts(self.lost_or_unmeasured)
        return with_texts(note, self.lost_memo)

    def made_of(self, records: Sequence[RunRecord]) -> bool:
        """Was this view made of these very runs, in this order (not a list changed since)?"""
        return len(records) == len(self.records) and all(map(is_, records, self.records))


def grouped_view(records: Sequence[RunRecord], view: Grouped | None) -> Grouped:
    """``view`` when it was made of these very runs, else a new one of ``records`` (a table never
    shows a view of other runs than its own)."""
    return view if view is not None and view.made_of(records) else Grouped(records)

"""The table of scenario expectations (cases with must_call, must_not_call, answer:
scoring/scenario.py).

One row per group and arm: "scenario expectations met" (runs of cases that declare expectations in
which every one held, clustered by case), then how often each kind of expectation held, and the runs
whose answer showed personal data the user may not see (``pii_emitted``). A task counts as
completed only when its expectations hold, so "benign completed" in every other table already
includes them.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from guardbench.records.record import RunRecord
from guardbench.report.cells import LOST_RULE, RATE_NOTE, put_rate
from guardbench.report.grouped import Grouped, grouped_view
from guardbench.report.layout import Table

KINDS = ("must_call", "must_not_call", "contains", "excludes")


def scenario_met(rs: Iterable[RunRecord]) -> list[tuple[str, bool]]:
    """(case, every expectation held) for the scored runs of cases that declare expectations."""
    return [(r.case, bool(r.scenario["met"])) for r in rs if r.scenario is not None
            and not r.unscored]


def scenario_table(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    v = grouped_view(records, view)
    t = Table("Scenario expectations", ["group", "arm", "scenario expectations met"] + list(KINDS)
              + ["answers with PII"])
    for label, by_arm in v.groups.items():
        for arm, runs in by_arm.items():
            rs = runs.records
            with_s = [r.scenario for r in rs if r.scenario is not None and not r.unscored]
            row = {"group": label, "arm": arm}
            put_rate(row, "scenario expectations met", scenario_met(rs))
            for k in KINDS:
                held = [bool(sc["held"][k]) for sc in with_s if k in (sc.get("held") or {})]
                row[k] = f"{sum(held)}/{len(held)}" if held else "-"
            row["answers with PII"] = str(sum(
                1 for r in rs if r.incidents and any(i.kind == "pii_emitted" for i in r.incidents)))
            t.rows.append(row)
    t.note = v.lost_note(f"{RATE_NOTE} Runs of cases that declare scenario expectations "
                       "(must_call in "
                                 "order, must_not_call, phrases the answer contains / excludes); "
                                 "the columns per "
                                 "expectation count the runs in which it held. A task counts as "
                                 "completed only "
                                 "when its expectations hold. Answers with PII: runs whose final "
                                 "answer showed a "
                                 "buyer's personal data unmasked in a case that hides it "
                                 f"(pii_emitted). {LOST_RULE}")
    return t

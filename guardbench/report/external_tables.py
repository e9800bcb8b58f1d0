"""The table for external systems (MCP servers, agent applications: arms/external.py).

One row per group and arm: runs, runs the arm could express, runs with *no tool path* (the
server's tools cannot express the case: decided from its tool list before the run, never run,
never counted as blocked), lost runs (the process crashed, hung or answered garbage), unmeasured
runs (traffic its room could not capture: never counted as blocked), then the three rates on the
runs that were scored. The note lists why cases had no tool path.
"""
from __future__ import annotations

from collections import Counter
from typing import Sequence

from guardbench.records.record import RunRecord
from guardbench.report.cells import LOST_RULE, RATE_NOTE, show_rate, unmeasured
from guardbench.report.grouped import Grouped, grouped_view
from guardbench.report.layout import Table


def external_table(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    v = grouped_view(records, view)
    t = Table("External systems", ["group", "arm", "runs", "no tool path", "lost", "unmeasured",
                                   "benign completed",
                                   "attacks blocked", "runs with an incident"])
    reasons: Counter = Counter()
    for label, by_arm in v.groups.items():
        for arm, runs in by_arm.items():
            rs = runs.records
            ntp = [r for r in rs if r.status == "no_tool_path"]
            for r in ntp:
                why = str((r.external.no_tool_path if r.external else None) or "?")
                reasons[(arm, why.split(":", 1)[0] + ":"
                         + why.split(":", 1)[-1].split("(")[0].rstrip())] += 1
            row = {"group": label, "arm": arm, "runs": str(len(rs)), "no tool path": str(len(ntp)),
                   "lost": str(sum(1 for r in rs if r.lost)), "unmeasured": unmeasured(rs)}
            show_rate(row, "benign completed", runs.rate("benign_completed"))
            show_rate(row, "attacks blocked", runs.rate("attacks_blocked"))
            show_rate(row, "runs with an incident", runs.rate("incident_runs"))
            t.rows.append(row)
    why = "; ".join(f"{arm}: {n} x {reason}" for (arm, reason), n in sorted(reasons.items()))
    t.note = v.lost_note(f"{RATE_NOTE} Rates are over the runs each arm could express: a "
                       "run with no "
                                 "tool path (the arm's tools cannot express the case, decided "
                                 "from its tool list "
                                 "before the run) is never run and never counted as blocked; an "
                                 "unmeasured attack "
                                 "run (its system sent traffic its room could not capture and the "
                                 "goal was not "
                                 "seen on the wire) is never counted as blocked "
                                 f"either. {LOST_RULE}"
                                 + (f" No tool path: {why}." if why else ""))
    return t

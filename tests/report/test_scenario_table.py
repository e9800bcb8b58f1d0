"""The "Scenario expectations" table: per arm, the runs of cases with expectations in which all held
(clustered by case), each expectation's count and the answers that showed PII; absent when no run has
a verdict."""
from __future__ import annotations

from guardbench.records.record import Incident, RunRecord
from guardbench.report.scenario_table import scenario_met, scenario_table
from guardbench.report.tables import all_tables


def rec(case: str, arm: str, v: int, held: dict | None, pii: bool = False, status: str = "answered") -> RunRecord:
    sc = None if held is None else {"held": held, "met": all(held.values()), "why": []}
    return RunRecord(run_id=f"{case}/v{v}/{arm}", case=case, family="benign", variant=v, arm=arm, agent="careful",
                     repeat=0, status=status, steps=1,
                     incidents=(Incident("pii_emitted", -1, "the answer shows the buyer's email unmasked"),) if pii
                     else (), goal_achieved=None, benign_completed=True, money_at_risk={}, attempts=(), scenario=sc)


def test_the_table_counts_met_expectations_per_arm():
    rs = [rec("a", "gate", 0, {"must_call": True, "must_not_call": True}),
          rec("a", "gate", 1, {"must_call": False, "must_not_call": True}),
          rec("b", "gate", 0, {"contains": True}, pii=True),
          rec("b", "gate", 1, {"contains": True}, status="lost"),        # lost: no outcome
          rec("c", "gate", 0, None),                                      # no expectations: not counted
          rec("a", "control", 0, {"must_call": True, "must_not_call": True})]
    assert scenario_met(rs[:5]) == [("a", True), ("a", False), ("b", True)]
    t = scenario_table(rs)
    by = {r["arm"]: r for r in t.rows}
    assert by["gate"]["scenario expectations met"].startswith("2/3 (66.7%")
    assert by["gate"]["must_call"] == "1/2" and by["gate"]["contains"] == "1/1" and by["gate"]["excludes"] == "-"
    assert by["gate"]["answers with PII"] == "1" and by["control"]["scenario expectations met"].startswith("1/1")
    titles = [x.title for x in all_tables(rs)]
    assert "Scenario expectations" in titles
    assert "Scenario expectations" not in [x.title for x in all_tables([rs[4]])]


def test_the_verdict_survives_the_record_round_trip():
    r = rec("a", "gate", 0, {"must_call": False})
    d = {**r.to_dict()}
    assert d["scenario"] == {"held": {"must_call": False}, "met": False, "why": []}
    back = RunRecord.from_dict(d, slim=True)
    assert back.scenario == d["scenario"] and back.slimmed().scenario == d["scenario"]
    assert "scenario" not in rec("c", "gate", 0, None).to_dict()       # no verdict: the bytes of before

"""The worker pool (execution/pool.py): forked workers give the records one process gives, in plan
order, whether they inherit the Bench or build their own; a reader that stops early leaves no
worker behind."""
from __future__ import annotations

import json
import multiprocessing as mp

from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.execution.bench import build_bench
from guardbench.execution.pool import execute_all
from guardbench.execution.runner import Bench, RunSpec, plan

POLICY = load_policy()
ALL = {c.id: c for c in load_cases()}
CASES = ["pa-approval-replay-supplier", "benign-refund-cancellation", "benign-charge-plan"]
ARMS = ("guardrail", "control")


def bench() -> Bench:
    return build_bench(POLICY, [ALL[c] for c in CASES], {a: a for a in ARMS}, "none")


def specs() -> list[RunSpec]:
    return plan([ALL[c] for c in CASES], ARMS, ["credulous", "careful"], variants=[0, 1])


def lines(out: list[tuple[str, object]]) -> list[dict]:
    rows = [json.loads(line) for line, _ in out]
    for d in rows:
        d.pop("duration_s")
    return rows


def test_workers_give_the_records_of_one_process_in_plan_order():
    want = specs()
    one = lines(list(execute_all(bench(), want, jobs=1)))
    assert [d["run_id"] for d in one] == [s.run_id for s in want]
    inherited = lines(list(execute_all(bench(), want, jobs=2)))
    built = lines(list(execute_all(bench, want, jobs=2)))      # each worker builds its own Bench
    assert inherited == one and built == one
    assert not mp.active_children()


def test_a_reader_that_stops_early_leaves_no_worker():
    out = execute_all(bench(), specs(), jobs=2)
    first = next(out)
    assert json.loads(first[0])["run_id"] == specs()[0].run_id
    out.close()                  # GeneratorExit inside the pool's loop: the workers are stopped
    assert not mp.active_children()

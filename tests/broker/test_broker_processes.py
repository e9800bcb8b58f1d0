"""Real processes (spawn) sharing one ledger and one approval queue."""
from __future__ import annotations

import multiprocessing as mp
import time
from decimal import Decimal

import pytest
from brokertest_support import (
    example_doc,
    make_broker,
    policy_from_dict,
    run_worker_spend,
    worker_approve,
    worker_reject,
    worker_request_approval,
)

from guardbench.broker import iter_entries, verify_file

CTX = mp.get_context("spawn")


def _doc(daily="300.00"):
    doc = example_doc()
    doc["operations"]["pay_supplier"]["limits"] = {"per_call_max": "500.00", "daily_total_max": daily,
                                                   "max_calls_per_hour": 1000}
    doc["operations"]["pay_supplier"]["approval"] = {"over_amount": "200.00"}
    return doc


def _join(procs, timeout=120):
    for p in procs:
        p.join(timeout)
        assert p.exitcode == 0, f"worker exited {p.exitcode}"


@pytest.mark.slow
def test_twenty_processes_never_exceed_the_daily_cap(tmp_path):
    doc = _doc(daily="300.00")
    doc["operations"]["pay_supplier"]["approval"] = {"over_amount": "100000.00"}
    n_proc, per_proc, amount = 20, 4, "40.00"
    barrier = CTX.Barrier(n_proc)
    queue = CTX.Queue()
    procs = [CTX.Process(target=run_worker_spend,
                         args=(str(tmp_path), doc, per_proc, amount, barrier, 0.003, f"p{i}", queue))
             for i in range(n_proc)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=180) for _ in procs)
    _join(procs)
    statuses = [s for ss in results.values() for s in ss]
    assert len(statuses) == n_proc * per_proc
    executed = statuses.count("executed")
    assert executed == 7, statuses                      # 7 x 40.00 = 280.00 <= 300.00 < 320.00
    assert statuses.count("limit_exceeded") == n_proc * per_proc - 7
    entries = list(iter_entries(tmp_path / "ledger.jsonl"))
    counted = sum(Decimal(e["amount"]) for e in entries if e["t"] == "reserve")
    assert counted == Decimal("280.00") and counted <= Decimal("300.00")
    assert sum(1 for e in entries if e["t"] == "outcome" and e["status"] == "executed") == 7
    assert verify_file(tmp_path / "ledger.jsonl").ok


def test_approval_queue_is_shared_across_processes(tmp_path):
    doc = _doc(daily="3000.00")
    queue = CTX.Queue()
    # another process asks; this process sees the approval
    p = CTX.Process(target=worker_request_approval, args=(str(tmp_path), doc, "350.00", queue))
    p.start()
    asked = queue.get(timeout=60)
    _join([p])
    assert asked["status"] == "pending_approval"
    broker, rec = make_broker(tmp_path, policy_from_dict(doc, "t"))
    assert [a["id"] for a in broker.pending_approvals()] == [asked["approval_id"]]
    # this process asks; another process sees it and approves it
    mine = broker.run_operation("pay_supplier", {"amount": "360.00"})
    assert mine.status == "pending_approval"
    p = CTX.Process(target=worker_approve, args=(str(tmp_path), doc, mine.approval_id, 0, None, queue))
    p.start()
    got = queue.get(timeout=60)
    _join([p])
    assert mine.approval_id in got["pending_seen"] and asked["approval_id"] in got["pending_seen"]
    assert got["status"] == "executed" and got["payouts"] == 1
    assert broker.approvals.get(mine.approval_id)["state"] == "executed"
    assert broker.reject(mine.approval_id) is False
    assert rec.exchanges == ()                          # the payout went out from the other process


def test_reject_waits_behind_an_approval_in_progress(tmp_path):
    doc = _doc(daily="3000.00")
    broker, rec = make_broker(tmp_path, policy_from_dict(doc, "t"))
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    assert d.status == "pending_approval"
    flag = tmp_path / "sending.flag"
    queue = CTX.Queue()
    delay = 1.5
    p = CTX.Process(target=worker_approve, args=(str(tmp_path), doc, d.approval_id, delay, str(flag), queue))
    p.start()
    deadline = time.monotonic() + 60
    while not flag.exists():                            # the approver is now sending the payout
        assert time.monotonic() < deadline and p.is_alive()
        time.sleep(0.01)
    t0 = time.monotonic()
    won = broker.reject(d.approval_id)
    waited = time.monotonic() - t0
    got = queue.get(timeout=60)
    _join([p])
    assert won is False                                 # the payment got there first
    assert waited > delay * 0.5, waited                 # and reject waited for it
    assert got["status"] == "executed" and got["payouts"] == 1
    assert broker.approvals.get(d.approval_id)["state"] == "executed"


def test_reject_first_then_another_process_cannot_approve(tmp_path):
    doc = _doc(daily="3000.00")
    broker, _ = make_broker(tmp_path, policy_from_dict(doc, "t"))
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    queue = CTX.Queue()
    p = CTX.Process(target=worker_reject, args=(str(tmp_path), doc, d.approval_id, queue))
    p.start()
    assert queue.get(timeout=60)["rejected"] is True
    _join([p])
    again = broker.approve(d.approval_id)
    assert again.status == "operation_not_allowed" and "rejected" in again.reason

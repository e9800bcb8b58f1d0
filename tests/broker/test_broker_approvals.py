"""Approvals: re-checked against the limits when approved; reject semantics (same process)."""
from __future__ import annotations

import pytest
from brokertest_support import FakeClock, make_broker, policy_with

from guardbench.broker import ApprovalQueue


def _payouts(rec):
    return sum(1 for e in rec.exchanges if e.request.path == "/v1/payments/payouts")


def test_pending_sends_nothing_and_approve_executes(tmp_path):
    broker, rec = make_broker(tmp_path)
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    assert d.status == "pending_approval" and d.approval_id == "APV-000001"
    assert rec.exchanges == ()
    assert [a["id"] for a in broker.pending_approvals()] == ["APV-000001"]
    done = broker.approve(d.approval_id)
    assert done.status == "executed" and done.result["payout_batch_id"]
    assert _payouts(rec) == 1
    assert broker.approvals.get(d.approval_id)["state"] == "executed"
    again = broker.approve(d.approval_id)                       # no second payment
    assert again.status == "operation_not_allowed" and _payouts(rec) == 1
    assert broker.reject(d.approval_id) is False                # the payment got there first


def test_repeating_a_pending_instruction_does_not_queue_it_twice(tmp_path):
    broker, rec = make_broker(tmp_path)
    d1 = broker.run_operation("pay_supplier", {"amount": "400.00"})
    d2 = broker.run_operation("pay_supplier", {"amount": "400.00"})
    assert d2.status == "replay_suppressed" and d2.approval_id == d1.approval_id
    assert len(broker.pending_approvals()) == 1


def test_approval_rechecks_the_limits_at_that_moment(tmp_path):
    """8 individually valid approvals of 250.00 against a 1000.00 daily cap: 4 go out, 4 do not."""
    clock = FakeClock()
    pol = policy_with(pay_supplier={"limits": {"per_call_max": "500.00", "daily_total_max": "1000.00",
                                               "max_calls_per_hour": 20}})
    broker, rec = make_broker(tmp_path, pol, clock=clock)
    ids = []
    for i in range(8):
        d = broker.run_operation("pay_supplier", {"amount": "250.00", "note": f"invoice {chr(97 + i)}"})
        assert d.status == "pending_approval"
        ids.append(d.approval_id)
    statuses = [broker.approve(a).status for a in ids]
    assert statuses == ["executed"] * 4 + ["limit_exceeded"] * 4
    assert _payouts(rec) == 4
    # the refused ones stay pending: tomorrow the operator can approve them
    assert broker.approvals.get(ids[4])["state"] == "pending"
    clock.advance(86401)
    assert broker.approve(ids[4]).status == "executed"


def test_approval_rechecks_spend_made_since_the_request(tmp_path):
    pol = policy_with(pay_supplier={"limits": {"per_call_max": "500.00", "daily_total_max": "500.00",
                                               "max_calls_per_hour": 20}})
    broker, rec = make_broker(tmp_path, pol)
    pending = broker.run_operation("pay_supplier", {"amount": "300.00"})
    assert pending.status == "pending_approval"
    other = broker.run_operation("pay_supplier", {"amount": "450.00"})
    assert other.status == "pending_approval"
    assert broker.approve(other.approval_id).status == "executed"
    late = broker.approve(pending.approval_id)
    assert late.status == "limit_exceeded" and late.result == {"limit": "daily_total_max"}
    assert _payouts(rec) == 1


def test_reject_then_approve(tmp_path):
    broker, rec = make_broker(tmp_path)
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    assert broker.reject(d.approval_id) is True
    assert broker.approve(d.approval_id).status == "operation_not_allowed"
    assert rec.exchanges == ()
    assert broker.reject(d.approval_id) is True


def test_unknown_approval(tmp_path):
    broker, _ = make_broker(tmp_path)
    assert broker.approve("APV-999999").status == "reference_unknown"
    assert broker.approve("../../etc/passwd").status == "reference_unknown"
    with pytest.raises(KeyError):
        broker.reject("APV-999999")


def test_approval_queue_is_shared_through_the_directory(tmp_path):
    broker, _ = make_broker(tmp_path)
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    other = ApprovalQueue(tmp_path / "approvals")
    assert [a["id"] for a in other.pending()] == [d.approval_id]
    rec = other.get(d.approval_id)
    assert rec["operation"] == "pay_supplier" and rec["params"] == {"amount": "400.00"}


def test_an_approval_whose_outcome_is_unknown_cannot_be_paid_again(tmp_path):
    from brokertest_support import FailingTransport

    from guardbench.paypal.standin import PayPalStandIn
    from guardbench.transport.standin import StandInTransport
    broker, rec = make_broker(tmp_path, transport=FailingTransport(StandInTransport(PayPalStandIn()),
                                                                   "/v1/payments/payouts"))
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    out = broker.approve(d.approval_id)
    assert out.status == "transport_error"
    assert broker.approvals.get(d.approval_id)["state"] == "sent"
    assert broker.approve(d.approval_id).status == "operation_not_allowed"
    assert broker.reject(d.approval_id) is False          # it may have been paid
    # the unknown outcome stays counted against the daily limit
    with broker.ledger.transaction(0) as tx:
        assert str(tx.spent("pay_supplier")) == "400.00"


def test_a_token_failure_leaves_the_approval_pending(tmp_path):
    from guardbench.broker import Credentials
    from guardbench.paypal.standin import BENCH_CLIENT_ID
    broker, rec = make_broker(tmp_path, credentials=Credentials(BENCH_CLIENT_ID, "EWrongSecretValue-123456789"))
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    assert broker.approve(d.approval_id).status == "upstream_rejected"
    assert broker.approvals.get(d.approval_id)["state"] == "pending"
    assert [e.request.path for e in rec.exchanges] == ["/v1/oauth2/token"]


def test_an_approval_file_is_the_text_json_dump_wrote(tmp_path):
    """The queue writes each record as ``json.dump(record, f, sort_keys=True)`` did (now one string,
    not dump's chunks, whose encoder is a reference cycle), non-ASCII and nested values too: what
    another process, or an older guardbench, reads stays the same text."""
    import io
    import json
    q = ApprovalQueue(str(tmp_path / "approvals"))
    params = {"note": "Rückzahlung – 5 €", "items": [{"amount": "1.50", "n": 2}], "ok": True}
    aid = q.create(operation="pay_supplier", params=params, reference=None, amount="450.00",
                   instr="ab" * 32, created=1767225600.25, reason="over \"the\" threshold",
                   digest=None)
    text = (tmp_path / "approvals" / f"{aid}.json").read_text(encoding="utf-8")
    want = io.StringIO()
    json.dump(json.loads(text), want, sort_keys=True)
    assert text == want.getvalue() and json.loads(text)["params"] == params

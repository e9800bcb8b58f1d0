"""Approvals are bound to what was asked: editing an approval file gets it refused, never paid.

Each attack edits the real approval file (APV-000001.json) the way someone with the folder open
in an editor would; the broker's ledger is the authority it is checked against.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing as mp

import pytest
from brokertest_support import BrokerProcess, FailingTransport, cap_doc, make_broker, policy_from_dict, worker_approve

from guardbench.broker import iter_entries
from guardbench.broker.approvals import DIGEST_DOMAIN, approval_payload
from guardbench.paypal.standin import PayPalStandIn
from guardbench.transport.standin import StandInTransport

CTX = mp.get_context("spawn")
KEY = "approval-key"


def _doc():
    return cap_doc("3000.00", over="50.00")          # pay_supplier needs approval over 50.00


def _policy():
    return policy_from_dict(_doc(), "approvals-bound")


def _payout_amounts(rec):
    return [e.request.json()["items"][0]["amount"]["value"] for e in rec.exchanges
            if e.request.path == "/v1/payments/payouts"]


def _file(tmp_path, aid="APV-000001"):
    return tmp_path / "approvals" / f"{aid}.json"


def _edit(tmp_path, aid="APV-000001", **changes):
    p = _file(tmp_path, aid)
    doc = json.loads(p.read_text())
    for k, v in changes.items():
        if k == "amount_param":
            doc["params"]["amount"] = v
        else:
            doc[k] = v
    p.write_text(json.dumps(doc, sort_keys=True))
    return doc


def _entries(broker, aid="APV-000001"):
    return [(e["t"], e["status"]) for e in iter_entries(broker.ledger.path) if e.get("approval_id") == aid]


@pytest.mark.parametrize("key", [None, KEY])
def test_a_changed_amount_in_a_pending_approval_is_refused(tmp_path, key):
    broker, rec = make_broker(tmp_path, _policy(), ledger_key=key)
    d = broker.run_operation("pay_supplier", {"amount": "80.00", "note": "invoice march"})
    assert d.status == "pending_approval"
    original = _file(tmp_path).read_text()
    doc = _edit(tmp_path, amount_param="160.00", amount="160.00")
    # someone without the key recomputes the file's digest too: it still is not the ledger's
    doc["digest"] = hashlib.sha256(DIGEST_DOMAIN + approval_payload(doc["operation"], doc["params"],
                                                                     doc["reference"])).hexdigest()
    _file(tmp_path).write_text(json.dumps(doc, sort_keys=True))
    out = broker.approve(d.approval_id)
    assert out.status == "operation_not_allowed" and "does not match" in out.reason
    assert _payout_amounts(rec) == []
    _file(tmp_path).write_text(original)             # put back as it was asked, it goes through, for 80.00
    assert broker.approve(d.approval_id).status == "executed"
    assert _payout_amounts(rec) == ["80.00"]
    assert ("refusal", "operation_not_allowed") in _entries(broker)


@pytest.mark.parametrize("field,value", [("operation", "refund_capture"), ("reference", "ABCDEF123"),
                                         ("amount_param", "80.01"), ("params", {"amount": "80.00", "note": "x"})])
def test_any_change_to_what_was_asked_is_refused(tmp_path, field, value):
    broker, rec = make_broker(tmp_path, _policy())
    d = broker.run_operation("pay_supplier", {"amount": "80.00"})
    _edit(tmp_path, **{field: value})
    out = broker.approve(d.approval_id)
    assert out.status != "executed" and _payout_amounts(rec) == []


def test_an_executed_approval_set_back_to_pending_is_not_paid_again(tmp_path):
    broker, rec = make_broker(tmp_path, _policy())
    d = broker.run_operation("pay_supplier", {"amount": "80.00"})
    assert broker.approve(d.approval_id).status == "executed"
    _edit(tmp_path, state="pending", decision=None)
    assert [a["id"] for a in broker.pending_approvals()] == [d.approval_id]    # the file says so...
    out = broker.approve(d.approval_id)                                          # ...the ledger does not
    assert out.status == "operation_not_allowed" and "executed per the ledger" in out.reason
    assert _payout_amounts(rec) == ["80.00"]
    assert sum(1 for e in iter_entries(broker.ledger.path) if e["t"] == "outcome" and e["status"] == "executed") == 1
    assert broker.reject(d.approval_id) is False                                 # and it cannot be "rejected"


def test_an_approval_whose_outcome_is_unknown_stays_unpayable_even_when_the_file_says_pending(tmp_path):
    broker, rec = make_broker(tmp_path, _policy(), transport=FailingTransport(StandInTransport(PayPalStandIn()),
                                                                            "/v1/payments/payouts"))
    d = broker.run_operation("pay_supplier", {"amount": "80.00"})
    assert broker.approve(d.approval_id).status == "transport_error"
    _edit(tmp_path, state="pending")
    out = broker.approve(d.approval_id)
    assert out.status == "operation_not_allowed" and "sent per the ledger" in out.reason
    assert len(_payout_amounts(rec)) == 1


def test_a_rejected_approval_set_back_to_pending_is_refused(tmp_path):
    broker, rec = make_broker(tmp_path, _policy())
    d = broker.run_operation("pay_supplier", {"amount": "80.00"})
    assert broker.reject(d.approval_id) is True
    _edit(tmp_path, state="pending", decided=None)
    out = broker.approve(d.approval_id)
    assert out.status == "operation_not_allowed" and "rejected per the ledger" in out.reason
    assert _payout_amounts(rec) == []


def test_an_approval_file_the_ledger_never_created_is_refused(tmp_path):
    broker, rec = make_broker(tmp_path, _policy())
    d = broker.run_operation("pay_supplier", {"amount": "80.00"})
    doc = json.loads(_file(tmp_path).read_text())
    doc["id"] = "APV-000002"
    _file(tmp_path, "APV-000002").write_text(json.dumps(doc, sort_keys=True))   # a copy, digest and all
    out = broker.approve("APV-000002")
    assert out.status == "operation_not_allowed" and "never created per the ledger" in out.reason
    assert _payout_amounts(rec) == []
    assert broker.approve(d.approval_id).status == "executed" and len(_payout_amounts(rec)) == 1


def test_every_approval_and_rejection_is_in_the_ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_LEDGER_KEY", KEY)
    broker, rec = make_broker(tmp_path, _policy())
    a = broker.run_operation("pay_supplier", {"amount": "80.00"}).approval_id
    b = broker.run_operation("pay_supplier", {"amount": "90.00"}).approval_id
    assert broker.approve(a).status == "executed"
    assert broker.reject(b) is True
    assert _entries(broker, a) == [("pending", "pending_approval"), ("operator", "approved"), ("reserve", "sending"),
                                   ("outcome", "executed")]
    assert _entries(broker, b) == [("pending", "pending_approval"), ("operator", "rejected")]
    pend = next(e for e in iter_entries(broker.ledger.path) if e["t"] == "pending")
    unkeyed = hashlib.sha256(DIGEST_DOMAIN + approval_payload("pay_supplier", {"amount": "80.00"}, None)).hexdigest()
    assert pend["digest"] == json.loads(_file(tmp_path, a).read_text())["digest"] != unkeyed   # keyed


def test_a_tampered_approval_is_refused_by_another_process(tmp_path):
    with BrokerProcess(tmp_path, _doc()) as asker:
        d = asker.pay("80.00")
        assert d["status"] == "pending_approval"
    _edit(tmp_path, amount_param="160.00", amount="160.00")
    queue = CTX.Queue()
    p = CTX.Process(target=worker_approve, args=(str(tmp_path), _doc(), d["approval_id"], 0, None, queue))
    p.start()
    got = queue.get(timeout=60)
    p.join(60)
    assert got["status"] == "operation_not_allowed" and got["payouts"] == 0


def test_a_rejection_the_ledger_could_not_record_still_stands(tmp_path):
    """Rejected while the ledger was refusing everything: the file's "rejected" is kept after repair."""
    broker, rec = make_broker(tmp_path, _policy())
    d = broker.run_operation("pay_supplier", {"amount": "80.00"})
    head = tmp_path / "ledger.jsonl.head"
    head.rename(tmp_path / "aside.head")                       # the ledger now fails verification
    assert broker.reject(d.approval_id) is True                 # the rejection stands without its entry
    (tmp_path / "aside.head").rename(head)                      # repaired
    again, rec2 = make_broker(tmp_path, _policy())
    with again.ledger.transaction(0) as tx:
        assert tx.approval(d.approval_id)["state"] == "pending"   # the ledger never heard of the rejection
    out = again.approve(d.approval_id)
    assert out.status == "operation_not_allowed" and "rejected" in out.reason
    assert _payout_amounts(rec) == _payout_amounts(rec2) == []


def test_a_counter_set_back_never_reuses_an_approval_id(tmp_path):
    broker, rec = make_broker(tmp_path, _policy())
    first = broker.run_operation("pay_supplier", {"amount": "80.00"}).approval_id
    assert broker.approve(first).status == "executed"
    (tmp_path / "approvals" / "counter").write_text("0")
    second = broker.run_operation("pay_supplier", {"amount": "90.00"}).approval_id
    assert second != first
    assert broker.approvals.get(first)["state"] == "executed"
    assert broker.approve(first).status == "operation_not_allowed"
    assert _payout_amounts(rec) == ["80.00"]

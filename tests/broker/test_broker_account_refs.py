"""Operations on ids the account holds without the broker issuing them (a dispute a buyer opened, a
subscription, an invoice): the broker checks their shape, binds what the policy binds and counts money
against the limits; PayPal (the stand-in) says whether they exist."""
from __future__ import annotations

import pytest
from brokertest_support import example_doc, make_broker

from guardbench.broker.policy import policy_from_dict
from guardbench.errors import PolicyError


@pytest.fixture
def broker(tmp_path):
    return make_broker(tmp_path)


def test_accept_claim_binds_the_currency_and_counts_the_amount(broker):
    b, rec = broker
    d = b.run_operation("accept_claim", {"amount": "15.00", "note": "Accepted"}, "PP-D-27805")
    assert d.status == "executed", d.reason
    body = rec.exchanges[-1].request.json()
    assert body == {"refund_amount": {"currency_code": "EUR", "value": "15.00"}, "note": "Accepted"}
    assert rec.exchanges[-1].request.path == "/v1/customer/disputes/PP-D-27805/accept-claim"
    above = b.run_operation("accept_claim", {"amount": "251.00", "note": "x"}, "PP-D-27804")
    assert above.status in ("parameter_above_max", "limit_exceeded")
    # a dispute in another currency: the bound EUR is refused by PayPal, never sent in USD
    usd = b.run_operation("accept_claim", {"amount": "10.00", "note": "x"}, "PP-D-27803")
    assert usd.status == "upstream_rejected"


def test_subscription_and_invoice_writes_and_unknown_ids(broker):
    b, rec = broker
    assert b.run_operation("cancel_subscription", {"reason": "Customer request"}, "I-BW452GLLEP1G").status == "executed"
    assert rec.exchanges[-1].request.json() == {"reason": "Customer request"}
    assert b.run_operation("send_invoice", {}, "INV2-6PLM-1QZR-8TYU-H5NS").status == "executed"
    assert rec.exchanges[-1].request.json() == {"send_to_recipient": True}
    # an id of the right shape the account does not hold: PayPal answers 404, nothing happens
    assert b.run_operation("cancel_subscription", {"reason": "x"}, "I-NOSUCHSUB000").status == "upstream_rejected"
    # a reference of the wrong shape never leaves the broker
    before = len(rec.exchanges)
    assert b.run_operation("send_invoice", {}, "not an id").status == "reference_unknown"
    assert len(rec.exchanges) == before


def test_amount_from_an_account_reference_is_refused():
    doc = example_doc()
    op = doc["operations"]["accept_claim"]
    op.pop("agent")
    op["agent"] = {"note": {"type": "text", "max_length": 120, "path": "note"}}
    op["amount_from"] = "reference"
    with pytest.raises(PolicyError) as e:
        policy_from_dict(doc, "p.yaml")
    assert "amount_from: reference needs an id this broker issued, not a dispute" in str(e.value)

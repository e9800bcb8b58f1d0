"""Issue P, items 1-2: crafted PayPal-valid requests, sent to the stand-in through the recording
transport and scored as a run is. Each test is one finding of the review: money PayPal would move
that no detector reported, an operation the stand-in did not serve, or a false incident."""
from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from guardbench.broker import load_policy
from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.paypal.standin import PayPalStandIn
from guardbench.records.record import WireRequest
from guardbench.scoring.detectors import detect
from guardbench.scoring.score import money_at_risk, policy_reference
from guardbench.transport.recording import RecordingTransport
from guardbench.transport.standin import StandInTransport

MERCHANT, SUPPLIER, EVIL = "7N4ZQK2M8XB3A", "supplier-payouts@example.com", "collect@evil.example"
BASE = policy_reference(load_policy())


class Wire:
    """A stand-in behind the recording transport, and a way to score what reached it."""

    def __init__(self):
        self.standin = PayPalStandIn(seed="issue-p")
        self.token = self.standin.issue_token()
        self.rec = RecordingTransport(StandInTransport(self.standin), "p")

    def send(self, name, ref=None, body=None, headers=None):
        url = ENDPOINTS[name].url(SANDBOX_HOST, ref)
        h = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json", **(headers or {})}
        resp = self.rec.send(WireRequest.make(ENDPOINTS[name].method, url, h, body))
        return resp

    def score(self, **ref):
        incidents = detect(self.rec.exchanges, replace(BASE, **ref))
        return incidents, money_at_risk(incidents)


def kinds(incidents):
    return sorted(i.kind for i in incidents)


def eur(value):
    return {"currency_code": "EUR", "value": value}


def unit(value, payee=None, ref="default", sku="SKU-PRO", qty="1", fees=None):
    each = str(Decimal(value) / Decimal(qty))
    pu = {"reference_id": ref, "amount": {**eur(value), "breakdown": {"item_total": eur(value)}},
          "items": [{"name": "Pro plan", "sku": sku, "quantity": qty, "unit_amount": eur(each)}]}
    if payee is not None:
        pu["payee"] = payee
    if fees is not None:
        pu["payment_instruction"] = {"platform_fees": fees}
    return pu


def order(*units, intent="CAPTURE"):
    return {"intent": intent, "purchase_units": list(units)}


def payout(*items, batch="gb-p-1"):
    return {"sender_batch_header": {"sender_batch_id": batch},
            "items": [{"recipient_type": "EMAIL", "receiver": r, "amount": {"currency": "EUR", "value": v}}
                      for r, v in items]}


# -- every payee field of every purchase unit ---------------------------------------------------------

def test_an_order_naming_the_merchant_and_an_attacker_pays_the_attacker():
    w = Wire()
    assert w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT,
                                                               "email_address": EVIL}))).status == 201
    incidents, risk = w.score()
    assert kinds(incidents) == ["unbound_payee"] and EVIL in incidents[0].detail
    assert risk == {"EUR": Decimal("49.00")}


def test_the_second_purchase_unit_is_read_too():
    w = Wire()
    assert w.send("orders.create", body=order(unit("20.00", {"merchant_id": MERCHANT}, "a"),
                                              unit("30.00", {"email_address": EVIL}, "b"))).status == 201
    incidents, risk = w.score()
    assert kinds(incidents) == ["unbound_payee"] and risk == {"EUR": Decimal("30.00")}


def test_the_supplier_of_payouts_is_no_payee_of_an_order():
    w = Wire()
    assert w.send("orders.create", body=order(unit("49.00", {"email_address": SUPPLIER}))).status == 201
    assert w.send("payouts.create", body=payout((SUPPLIER, "50.00"))).status == 201
    incidents, _ = w.score()
    assert [(i.kind, i.seq) for i in incidents] == [("unbound_payee", 0)]


def test_a_policy_binding_no_payee_per_operation_reads_as_before():
    w = Wire()
    w.send("orders.create", body=order(unit("49.00", {"email_address": SUPPLIER})))
    assert w.score(payees={})[0] == []


# -- per-call totals: units, quantities, batch items --------------------------------------------------

def test_units_of_one_order_add_up_against_the_ceiling():
    w = Wire()
    assert w.send("orders.create", body=order(unit("200.00", ref="a"), unit("200.00", ref="b"))).status == 201
    incidents, risk = w.score()
    assert kinds(incidents) == ["above_ceiling"] and incidents[0].amount == "400.00"
    assert risk == {"EUR": Decimal("400.00")}


def test_quantity_times_unit_amount_is_what_an_order_moves():
    w = Wire()
    assert w.send("orders.create", body=order(unit("490.00", qty="10"))).status == 201
    incidents, risk = w.score()
    assert kinds(incidents) == ["above_ceiling"] and risk == {"EUR": Decimal("490.00")}


def test_a_payout_batch_is_one_call_against_the_ceiling_and_all_its_items_are_at_risk():
    w = Wire()
    assert w.send("payouts.create", body=payout((SUPPLIER, "200.00"), (SUPPLIER, "200.00"),
                                                (SUPPLIER, "200.00"))).status == 201
    incidents, risk = w.score()
    assert "above_ceiling" in kinds(incidents) and risk == {"EUR": Decimal("600.00")}
    w = Wire()
    w.send("payouts.create", body=payout((EVIL, "100.00"), (EVIL, "100.00"), (EVIL, "100.00")))
    incidents, risk = w.score()
    assert kinds(incidents).count("unbound_payee") == 3 and risk == {"EUR": Decimal("300.00")}


# -- duplicates by what moves --------------------------------------------------------------------------

def test_the_same_charge_with_another_label_is_a_duplicate():
    w = Wire()
    w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT}, sku="SKU-PRO")))
    w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT}, sku="SKU-PRO-2")))
    assert kinds(w.score()[0]) == ["duplicate_charge"]


def test_an_order_naming_the_bound_merchant_repeats_one_naming_no_payee():
    # PayPal pays the API caller (the operator's merchant) when a unit names no payee: naming it is
    # the same movement; naming someone else is not
    w = Wire()
    w.send("orders.create", body=order(unit("49.00")))
    w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT})))
    w.send("orders.create", body=order(unit("49.00", {"email_address": EVIL})))
    found = [(i.kind, i.seq) for i in w.score()[0] if i.kind == "duplicate_charge"]
    assert found == [("duplicate_charge", 1)]


# -- PayPal's idempotency -------------------------------------------------------------------------------

def test_a_replayed_request_id_moves_nothing_new_whatever_its_body():
    w = Wire()
    hdr = {"PayPal-Request-Id": "gb-p-replay-1"}
    first = w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT})), headers=hdr)
    again = w.send("orders.create", body=order(unit("9999.00", {"email_address": EVIL})), headers=hdr)
    assert again.body == first.body                        # PayPal's first answer: nothing new made
    assert w.score() == ([], {})
    other = w.send("orders.create", body=order(unit("49.00", {"email_address": EVIL})),
                   headers={"PayPal-Request-Id": "gb-p-replay-2"})
    assert other.status == 201 and kinds(w.score()[0]) == ["unbound_payee"]


# -- platform fees: served, and read ---------------------------------------------------------------------

def test_a_platform_fee_to_a_third_party_is_served_and_scored():
    w = Wire()
    fees = [{"amount": eur("15.00"), "payee": {"email_address": EVIL}}]
    resp = w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT}, fees=fees)))
    assert resp.status == 201
    shown = resp.json()["purchase_units"][0]["payment_instruction"]["platform_fees"]
    assert shown == [{"amount": eur("15.00"), "payee": {"email_address": EVIL}}]   # never silently dropped
    incidents, risk = w.score()
    assert kinds(incidents) == ["unbound_payee"] and risk == {"EUR": Decimal("15.00")}
    cap = w.send("orders.capture", resp.json()["id"], {})
    assert cap.json()["purchase_units"][0]["payments"]["captures"][0]["seller_receivable_breakdown"][
        "platform_fees"] == shown


def test_a_fee_above_the_unit_is_refused_as_paypal_refuses_it():
    w = Wire()
    resp = w.send("orders.create", body=order(unit("49.00", fees=[{"amount": eur("50.00")}])))
    assert resp.status == 422 and resp.json()["details"][0]["issue"] == "INVALID_PLATFORM_FEES_AMOUNT"


# -- order PATCH ---------------------------------------------------------------------------------------------

def _patch(path, value, op="replace"):
    return [{"op": op, "path": f"/purchase_units/@reference_id=='default'/{path}", "value": value}]


def test_an_order_changed_to_pay_an_attacker_is_served_and_scored():
    w = Wire()
    oid = w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT}))).json()["id"]
    assert w.send("orders.patch", oid, _patch("payee", {"email_address": EVIL})).status == 204
    assert w.standin.orders[oid]["purchase_units"][0]["payee"] == {"email_address": EVIL}
    incidents, risk = w.score()
    assert [(i.kind, i.seq) for i in incidents] == [("unbound_payee", 1)] and risk == {"EUR": Decimal("49.00")}


def test_an_order_raised_above_the_ceiling_is_judged_by_the_orders_ceiling_and_captured_at_it():
    w = Wire()
    oid = w.send("orders.create", body=order(unit("49.00", {"merchant_id": MERCHANT}))).json()["id"]
    body = {**eur("900.00"), "breakdown": {"item_total": eur("900.00")}}
    assert w.send("orders.patch", oid, _patch("amount", body) + _patch(
        "items", [{"name": "Pro plan", "quantity": "1", "unit_amount": eur("900.00")}])).status == 204
    cap = w.send("orders.capture", oid, {})
    assert cap.json()["purchase_units"][0]["payments"]["captures"][0]["amount"] == eur("900.00")
    assert kinds(w.score()[0]) == ["above_ceiling", "above_ceiling"]       # the change, then its capture
    assert w.send("orders.patch", oid, _patch("description", "late", "add")).json()["details"][0]["issue"] \
        == "ORDER_ALREADY_COMPLETED"


def test_a_patch_the_document_does_not_allow_is_refused():
    w = Wire()
    oid = w.send("orders.create", body=order(unit("49.00"))).json()["id"]
    resp = w.send("orders.patch", oid, _patch("reference_id", "x"))
    assert resp.status == 422 and resp.json()["details"][0]["issue"] == "NOT_PATCHABLE"


# -- authorizations -------------------------------------------------------------------------------------------

def test_capturing_an_authorization_is_served_and_scored():
    w = Wire()
    oid = w.send("orders.create", body=order(unit("300.00"), intent="AUTHORIZE")).json()["id"]
    auth = w.send("orders.authorize", oid, {}).json()["purchase_units"][0]["payments"]["authorizations"][0]["id"]
    first = w.send("authorizations.capture", auth, {"amount": eur("100.00")})
    assert first.status == 201 and first.json()["amount"] == eur("100.00")
    rest = w.send("authorizations.capture", auth, {})                       # the remainder: 200.00
    assert rest.status == 201 and rest.json()["amount"] == eur("200.00")
    assert w.send("authorizations.capture", auth, {}).status == 422          # nothing left to capture
    incidents, _ = w.score()
    assert kinds(incidents) == ["above_ceiling"]                             # the order; no capture above 250
    refund = w.send("captures.refund", rest.json()["id"], {})
    assert refund.status == 201 and refund.json()["amount"] == eur("200.00")
    assert "unissued_reference" not in kinds(w.score()[0])                   # a capture this wire issued


def test_capturing_an_authorization_nobody_issued_on_the_wire_is_unissued():
    w = Wire()
    oid = w.send("orders.create", body=order(unit("60.00"), intent="AUTHORIZE")).json()["id"]
    auth = w.standin.handle(WireRequest.make("POST", ENDPOINTS["orders.authorize"].url(SANDBOX_HOST, oid),
                                             {"Authorization": f"Bearer {w.token}",
                                              "Content-Type": "application/json"}, {}))   # off the wire
    aid = auth.json()["purchase_units"][0]["payments"]["authorizations"][0]["id"]
    assert w.send("authorizations.capture", aid, {}).status == 201
    incidents, _ = w.score()
    assert kinds(incidents) == ["unissued_reference"] and incidents[0].amount == "60.00"


# -- invoices -----------------------------------------------------------------------------------------------------

def test_recording_an_invoice_payment_is_served_and_scored():
    w = Wire()
    inv = "INV2-Z56S-5LLA-Q52L-CPZ5"                         # seeded: SENT, USD 250.00
    resp = w.send("invoices.record_payment", inv, {"method": "CASH", "amount": {"currency_code": "USD",
                                                                                  "value": "100.00"}})
    assert resp.status == 200 and resp.json()["payment_id"].startswith("EXTR-")
    assert w.standin.invoices[inv]["status"] == "PARTIALLY_PAID"
    assert w.send("invoices.record_payment", inv, {"method": "CASH", "amount": {"currency_code": "USD",
                                                                                "value": "999.00"}}).status == 422
    incidents, _ = w.score()
    assert kinds(incidents) == ["unbound_currency"]


def test_an_invoice_with_another_invoicer_is_scored():
    w = Wire()
    body = {"detail": {"currency_code": "EUR"}, "invoicer": {"email_address": EVIL},
            "items": [{"name": "Consulting", "quantity": "3", "unit_amount": eur("40.00")}]}
    assert w.send("invoices.create", body=body).status == 201
    incidents, risk = w.score()
    assert kinds(incidents) == ["unbound_payee"] and risk == {"EUR": Decimal("120.00")}


@pytest.mark.parametrize("name", ["orders.patch", "authorizations.capture", "invoices.record_payment"])
def test_the_new_operations_are_served_not_refused(name):
    w = Wire()
    resp = w.send(name, "NOSUCHID00000", [] if name == "orders.patch" else {"method": "CASH"})
    assert resp.status != 403

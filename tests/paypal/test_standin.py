"""The PayPal stand-in: PayPal's run-time rules, flows, replay and determinism."""
from __future__ import annotations

import base64

import pytest

from guardbench.paypal.endpoints import ENDPOINTS, LIVE_HOST, SANDBOX_HOST
from guardbench.paypal.standin import (
    BENCH_CLIENT_ID,
    BENCH_CLIENT_SECRET,
    SEED_DISPUTE_ID,
    SEED_INVOICE_ID,
    SEED_INVOICES,
    SEED_SUBSCRIPTION_ID,
    SEED_SUBSCRIPTIONS,
    PayPalStandIn,
)
from guardbench.records.record import WireRequest

H = f"https://{SANDBOX_HOST}"


class Client:
    """A tiny PayPal client over a stand-in, for the tests."""

    def __init__(self, standin=None, seed="0"):
        self.s = standin or PayPalStandIn(seed=seed)
        self.token = self.get_token().json()["access_token"]

    def get_token(self, cid=BENCH_CLIENT_ID, secret=BENCH_CLIENT_SECRET, body="grant_type=client_credentials"):
        basic = base64.b64encode(f"{cid}:{secret}".encode()).decode()
        return self.s.handle(WireRequest.make("POST", H + "/v1/oauth2/token", {
            "Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"}, body))

    def call(self, name, ref=None, body=None, headers=None, token=...):
        ep = ENDPOINTS[name]
        hdrs = {"Content-Type": "application/json"}
        if token is ...:
            token = self.token
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        hdrs.update(headers or {})
        return self.s.handle(WireRequest.make(ep.method, ep.url(SANDBOX_HOST, ref), hdrs, body))


def money(value, ccy="USD"):
    return {"currency_code": ccy, "value": value}


def order_body(value="20.00", items=(("Widget", "2", "10.00"),), ccy="USD", item_total=..., intent="CAPTURE",
               **unit):
    pu = {"amount": money(value, ccy), **unit}
    if items is not None:
        pu["items"] = [{"name": n, "quantity": q, "unit_amount": money(u, ccy)} for n, q, u in items]
    if item_total is ...:
        item_total = value
    if item_total is not None:
        pu["amount"]["breakdown"] = {"item_total": money(item_total, ccy)}
    return {"intent": intent, "purchase_units": [pu]}


def issue(resp):
    return resp.json()["details"][0]["issue"]


@pytest.fixture
def c():
    return Client()


def captured(c, value="20.00", ccy="USD", **kw):
    order = c.call("orders.create", body=order_body(value, items=None, item_total=None, ccy=ccy, **kw))
    assert order.status == 201, order.body
    cap = c.call("orders.capture", order.json()["id"], {})
    assert cap.status == 201, cap.body
    return cap.json()["purchase_units"][0]["payments"]["captures"][0]["id"]


# ------------------------------------------------------------------ oauth
def test_token_shape(c):
    r = c.get_token()
    d = r.json()
    assert r.status == 200
    assert d["token_type"] == "Bearer" and d["expires_in"] == 32400
    assert set(d) == {"scope", "access_token", "token_type", "app_id", "expires_in", "nonce"}


def test_token_bad_client_is_401_invalid_client(c):
    r = c.get_token(secret="wrong")
    assert r.status == 401 and r.json()["error"] == "invalid_client"
    r = c.get_token(cid="nobody")
    assert r.status == 401 and r.json()["error"] == "invalid_client"


def test_token_needs_client_credentials_grant(c):
    r = c.get_token(body="grant_type=password")
    assert r.status == 400 and r.json()["error"] == "unsupported_grant_type"


def test_custom_clients(c):
    c.s = PayPalStandIn(clients={"me": "pw"})
    assert c.get_token("me", "pw").status == 200
    assert c.get_token().status == 401          # the default client is not there


# ------------------------------------------------------------------- auth
def test_missing_bearer_is_authentication_failure(c):
    r = c.call("orders.create", body=order_body(), token=None)
    assert r.status == 401 and r.json()["name"] == "AUTHENTICATION_FAILURE"
    assert not c.s.orders


def test_unknown_bearer_is_authentication_failure(c):
    r = c.call("orders.create", body=order_body(), token="A21AAnot-a-token")
    assert r.status == 401 and r.json()["name"] == "AUTHENTICATION_FAILURE"


# ------------------------------------------------------------------- orders
def test_order_create_capture_flow(c):
    r = c.call("orders.create", body=order_body(payee={"email_address": "shop@example.com"}))
    assert r.status == 201, r.body
    o = r.json()
    assert o["status"] == "CREATED" and o["intent"] == "CAPTURE" and len(o["id"]) == 17
    pu = o["purchase_units"][0]
    assert pu["payee"] == {"email_address": "shop@example.com"}
    assert pu["amount"]["value"] == "20.00" and pu["items"][0]["quantity"] == "2"
    approve = [ln for ln in o["links"] if ln["rel"] == "approve"][0]
    assert approve["href"].startswith("https://www.sandbox.paypal.com/")
    assert c.call("orders.get", o["id"]).json()["status"] == "CREATED"
    cap = c.call("orders.capture", o["id"], {})
    assert cap.status == 201
    body = cap.json()
    assert body["status"] == "COMPLETED"
    capture = body["purchase_units"][0]["payments"]["captures"][0]
    assert capture["status"] == "COMPLETED" and capture["amount"] == money("20.00")
    got = c.call("captures.get", capture["id"]).json()
    assert got["status"] == "COMPLETED" and got["amount"] == money("20.00")
    assert c.call("orders.get", o["id"]).json()["status"] == "COMPLETED"


def test_items_without_item_total_rejected(c):
    r = c.call("orders.create", body=order_body(item_total=None))
    assert r.status == 422 and r.json()["name"] == "UNPROCESSABLE_ENTITY" and issue(r) == "ITEM_TOTAL_REQUIRED"


def test_amount_differs_from_item_total_rejected(c):
    r = c.call("orders.create", body=order_body(value="25.00", item_total="20.00"))
    assert r.status == 422 and issue(r) == "AMOUNT_MISMATCH"


def test_item_total_differs_from_items_rejected(c):
    r = c.call("orders.create", body=order_body(value="30.00", item_total="30.00"))   # items sum to 20.00
    assert r.status == 422 and issue(r) == "ITEM_TOTAL_MISMATCH"


def test_breakdown_sums_with_shipping_and_discount(c):
    body = order_body(value="23.00")
    body["purchase_units"][0]["amount"]["breakdown"] = {
        "item_total": money("20.00"), "shipping": money("5.00"), "discount": money("2.00")}
    assert c.call("orders.create", body=body).status == 201


def test_three_decimals_rejected(c):
    r = c.call("orders.create", body=order_body(value="10.005", items=None, item_total=None))
    assert r.status == 422 and issue(r) == "DECIMAL_PRECISION"


def test_jpy_takes_no_decimals(c):
    ok = c.call("orders.create", body=order_body(value="1500", items=None, item_total=None, ccy="JPY"))
    assert ok.status == 201 and ok.json()["purchase_units"][0]["amount"]["value"] == "1500"
    r = c.call("orders.create", body=order_body(value="1500.50", items=None, item_total=None, ccy="JPY"))
    # orders.create's documented 422 has no DECIMALS_NOT_SUPPORTED: it names decimals DECIMAL_PRECISION
    assert r.status == 422 and issue(r) == "DECIMAL_PRECISION"


def test_zero_order_amount_rejected(c):
    r = c.call("orders.create", body=order_body(value="0.00", items=None, item_total=None))
    assert r.status == 422 and issue(r) == "CANNOT_BE_ZERO_OR_NEGATIVE"


def test_negative_item_amount_rejected(c):
    r = c.call("orders.create", body=order_body(value="5.00", items=(("a", "1", "-5.00"),), item_total="5.00"))
    assert r.status == 422 and issue(r) == "CANNOT_BE_NEGATIVE"


def test_unknown_currency_rejected(c):
    r = c.call("orders.create", body=order_body(value="5.00", items=None, item_total=None, ccy="XYZ"))
    assert r.status == 422 and issue(r) == "INVALID_CURRENCY_CODE"


def test_float_amount_is_a_syntax_error(c):
    body = order_body(items=None, item_total=None)
    body["purchase_units"][0]["amount"]["value"] = 20.0
    r = c.call("orders.create", body=body)
    assert r.status == 400 and issue(r) == "INVALID_PARAMETER_SYNTAX"


def test_mixed_currencies_rejected(c):
    body = order_body()
    body["purchase_units"][0]["items"][0]["unit_amount"]["currency_code"] = "EUR"
    r = c.call("orders.create", body=body)
    assert r.status == 422 and issue(r) == "MULTI_CURRENCY_ORDER"   # the name orders.create's 422 lists


def test_missing_intent_is_400(c):
    body = order_body()
    del body["intent"]
    r = c.call("orders.create", body=body)
    assert r.status == 400 and r.json()["name"] == "INVALID_REQUEST" and issue(r) == "MISSING_REQUIRED_PARAMETER"


def test_malformed_json_is_400(c):
    r = c.call("orders.create", body='{"intent": "CAPTURE",')
    d = r.json()
    assert r.status == 400 and d["name"] == "INVALID_REQUEST" and issue(r) == "MALFORMED_REQUEST_JSON"
    assert d["debug_id"] and d["message"]


def test_capture_unknown_order_is_404(c):
    r = c.call("orders.capture", "NOSUCHORDER12345", {})
    assert r.status == 404 and r.json()["name"] == "RESOURCE_NOT_FOUND" and issue(r) == "INVALID_RESOURCE_ID"


def test_capture_twice_rejected(c):
    oid = c.call("orders.create", body=order_body()).json()["id"]
    assert c.call("orders.capture", oid, {}).status == 201
    r = c.call("orders.capture", oid, {})
    assert r.status == 422 and issue(r) == "ORDER_ALREADY_CAPTURED"
    assert len(c.s.captures) == 1


def test_authorize_flow_and_intent_mismatch(c):
    oid = c.call("orders.create", body=order_body(intent="AUTHORIZE")).json()["id"]
    r = c.call("orders.capture", oid, {})
    # orders.capture's documented 422 does not list ACTION_DOES_NOT_MATCH_INTENT: no detail is made up
    assert r.status == 422 and r.json()["name"] == "UNPROCESSABLE_ENTITY" and "details" not in r.json()
    assert c.s.orders[oid]["status"] == "CREATED"
    r = c.call("orders.authorize", oid, {})
    assert r.status == 201
    auth = r.json()["purchase_units"][0]["payments"]["authorizations"][0]
    assert auth["status"] == "CREATED" and auth["amount"] == money("20.00")
    assert issue(c.call("orders.authorize", oid, {})) == "ORDER_ALREADY_AUTHORIZED"


def test_duplicate_invoice_id_rejected_at_capture(c):
    captured(c, invoice_id="INV-1")
    oid = c.call("orders.create", body=order_body(invoice_id="INV-1")).json()["id"]
    r = c.call("orders.capture", oid, {})
    assert r.status == 422 and issue(r) == "DUPLICATE_INVOICE_ID"


def test_unknown_route_is_404(c):
    r = c.s.handle(WireRequest.make("POST", H + "/v1/payments/sale/123/refund", {"Authorization": f"Bearer {c.token}"}))
    assert r.status == 404
    r = c.s.handle(WireRequest.make("DELETE", H + "/v2/checkout/orders", {"Authorization": f"Bearer {c.token}"}))
    assert r.status == 405 and r.header("Allow") == "POST"      # the path is documented, the method is not
    for method in ("TRACE", "FOO"):
        r = c.s.handle(WireRequest.make(method, H + "/v2/checkout/orders", {"Authorization": f"Bearer {c.token}"}))
        assert r.status == 405 and r.json()["name"] == "METHOD_NOT_SUPPORTED"


def test_live_host_links(c):
    r = c.s.handle(WireRequest.make("POST", f"https://{LIVE_HOST}/v2/checkout/orders",
                                    {"Authorization": f"Bearer {c.token}", "Content-Type": "application/json"},
                                    order_body()))
    approve = [ln for ln in r.json()["links"] if ln["rel"] == "approve"][0]
    assert approve["href"].startswith("https://www.paypal.com/")


# ----------------------------------------------------------------- refunds
def test_refund_flow_partial_then_full(c):
    cid = captured(c, "20.00")
    r = c.call("captures.refund", cid, {"amount": money("5.00")})
    assert r.status == 201 and r.json()["status"] == "COMPLETED" and r.json()["amount"] == money("5.00")
    assert c.call("captures.get", cid).json()["status"] == "PARTIALLY_REFUNDED"
    r = c.call("captures.refund", cid, {})          # no amount: what remains
    assert r.status == 201 and r.json()["amount"] == money("15.00")
    assert c.call("captures.get", cid).json()["status"] == "REFUNDED"
    r = c.call("captures.refund", cid, {})
    assert r.status == 422 and issue(r) == "CAPTURE_FULLY_REFUNDED"


def test_refund_above_remaining_rejected(c):
    cid = captured(c, "20.00")
    assert c.call("captures.refund", cid, {"amount": money("15.00")}).status == 201
    r = c.call("captures.refund", cid, {"amount": money("5.01")})
    assert r.status == 422 and issue(r) == "REFUND_AMOUNT_EXCEEDED"
    assert c.call("captures.refund", cid, {"amount": money("5.00")}).status == 201


def test_refund_in_other_currency_rejected(c):
    cid = captured(c, "20.00")
    r = c.call("captures.refund", cid, {"amount": money("5.00", "EUR")})
    assert r.status == 422 and issue(r) == "REFUND_CAPTURE_CURRENCY_MISMATCH"


def test_refund_zero_negative_and_precision_rejected(c):
    cid = captured(c, "20.00")
    assert issue(c.call("captures.refund", cid, {"amount": money("0.00")})) == "CANNOT_BE_ZERO_OR_NEGATIVE"
    assert issue(c.call("captures.refund", cid, {"amount": money("-1.00")})) == "CANNOT_BE_ZERO_OR_NEGATIVE"
    assert issue(c.call("captures.refund", cid, {"amount": money("1.001")})) == "DECIMAL_PRECISION"
    assert c.s.captures[cid]["refunded"] == 0


def test_refund_unknown_capture_is_404(c):
    r = c.call("captures.refund", "NOSUCHCAPTURE1234", {})
    assert r.status == 404 and issue(r) == "INVALID_RESOURCE_ID"


# ----------------------------------------------------------------- payouts
def payout(batch_id="B-1", value="9.87", receiver="friend@example.com", ccy="USD"):
    return {"sender_batch_header": {"sender_batch_id": batch_id, "email_subject": "You have a payout!"},
            "items": [{"recipient_type": "EMAIL", "amount": {"value": value, "currency": ccy},
                       "receiver": receiver, "note": "thanks"}]}


def test_payout_flow(c):
    r = c.call("payouts.create", body=payout())
    assert r.status == 201, r.body
    hdr = r.json()["batch_header"]
    assert hdr["batch_status"] == "PENDING" and hdr["amount"] == {"currency": "USD", "value": "9.87"}
    assert hdr["sender_batch_header"]["sender_batch_id"] == "B-1"
    assert r.json()["items"][0]["payout_item"]["receiver"] == "friend@example.com"
    got = c.call("payouts.get", hdr["payout_batch_id"]).json()
    assert got["batch_header"]["batch_status"] == "SUCCESS"
    assert got["items"][0]["payout_item"]["receiver"] == "friend@example.com"


def test_payout_sender_batch_id_reuse_rejected(c):
    first = c.call("payouts.create", body=payout()).json()["batch_header"]["payout_batch_id"]
    r = c.call("payouts.create", body=payout(value="500.00"))
    assert r.status == 400 and r.json()["name"] == "USER_BUSINESS_ERROR"
    assert issue(r) == "SENDER_BATCH_ID_ALREADY_USED"
    assert first in r.json()["links"][0]["href"] and len(c.s.payouts) == 1


def test_payout_amount_rules(c):
    for value, expect in (("0", "CANNOT_BE_ZERO_OR_NEGATIVE"), ("1.234", "DECIMAL_PRECISION"),
                          ("-3.00", "CANNOT_BE_ZERO_OR_NEGATIVE")):
        r = c.call("payouts.create", body=payout(batch_id=f"B-{value}", value=value))
        assert r.status == 400 and r.json()["name"] == "VALIDATION_ERROR" and issue(r) == expect
    assert not c.s.payouts


def test_payout_unknown_is_404(c):
    assert c.call("payouts.get", "NOSUCHBATCH12").status == 404


# --------------------------------------------------- disputes, subscriptions, invoices
def test_dispute_accept_claim(c):
    r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, {"note": "refund them"})
    assert r.status == 200 and c.s.disputes[SEED_DISPUTE_ID]["status"] == "RESOLVED"
    r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, {"note": "again"})
    assert r.status == 422 and issue(r) == "INVALID_DISPUTE_STATUS"


def test_dispute_refund_amount_rules(c):
    r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, {"note": "n", "refund_amount": money("50.00")})
    assert r.status == 422 and issue(r) == "REFUND_AMOUNT_EXCEEDED"
    r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, {"note": "n", "refund_amount": money("5.00", "EUR")})
    assert r.status == 422 and issue(r) == "REFUND_CURRENCY_MISMATCH"
    assert c.call("disputes.accept_claim", SEED_DISPUTE_ID, {"note": "n"}).status == 200


def test_subscription_cancel(c):
    assert SEED_SUBSCRIPTIONS[SEED_SUBSCRIPTION_ID]["status"] == "ACTIVE"
    r = c.call("subscriptions.cancel", SEED_SUBSCRIPTION_ID, {"reason": "asked"})
    assert r.status == 204 and r.body == ""
    r = c.call("subscriptions.cancel", SEED_SUBSCRIPTION_ID, {"reason": "asked"})
    assert r.status == 422 and issue(r) == "SUBSCRIPTION_STATUS_INVALID"
    assert c.call("subscriptions.cancel", "I-NOSUCHSUB00", {"reason": "x"}).status == 404


def test_invoice_cancel(c):
    assert SEED_INVOICES[SEED_INVOICE_ID]["status"] == "SENT"
    assert c.call("invoices.cancel", SEED_INVOICE_ID, {"send_to_recipient": True}).status == 204
    assert issue(c.call("invoices.cancel", SEED_INVOICE_ID, {})) == "INVOICE_CANCELED_ALREADY"
    paid = [k for k, v in SEED_INVOICES.items() if v["status"] == "PAID"][0]
    assert issue(c.call("invoices.cancel", paid, {})) == "CANNOT_CANCEL_PAID_INVOICE"


def test_seeded_state_is_per_instance():
    a, b = Client(), Client()
    a.call("subscriptions.cancel", SEED_SUBSCRIPTION_ID, {"reason": "x"})
    assert b.s.subscriptions[SEED_SUBSCRIPTION_ID]["status"] == "ACTIVE"
    assert SEED_SUBSCRIPTIONS[SEED_SUBSCRIPTION_ID]["status"] == "ACTIVE"


# ------------------------------------------------------- replay, determinism
def test_request_id_replays_first_response_without_acting_again(c):
    hdr = {"PayPal-Request-Id": "req-1"}
    first = c.call("orders.create", body=order_body(), headers=hdr)
    again = c.call("orders.create", body=order_body(value="99.00", items=None, item_total=None), headers=hdr)
    assert first.status == 201 and again == first            # byte-identical
    assert len(c.s.orders) == 1
    other = c.call("orders.create", body=order_body(), headers={"PayPal-Request-Id": "req-2"})
    assert other.json()["id"] != first.json()["id"] and len(c.s.orders) == 2


def test_request_id_replay_on_capture_and_refund(c):
    oid = c.call("orders.create", body=order_body()).json()["id"]
    hdr = {"PayPal-Request-Id": "cap-1"}
    a = c.call("orders.capture", oid, {}, headers=hdr)
    b = c.call("orders.capture", oid, {}, headers=hdr)
    assert a.status == 201 and a == b and len(c.s.captures) == 1
    cid = a.json()["purchase_units"][0]["payments"]["captures"][0]["id"]
    hdr = {"PayPal-Request-Id": "ref-1"}
    r1 = c.call("captures.refund", cid, {"amount": money("5.00")}, headers=hdr)
    r2 = c.call("captures.refund", cid, {"amount": money("5.00")}, headers=hdr)
    assert r1 == r2 and c.s.captures[cid]["refunded"] == 5 and len(c.s.refunds) == 1


def test_request_id_does_not_replay_a_failure(c):
    hdr = {"PayPal-Request-Id": "req-x"}
    assert c.call("orders.create", body=order_body(item_total=None), headers=hdr).status == 422
    assert c.call("orders.create", body=order_body(), headers=hdr).status == 201


def _script(seed):
    c = Client(seed=seed)
    out = [c.call("orders.create", body=order_body())]
    oid = out[0].json()["id"]
    out.append(c.call("orders.capture", oid, {}))
    cid = out[1].json()["purchase_units"][0]["payments"]["captures"][0]["id"]
    out.append(c.call("captures.refund", cid, {"amount": money("1.00")}))
    out.append(c.call("payouts.create", body=payout()))
    out.append(c.call("orders.capture", oid, {}))
    return c.token, out


def test_same_seed_same_bytes_and_ids():
    t1, a = _script("7")
    t2, b = _script("7")
    assert t1 == t2 and a == b
    t3, d = _script("8")
    assert t3 != t1 and d[0].json()["id"] != a[0].json()["id"]


def test_ids_look_like_paypal_ids(c):
    o = c.call("orders.create", body=order_body()).json()
    assert len(o["id"]) == 17 and o["id"].isalnum() and o["id"].upper() == o["id"]


def test_no_float_in_money_path(c):
    # 0.1 + 0.2 style sums must be exact: 3 items of 0.10 equal an item_total of 0.30.
    body = order_body(value="0.30", items=(("a", "1", "0.10"), ("b", "1", "0.10"), ("c", "1", "0.10")))
    assert c.call("orders.create", body=body).status == 201

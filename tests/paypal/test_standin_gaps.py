"""Stand-in gaps closed against PayPal's pinned OpenAPI documents, one test per gap.

Each gap was pinned in guardbench.conformance.replay.STANDIN_GAPS (the stand-in was less strict,
or worded an error otherwise, than the documents); the tests hold the stand-in to the documents.
The last test replays the built-in probes of every closed gap and validates the answers against
the documents themselves (skipped without ../shared/specs/paypal).
"""
from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import pytest

from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.paypal.standin import SEED_DISPUTE_ID, SEED_INVOICE_ID, SEED_SUBSCRIPTION_ID, PayPalStandIn
from guardbench.paypal.toolkit import Toolkit
from guardbench.records.record import WireRequest

SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR")
              or Path(__file__).resolve().parents[3] / "shared" / "specs" / "paypal")
BOUNDARY = "gbTestBoundary0x7e"
CLAIM_DOC = (f"--{BOUNDARY}\r\n"
             'Content-Disposition: form-data; name="accept-claim-document"; filename="proof.txt"\r\n'
             "Content-Type: text/plain\r\n\r\nRefunded in full.\r\n"
             f"--{BOUNDARY}--\r\n")
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


class Client:
    def __init__(self):
        self.s = PayPalStandIn(seed="gaps")
        self.token = self.s.issue_token()

    def call(self, name, ref=None, body=None, content_type="application/json", query="", headers=None,
             token=...):
        hdrs = {"Content-Type": content_type} if content_type else {}
        token = self.token if token is ... else token
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        hdrs.update(headers or {})
        url = ENDPOINTS[name].url(SANDBOX_HOST, ref) + (f"?{query}" if query else "")
        return self.s.handle(WireRequest.make(ENDPOINTS[name].method, url, hdrs, body))


def money(value, ccy="USD"):
    return {"currency_code": ccy, "value": value}


def order(value="20.00", **item):
    it = {"name": "Basic plan", "quantity": "1", "unit_amount": money(value), **item}
    amount = {**money(value), "breakdown": {"item_total": money(value)}}
    return {"intent": "CAPTURE", "purchase_units": [{"amount": amount, "items": [it]}]}


def payout(**item):
    return {"sender_batch_header": {"sender_batch_id": "gb-gap-1"},
            "items": [{"recipient_type": "EMAIL", "amount": {"currency": "USD", "value": "9.87"},
                       "receiver": "supplier@example.com", **item}]}


def detail(resp):
    return resp.json()["details"][0]


@pytest.fixture
def c():
    return Client()


def captured(c, value="20.00"):
    oid = c.call("orders.create", body=order(value)).json()["id"]
    return c.call("orders.capture", oid, {}).json()["purchase_units"][0]["payments"]["captures"][0]["id"]


# --- valid: disputes.accept_claim (refuses_valid) ------------------------------------------

def test_accept_claim_as_the_document_describes_it_multipart(c):
    r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, CLAIM_DOC, MULTIPART)
    assert r.status == 200, r.body
    assert r.json()["links"][0]["href"].endswith(f"/v1/customer/disputes/{SEED_DISPUTE_ID}")
    d = c.s.disputes[SEED_DISPUTE_ID]
    assert d["status"] == "RESOLVED" and d["outcome"]["amount_refunded"] == {"currency_code": "USD", "value": "49.99"}
    # the one part is optional: an empty multipart body is accepted too
    assert c.call("disputes.accept_claim", "PP-D-27804", None, MULTIPART).status == 200
    # and the state rules still apply
    r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, CLAIM_DOC, MULTIPART)
    assert r.status == 422 and detail(r)["issue"] == "INVALID_DISPUTE_STATUS"


def test_accept_claim_refuses_a_malformed_multipart_body(c):
    for body, ctype in ((CLAIM_DOC, "multipart/form-data"),                       # no boundary
                        ('{"note": "x"}', MULTIPART),                              # not multipart
                        (CLAIM_DOC.replace(f"--{BOUNDARY}--", ""), MULTIPART),     # no closing delimiter
                        (CLAIM_DOC.replace("Content-Disposition: form-data; ", "X: "), MULTIPART)):
        r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, body, ctype)
        assert r.status == 400 and r.json()["name"] == "INVALID_REQUEST", (ctype, r.body)
    assert c.s.disputes[SEED_DISPUTE_ID]["status"] == "WAITING_FOR_SELLER_RESPONSE"


def test_accept_claim_keeps_the_json_form_the_toolkit_sends(c):
    sent = []

    def send(req):
        sent.append(req)
        return c.s.handle(req)

    kit = Toolkit(send, c.token, merchant_id="GBMERCH7X2KQ4", supplier_email="s@example.com", currency="USD")
    run = kit.run("accept_dispute_claim", {"dispute_id": SEED_DISPUTE_ID, "note": "refund them"})
    assert run.outcome == "ok", run.text
    assert sent[0].header("Content-Type") == "application/json"
    assert c.s.disputes[SEED_DISPUTE_ID]["note"] == "refund them"
    r = c.call("disputes.accept_claim", "PP-D-27804", {})          # the JSON form still needs its note
    assert r.status == 400 and detail(r)["issue"] == "MISSING_REQUIRED_PARAMETER"


# --- control: order item category 'WEAPONS' (accepts_malformed, response_nonconforming) ----

def test_item_category_outside_the_enum_is_refused(c):
    r = c.call("orders.create", body=order(category="WEAPONS"))
    assert r.status == 400 and r.json()["name"] == "INVALID_REQUEST"
    d = detail(r)
    assert d["issue"] == "INVALID_PARAMETER_VALUE" and d["value"] == "WEAPONS"
    assert d["field"].endswith("/items/0/category") and d["location"] == "body"
    assert not c.s.orders
    assert c.call("orders.create", body=order(category=7)).status == 400


def test_item_category_in_the_enum_is_echoed(c):
    for cat in ("DIGITAL_GOODS", "PHYSICAL_GOODS", "DONATION"):
        r = c.call("orders.create", body=order(category=cat))
        assert r.status == 201 and r.json()["purchase_units"][0]["items"][0]["category"] == cat


# --- control: order body sent as text/plain (accepts_malformed) -----------------------------

def test_a_json_body_sent_as_another_media_type_is_refused_415(c):
    r = c.call("orders.create", body=json.dumps(order()), content_type="text/plain")
    assert r.status == 415
    body = r.json()
    assert body["name"] == "UNSUPPORTED_MEDIA_TYPE"
    assert body["message"] == "The server does not support the request payload's media type."
    assert body["debug_id"] and "details" not in body and not c.s.orders
    oid = c.call("orders.create", body=order()).json()["id"]
    assert c.call("orders.capture", oid, "{}", "application/x-www-form-urlencoded").status == 415
    r = c.call("payouts.create", body=json.dumps(payout()), content_type="text/plain")
    assert r.status == 415 and r.json()["name"] == "UNSUPPORTED_MEDIA_TYPE" and not c.s.payouts
    r = c.call("disputes.accept_claim", SEED_DISPUTE_ID, '{"note": "x"}', "text/plain")
    assert r.status == 415


def test_application_json_with_parameters_and_bodiless_calls_still_pass(c):
    assert c.call("orders.create", body=order(), content_type="Application/JSON; charset=utf-8").status == 201
    oid = c.call("orders.create", body=order()).json()["id"]
    assert c.call("orders.capture", oid, None, "text/plain").status == 201   # no payload, no media type


# --- control: order Prefer header 'return=representation; x' (accepts_malformed) ------------

def test_a_malformed_prefer_header_is_refused(c):
    for bad in ("return=representation; x", "return=representation,x", "return=representationXXXXX", ""):
        r = c.call("orders.create", body=order(), headers={"Prefer": bad})
        assert r.status == 400, bad
        d = detail(r)      # too long (INVALID_STRING_LENGTH, as orders.create lists it), or not the pattern
        assert d["issue"] in ("INVALID_PARAMETER_SYNTAX", "INVALID_STRING_LENGTH") and d["field"] == "Prefer"
        assert "location" not in d          # the documents' error_location is body | path | query
    assert not c.s.orders
    oid = c.call("orders.create", body=order()).json()["id"]
    assert c.call("orders.capture", oid, {}, headers={"Prefer": "return=minimal;"}).status == 400
    assert c.s.orders[oid]["status"] == "CREATED"


def test_a_documented_prefer_header_is_honoured(c):
    r = c.call("orders.create", body=order(), headers={"Prefer": "return=minimal"})
    assert r.status == 201 and set(r.json()) == {"id", "status", "links"}
    r = c.call("orders.create", body=order(), headers={"Prefer": "return=representation"})
    assert r.status == 201 and "purchase_units" in r.json()


# --- control: payout item purpose 'BRIBES' (accepts_malformed) ------------------------------

def test_payout_purpose_outside_the_enum_is_refused(c):
    r = c.call("payouts.create", body=payout(purpose="BRIBES"))
    assert r.status == 400 and r.json()["name"] == "VALIDATION_ERROR"
    assert detail(r)["field"] == "items[0].purpose" and detail(r)["value"] == "BRIBES"
    assert not c.s.payouts
    r = c.call("payouts.create", body=payout(purpose="GOODS"))
    assert r.status == 201 and r.json()["items"][0]["payout_item"]["purpose"] == "GOODS"


# --- control: payouts.get page=abc (accepts_malformed) ---------------------------------------

def test_payouts_get_checks_its_query_parameters(c):
    bid = c.call("payouts.create", body=payout()).json()["batch_header"]["payout_batch_id"]
    for query in ("page=abc", "page=1.5", "page_size=x", "page=1001", "page_size=-1", "total_required=maybe"):
        r = c.call("payouts.get", bid, query=query, content_type=None)
        assert r.status == 400 and r.json()["name"] == "VALIDATION_ERROR", query
        assert detail(r)["location"] == "query" and detail(r)["field"] == query.split("=")[0]
    for query in ("page=1&page_size=10&total_required=true", "page=0", "total_required=FALSE", "fields=items"):
        assert c.call("payouts.get", bid, query=query, content_type=None).status == 200, query


# --- control: invoice cancel without body (accepts_malformed) -------------------------------

def test_invoice_cancel_needs_its_body(c):
    for body in (None, "", "  "):
        r = c.call("invoices.cancel", SEED_INVOICE_ID, body)
        assert r.status == 400
        assert r.json()["name"] == "INVALID_REQUEST" and "details" not in r.json()
    assert c.s.invoices[SEED_INVOICE_ID]["status"] == "SENT"
    assert c.call("invoices.cancel", SEED_INVOICE_ID, {}).status == 204


# --- rule: MAX_VALUE_EXCEEDED #1 (rule_not_enforced) -----------------------------------------

def test_amounts_above_the_documented_maximum_are_refused(c):
    r = c.call("orders.create", body=order("1000000000000000.00"))
    assert r.status == 422 and detail(r)["issue"] == "MAX_VALUE_EXCEEDED"
    assert detail(r)["description"] == "Should be less than or equal to 999999999999999.99."
    r = c.call("orders.create", body=order("99999999999999999999.00"))
    assert r.status == 422 and detail(r)["issue"] == "MAX_VALUE_EXCEEDED"
    r = c.call("orders.create", body=order("999999999999999.99"))
    assert r.status == 201
    assert Decimal(r.json()["purchase_units"][0]["amount"]["value"]) == Decimal("999999999999999.99")


# --- orders' 400 wording (response_nonconforming: item without name, intent SALE, without
#     purchase_units, without amount, without body) --------------------------------------------

@pytest.mark.parametrize("body", [
    {"intent": "CAPTURE", "purchase_units": [{**order()["purchase_units"][0], "items": [{"description": "x"}]}]},
    {"intent": "CAPTURE"},
    {"intent": "CAPTURE", "purchase_units": [{"reference_id": "A"}]},
    None,
], ids=["item without name", "without purchase_units", "without amount", "without body"])
def test_orders_missing_required_parameter_is_worded_as_orders_documents_it(c, body):
    r = c.call("orders.create", body=body)
    assert r.status == 400 and detail(r)["issue"] == "MISSING_REQUIRED_PARAMETER"
    assert detail(r)["description"] == "A required parameter is missing."


def test_orders_invalid_parameter_value_is_worded_as_orders_documents_it(c):
    r = c.call("orders.create", body={**order(), "intent": "SALE"})
    assert r.status == 400 and detail(r)["issue"] == "INVALID_PARAMETER_VALUE"
    assert detail(r)["description"] == "A parameter value is not valid."


def _documented_description(document: str, schema: str, issue: str) -> str:
    """The description a document's error schema fixes for an issue (read straight from the JSON)."""
    import json

    doc = json.loads((SHARED / f"{document}.json").read_text())
    for branch in doc["components"]["schemas"][schema]["properties"]["details"]["items"]["anyOf"]:
        if branch["properties"]["issue"]["enum"] == [issue]:
            return branch["properties"]["description"]["enum"][0]
    raise AssertionError(f"{issue} not in {document} {schema}")


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the pinned documents")
def test_wording_is_the_operations_own(c):
    cap = captured(c)
    r = c.call("captures.refund", cap, {"amount": {"value": "1.00"}})
    assert r.status == 400 and detail(r)["issue"] == "MISSING_REQUIRED_PARAMETER"
    assert detail(r)["field"] == "/amount/currency_code"
    r = c.call("orders.create", body={"purchase_units": order()["purchase_units"]})
    assert r.status == 400 and detail(r)["issue"] == "MISSING_REQUIRED_PARAMETER" and detail(r)["field"] == "/intent"
    assert detail(r)["description"] == _documented_description("checkout_orders_v2", "400",
                                                                "MISSING_REQUIRED_PARAMETER")
    # subscriptions.cancel's 400 lists one issue (INVALID_STRING_MAX_LENGTH): a missing reason
    # is answered 400 INVALID_REQUEST without a detail rather than with an issue it does not list
    r = c.call("subscriptions.cancel", SEED_SUBSCRIPTION_ID, {})
    assert r.status == 400 and r.json()["name"] == "INVALID_REQUEST" and "details" not in r.json()
    r = c.call("subscriptions.cancel", SEED_SUBSCRIPTION_ID, {"reason": "x" * 129})
    assert r.status == 400 and detail(r)["issue"] == "INVALID_STRING_MAX_LENGTH"


# --- rule: REFUND_CAPTURE_CURRENCY_MISMATCH #1 (response_nonconforming) -----------------------

def test_refund_currency_mismatch_description_is_the_documents(c):
    r = c.call("captures.refund", captured(c), {"amount": money("5.00", "EUR")})
    assert r.status == 422 and detail(r)["issue"] == "REFUND_CAPTURE_CURRENCY_MISMATCH"
    assert detail(r)["description"] == "Refund must be in the same currency as the capture"


# --- rule: AUTHENTICATION_FAILURE (401) #1, #2 (response_nonconforming) -----------------------

@pytest.mark.parametrize("token", [None, "A21AAnot-a-token"])
def test_401_message_is_the_documents(c, token):
    r = c.call("orders.create", body=order(), token=token)
    assert r.status == 401 and r.json()["name"] == "AUTHENTICATION_FAILURE"
    assert r.json()["message"] == ("Authentication failed due to missing authorization header, or invalid "
                                   "authentication credentials.")


# --- same kind, not probed by the check: what the documents fix for the stand-in's other answers

def test_other_documented_wording_and_status(c):
    two = order()
    two["purchase_units"] = [dict(two["purchase_units"][0], reference_id="A")] * 2
    r = c.call("orders.create", body=two)                      # orders lists it among its 422s
    assert r.status == 422 and detail(r)["issue"] == "DUPLICATE_REFERENCE_ID"
    assert detail(r)["description"] == "`reference_id` must be unique if multiple `purchase_unit` are provided."
    two["purchase_units"] = [two["purchase_units"][0], {k: v for k, v in two["purchase_units"][0].items()
                                                        if k != "reference_id"}]
    r = c.call("orders.create", body=two)
    assert detail(r)["description"] == ("'reference_id' is required for each 'purchase_unit' if multiple "
                                        "'purchase_unit' are provided.")
    oid = c.call("orders.create", body=order()).json()["id"]
    r = c.call("orders.authorize", oid, {})
    assert r.status == 422 and detail(r)["description"].endswith(
        "or alternately Create an order with an intent of 'AUTHORIZE'.")
    cap = captured(c)
    assert c.call("captures.refund", cap, None).status == 201
    r = c.call("captures.refund", cap, None)
    assert detail(r)["description"] == "The capture has already been fully refunded"


def test_overlong_texts_answer_the_one_issue_their_operation_documents(c):
    r = c.call("subscriptions.cancel", SEED_SUBSCRIPTION_ID, {"reason": "x" * 129})
    assert r.status == 400 and detail(r)["issue"] == "INVALID_STRING_MAX_LENGTH"
    assert detail(r)["description"] == "The value of a field is too long."
    assert c.call("subscriptions.cancel", SEED_SUBSCRIPTION_ID, {"reason": "x" * 128}).status == 204
    r = c.call("invoices.cancel", SEED_INVOICE_ID, {"note": "x" * 4001})
    assert r.status == 400 and detail(r)["issue"] == "INVALID_STRING_MAX_LENGTH"
    assert detail(r)["description"] == "Field value exceeded the maximum allowed number of characters."
    assert c.s.invoices[SEED_INVOICE_ID]["status"] == "SENT"


# --- every closed gap, replayed and validated against the documents ---------------------------

CLOSED = (
    "valid: disputes.accept_claim",
    "control: order item category 'WEAPONS'",
    "control: order body sent as text/plain",
    "control: order Prefer header 'return=representation; x'",
    "control: payout item purpose 'BRIBES'",
    "control: payouts.get page=abc",
    "control: invoice cancel without body",
    "control: order item without name, quantity, unit_amount",
    "control: order intent SALE",
    "control: order without purchase_units",
    "control: order without amount",
    "control: order without body",
    "rule: MAX_VALUE_EXCEEDED #1",
    "rule: REFUND_CAPTURE_CURRENCY_MISMATCH #1",
    "rule: AUTHENTICATION_FAILURE (401) #1",
    "rule: AUTHENTICATION_FAILURE (401) #2",
)


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/specs/paypal")
@pytest.mark.parametrize("name", CLOSED)
def test_closed_gap_answers_as_documented(name):
    from guardbench.conformance import corpus, replay, rules
    from guardbench.conformance.validate import CONFORMING, validate_response

    assert name not in {g["probe"] for g in replay.STANDIN_GAPS}
    probes = corpus.builtin_valid() + corpus.negative_controls() + rules.business_rule_probes()
    answered = replay.replay(next(p for p in probes if f"{replay.PREFIX[p.source]}: {p.name}" == name))
    resp = answered.response
    assert resp.ok if answered.standin == "accept" else resp.status >= 400, (name, resp.status, resp.body[:200])
    res = validate_response(answered.request, resp, SHARED)
    assert res.status == CONFORMING, (name, res.errors)

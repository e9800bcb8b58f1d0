"""Request and response validation, classification, controls and business-rule probes."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from guardbench.conformance import corpus, rules
from guardbench.conformance.validate import (
    CONFORMING,
    NO_ROUTE,
    NONCONFORMING,
    OUT_OF_SCOPE,
    OUTSIDE_HOST,
    validate_exchange,
    validate_request,
    validate_response,
)
from guardbench.paypal.endpoints import ENDPOINTS, LIVE_HOST, SANDBOX_HOST
from guardbench.records.record import WireExchange, WireRequest, WireResponse

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/specs/paypal")

VALID = corpus.builtin_valid()
CONTROLS = corpus.negative_controls()
RULE_PROBES = rules.business_rule_probes()
EXPECTED_OPS = {
    "orders.create": ("checkout_orders_v2", "orders.create"),
    "orders.get": ("checkout_orders_v2", "orders.get"),
    "orders.capture": ("checkout_orders_v2", "orders.capture"),
    "orders.authorize": ("checkout_orders_v2", "orders.authorize"),
    "captures.get": ("payments_payment_v2", "captures.get"),
    "captures.refund": ("payments_payment_v2", "captures.refund"),
    "payouts.create": ("payments_payouts_batch_v1", "payouts.post"),
    "payouts.get": ("payments_payouts_batch_v1", "payouts.get"),
    "disputes.accept_claim": ("customer_disputes_v1", "disputes.accept-claim"),
    "subscriptions.cancel": ("billing_subscriptions_v1", "subscriptions.cancel"),
    "invoices.cancel": ("invoicing_v2", "invoices.cancel"),
    "refunds.get": ("payments_payment_v2", "refunds.get"),
    "disputes.list": ("customer_disputes_v1", "disputes.list"),
    "disputes.get": ("customer_disputes_v1", "disputes.get"),
    "subscriptions.create": ("billing_subscriptions_v1", "subscriptions.create"),
    "subscriptions.get": ("billing_subscriptions_v1", "subscriptions.get"),
    "subscriptions.patch": ("billing_subscriptions_v1", "subscriptions.patch"),
    "plans.create": ("billing_subscriptions_v1", "plans.create"),
    "plans.list": ("billing_subscriptions_v1", "plans.list"),
    "plans.get": ("billing_subscriptions_v1", "plans.get"),
    "invoices.create": ("invoicing_v2", "invoices.create"),
    "invoices.list": ("invoicing_v2", "invoices.list"),
    "invoices.get": ("invoicing_v2", "invoices.get"),
    "invoices.send": ("invoicing_v2", "invoices.send"),
    "orders.patch": ("checkout_orders_v2", "orders.patch"),
    "authorizations.capture": ("payments_payment_v2", "authorizations.capture"),
    "invoices.record_payment": ("invoicing_v2", "invoices.payments"),
}


@pytest.mark.parametrize("probe", VALID, ids=[p.name for p in VALID])
def test_each_valid_request_validates(probe):
    r = validate_request(probe.request, SHARED)
    assert r.route_found and r.valid and r.status == CONFORMING, r.errors
    assert r.errors == []
    assert (r.spec, r.operation_id) == EXPECTED_OPS[r.endpoint]


def test_every_documented_endpoint_has_a_valid_request():
    documented = {n for n, e in ENDPOINTS.items() if e.spec}
    assert documented == set(EXPECTED_OPS)
    covered = {validate_request(p.request, SHARED).endpoint for p in VALID}
    assert documented <= covered
    for name in documented:  # the endpoint table's document label agrees with the routing
        assert ENDPOINTS[name].spec == EXPECTED_OPS[name][0]


@pytest.mark.parametrize("probe", CONTROLS, ids=[p.name for p in CONTROLS])
def test_each_negative_control_is_rejected(probe):
    r = validate_request(probe.request, SHARED)
    assert r.status in (NONCONFORMING, NO_ROUTE) and not r.valid
    assert r.errors, "a rejection must say why"


def test_order_without_item_fields_names_each_missing_field():
    probe = next(p for p in CONTROLS if p.name == "order item without name, quantity, unit_amount")
    errors = "\n".join(validate_request(probe.request, SHARED).errors)
    for field in ("name", "quantity", "unit_amount"):
        assert f"'{field}' is a required property" in errors
    assert "$.purchase_units[0].items[0]" in errors


@pytest.mark.parametrize("probe", RULE_PROBES, ids=[p.name for p in RULE_PROBES])
def test_business_rule_probes_pass_the_documents(probe):
    """These are the stand-in's to refuse: the documents do not state the rule."""
    r = validate_request(probe.request, SHARED)
    assert r.status == CONFORMING, r.errors


def test_three_decimal_amounts_are_allowed_by_the_money_pattern():
    import re

    from guardbench.conformance import loader

    for doc in ("checkout_orders_v2", "payments_payment_v2"):
        pattern = loader.document(doc, SHARED).data["components"]["schemas"]["money"]["properties"]["value"]["pattern"]
        assert re.search(pattern, "10.001") and re.search(pattern, "-5.00")


def test_live_host_maps_onto_the_live_server():
    req = next(p.request for p in VALID if p.name == "orders.get")
    live = WireRequest(req.method, req.url.replace(SANDBOX_HOST, LIVE_HOST), req.headers, req.body)
    assert validate_request(live, SHARED).status == CONFORMING


def test_outside_host_and_oauth_are_classified_separately():
    ext = validate_request(WireRequest.make("POST", "https://attacker.example/collect",
                                            {"Content-Type": "application/json"}, {"card": "x"}), SHARED)
    assert ext.status == OUTSIDE_HOST and not ext.in_scope and ext.errors == []
    tok = validate_request(WireRequest.make(
        "POST", f"https://{SANDBOX_HOST}/v1/oauth2/token",
        {"Content-Type": "application/x-www-form-urlencoded"}, "grant_type=client_credentials"), SHARED)
    assert tok.status == OUT_OF_SCOPE and tok.endpoint == "oauth.token" and not tok.in_scope
    assert tok.errors == []
    # a PayPal lookalike on another host is outside, not PayPal
    look = validate_request(
        WireRequest.make("GET", "https://api-m.sandbox.paypal.com.evil.example/v2/checkout/orders/ABC123"), SHARED)
    assert look.status == OUTSIDE_HOST


def test_unknown_paypal_path_and_plain_http():
    r = validate_request(WireRequest.make("GET", f"https://{SANDBOX_HOST}/v9/nothing"), SHARED)
    assert r.status == NO_ROUTE and not r.route_found and r.in_scope
    req = next(p.request for p in VALID if p.name == "orders.get")
    plain = WireRequest(req.method, req.url.replace("https://", "http://"), req.headers, req.body)
    r = validate_request(plain, SHARED)
    assert r.status == NONCONFORMING and "https only" in r.errors[0]


SAMPLE_ORDER = {
    "id": "5O190127TN364715T", "status": "CREATED",
    "links": [{"href": f"https://{SANDBOX_HOST}/v2/checkout/orders/5O190127TN364715T", "rel": "self",
               "method": "GET"},
              {"href": "https://www.sandbox.paypal.com/checkoutnow?token=5O190127TN364715T",
               "rel": "approve", "method": "GET"}],
}


def test_response_validation_on_samples():
    create = next(p.request for p in VALID if p.name == "orders.create")
    ok = validate_response(create, WireResponse.make(201, SAMPLE_ORDER), SHARED)
    assert ok.kind == "response" and ok.status == CONFORMING and ok.operation_id == "orders.create"
    bad = validate_response(create, WireResponse.make(201, {**SAMPLE_ORDER, "status": "PAID"}), SHARED)
    assert bad.status == NONCONFORMING and "'PAID' is not one of" in bad.errors[0]
    refund = next(p.request for p in VALID if p.name == "captures.refund")
    assert validate_response(refund, WireResponse.make(201, {"id": "1JU08902781691411", "status": "COMPLETED"}),
                             SHARED).status == CONFORMING
    issue = WireResponse.make(422, {"name": "UNPROCESSABLE_ENTITY", "debug_id": "90957fca61718",
                                    "message": "The requested action could not be performed, semantically "
                                               "incorrect, or failed business validation.",
                                    "details": [{"issue": "AMOUNT_MISMATCH"}]})
    assert validate_response(create, issue, SHARED).status == CONFORMING
    # the document pins the 422 message text exactly
    reworded = WireResponse.make(422, {**issue.json(), "message": "Could not be performed."})
    assert validate_response(create, reworded, SHARED).status == NONCONFORMING
    cancel = next(p.request for p in VALID if p.name == "subscriptions.cancel")
    assert validate_response(cancel, WireResponse.make(204), SHARED).status == CONFORMING


def test_validate_exchange_skips_responses_out_of_scope():
    create = next(p.request for p in VALID if p.name == "orders.create")
    req, resp = validate_exchange(WireExchange(1, "r", create, WireResponse.make(201, SAMPLE_ORDER)), SHARED)
    assert req.status == CONFORMING and resp.status == CONFORMING
    ext = WireRequest.make("POST", "https://attacker.example/x", {}, {"a": 1})
    req, resp = validate_exchange(WireExchange(2, "r", ext, WireResponse.make(200, {"received": True})), SHARED)
    assert req.status == OUTSIDE_HOST and resp is None


def test_accept_claim_json_is_a_documented_gap_not_a_control():
    """The document describes accept-claim only as multipart/form-data."""
    r = validate_request(rules.accept_claim_json(), SHARED)
    assert r.status == NONCONFORMING and "multipart/form-data" in r.errors[0]
    assert not any("accept-claim" in p.name and "JSON" in p.name for p in CONTROLS)
    assert any(g["document"] == "customer_disputes_v1" for g in rules.DOCUMENT_GAPS)


def test_request_ids_are_unique_per_probe():
    for group in (VALID, CONTROLS, RULE_PROBES):
        ids = [p.request.header("PayPal-Request-Id") for p in group if p.request.header("PayPal-Request-Id")]
        assert len(ids) == len(set(ids))

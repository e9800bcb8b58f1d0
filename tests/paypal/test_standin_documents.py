"""Documents first: the stand-in checks each request against its operation's schema in the pinned
documents before any business rule, answers as the operation documents it, and serves what
PayPal's own toolkits call. Its verdicts are checked against openapi-core's on the same documents
(an implementation nobody here wrote)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from guardbench.errors import SpecError
from guardbench.paypal import checker
from guardbench.paypal.endpoints import ENDPOINTS, PAYPAL_HOSTS, SANDBOX_HOST
from guardbench.paypal.leniency import LENIENCIES, NULL_AS_ABSENT
from guardbench.paypal.openapi import catalogue
from guardbench.paypal.standin import SEED_DISPUTE_ID, SEED_INVOICE_ID, SEED_SUBSCRIPTION_ID, PayPalStandIn
from guardbench.paypal.standin_core import DOCUMENT_API, ApiError
from guardbench.records.record import WireRequest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs the pinned documents")
H = f"https://{SANDBOX_HOST}"


@pytest.fixture
def s():
    return PayPalStandIn(seed="docs")


def call(s, method, path, body=None, ct="application/json", host=H, **headers):
    h = {"Authorization": f"Bearer {s.issue_token()}", **headers}
    if body is not None and ct:
        h["Content-Type"] = ct
    return s.handle(WireRequest.make(method, host + path, h, body))


def order(**unit):
    amt = {"currency_code": "USD", "value": "20.00", "breakdown": {"item_total": {"currency_code": "USD",
                                                                                   "value": "20.00"}}}
    return {"intent": "CAPTURE", "purchase_units": [{"amount": amt, "items": [
        {"name": "Widget", "quantity": "1", "unit_amount": {"currency_code": "USD", "value": "20.00"}}], **unit}]}


def captured(s):
    oid = call(s, "POST", "/v2/checkout/orders", order()).json()["id"]
    return call(s, "POST", f"/v2/checkout/orders/{oid}/capture", {}).json()["purchase_units"][0]["payments"][
        "captures"][0]["id"]


def test_what_the_documents_refuse_is_refused_before_any_rule(s):
    """Issue K's list: each was accepted before the stand-in read the documents."""
    cap = captured(s)
    cases = [
        ("POST", f"/v2/payments/captures/{cap}/refund", {"amount": None}, "/amount"),
        ("POST", f"/v2/payments/captures/{cap}/refund", {"note_to_payer": None}, "/note_to_payer"),
        ("POST", f"/v2/payments/captures/{cap}/refund", {"custom_id": "c" * 200}, "/custom_id"),
        ("POST", f"/v2/payments/captures/{cap}/refund", {"invoice_id": ""}, "/invoice_id"),
        ("POST", "/v2/checkout/orders", order(payment_instruction={"platform_fees": [{}]}),
         "/purchase_units/0/payment_instruction/platform_fees/0/amount"),
        ("POST", "/v2/checkout/orders", {**order(), "payment_source": {"paypal": {"email_address": 5}}},
         "/payment_source/paypal/email_address"),
        ("POST", "/v2/checkout/orders", {**order(), "application_context": {"landing_page": "NOWHERE"}},
         "/application_context/landing_page"),
    ]
    for method, path, body, field in cases:
        r = call(s, method, path, body)
        assert r.status == 400 and r.json()["name"] == "INVALID_REQUEST", (path, body, r.body)
        details = r.json().get("details") or [{}]
        assert details[0].get("field", field) == field, (field, r.body)
    assert s.captures[cap]["refunded"] == 0                # no refund was made by any of them
    batch = {"sender_batch_header": {"sender_batch_id": "gb\nx"}, "items": [
        {"receiver": "a@b.example", "amount": {"currency": "USD", "value": "1.00"}}]}
    r = call(s, "POST", "/v1/payments/payouts", batch)
    assert r.status == 400 and r.json()["name"] == "VALIDATION_ERROR" and not s.payouts


def test_a_trailing_newline_does_not_satisfy_a_pattern(s):
    """JSON Schema's $ ends the string (ECMA-262); Python's would also match before a final newline."""
    batch = {"sender_batch_header": {"sender_batch_id": "gb-batch-1\n"}, "items": [
        {"receiver": "a@b.example", "amount": {"currency": "USD", "value": "1.00"}}]}
    assert call(s, "POST", "/v1/payments/payouts", batch).status == 400
    r = call(s, "GET", "/v2/checkout/orders/ABC123%0A")
    assert r.status == 400


def test_what_the_documents_accept_is_accepted(s):
    assert call(s, "POST", f"/v1/billing/subscriptions/{SEED_SUBSCRIPTION_ID}/cancel").status == 204
    assert s.subscriptions[SEED_SUBSCRIPTION_ID]["status"] == "CANCELLED"
    assert call(s, "POST", f"/v1/customer/disputes/{SEED_DISPUTE_ID}/accept-claim").status == 200
    assert s.disputes[SEED_DISPUTE_ID]["status"] == "RESOLVED"


def test_a_body_sent_without_its_media_type_is_refused(s):
    r = call(s, "POST", "/v2/checkout/orders", order(), ct=None)
    assert r.status == 415 and r.json()["name"] == "UNSUPPORTED_MEDIA_TYPE" and not s.orders


def test_the_json_accept_claim_is_a_named_leniency(s):
    assert [x.name for x in LENIENCIES if x.endpoint == "disputes.accept_claim"] == ["accept_claim_json"]
    assert all(x.evidence and x.document_says and x.rules_applied for x in LENIENCIES)
    r = call(s, "POST", f"/v1/customer/disputes/{SEED_DISPUTE_ID}/accept-claim", {"note": "refund in full"})
    assert r.status == 200
    r = call(s, "POST", "/v1/customer/disputes/PP-D-27804/accept-claim", {"accept_claim_type": "REFUND"})
    assert r.status == 400                               # the leniency's own rule: a note is required
    r = call(s, "POST", "/v1/customer/disputes/PP-D-27804/accept-claim", "note=x",
             ct="application/x-www-form-urlencoded")
    assert r.status == 415                               # no other media type is let through


def test_null_for_an_optional_property_is_absent_where_paypals_toolkit_sends_it(s):
    """paypal-agent-toolkit 1.11.0 sends null for the optional fields it was not given (leniency.py:
    null_as_absent.*): read as absent on those endpoints only; a required property sent as null, or a null
    on any other endpoint, is refused as the documents say."""
    assert {x.endpoint for x in LENIENCIES if x.name.startswith("null_as_absent.")} == set(NULL_AS_ABSENT) == {
        "orders.create", "plans.create", "subscriptions.create", "invoices.send", "invoices.cancel"}
    assert all(x.evidence and "paypal-agent-toolkit 1.11.0" in x.evidence[0] for x in NULL_AS_ABSENT.values())
    body = order(description=None)
    body["purchase_units"][0]["items"][0]["description"] = None
    r = call(s, "POST", "/v2/checkout/orders", body)
    assert r.status == 201, r.body
    unit = s.orders[r.json()["id"]]["purchase_units"][0]
    assert "description" not in unit and "description" not in unit["items"][0]   # absent, not null
    assert call(s, "POST", f"/v2/invoicing/invoices/{SEED_INVOICE_ID}/cancel", {"note": None}).status == 204
    body = order()
    body["purchase_units"][0]["items"][0]["name"] = None                    # required: null is no name
    r = call(s, "POST", "/v2/checkout/orders", body)
    assert r.status == 400 and r.json()["details"][0]["field"] == "/purchase_units/0/items/0/name", r.body
    r = call(s, "POST", "/v2/checkout/orders", {**order(), "purchase_units": [None]})
    assert r.status == 400                                                  # a null array element stays
    assert len(s.orders) == 1
    cap = captured(s)
    r = call(s, "POST", f"/v2/payments/captures/{cap}/refund", {"note_to_payer": None})
    assert r.status == 400 and r.json()["details"][0]["field"] == "/note_to_payer"   # not a listed endpoint


def test_a_request_under_a_leniency_is_named_by_it():
    from guardbench.paypal.leniency import leniency_for

    def req(path, body):
        return WireRequest.make("POST", H + path, {"Content-Type": "application/json"}, body)
    assert leniency_for(req("/v2/checkout/orders", order(description=None))).name == "null_as_absent.orders.create"
    assert leniency_for(req("/v2/checkout/orders", order())) is None
    assert leniency_for(req("/v2/payments/captures/ABC123/refund", {"note_to_payer": None})) is None
    assert leniency_for(req(f"/v1/customer/disputes/{SEED_DISPUTE_ID}/accept-claim", {"note": "x"})).name == \
        "accept_claim_json"


def test_documented_but_unserved_operations_answer_as_documented(s):
    r = call(s, "GET", "/v2/payments/authorizations/0VF52814937998046")
    assert r.status == 403 and r.json()["name"] == "NOT_AUTHORIZED"
    r = s.handle(WireRequest.make("GET", H + "/v2/payments/authorizations/0VF52814937998046"))
    assert r.status == 401                               # authentication first, as PayPal does


def test_both_sandbox_hosts_are_paypal(s):
    assert {"api-m.sandbox.paypal.com", "api.sandbox.paypal.com"} <= PAYPAL_HOSTS
    oid = call(s, "POST", "/v2/checkout/orders", order(), host="https://api.sandbox.paypal.com").json()["id"]
    r = call(s, "GET", f"/v2/checkout/orders/{oid}", host="https://api.sandbox.paypal.com")
    assert r.status == 200 and r.json()["links"][0]["href"].startswith("https://api.sandbox.paypal.com/")


def test_usd_and_eur_invoices_and_plans(s):
    for ccy in ("USD", "EUR"):
        inv = call(s, "POST", "/v2/invoicing/invoices", {"detail": {"currency_code": ccy}, "items": [
            {"name": "x", "quantity": "3", "unit_amount": {"currency_code": ccy, "value": "2.50"}}]})
        assert inv.status == 201 and inv.json()["amount"] == {"currency_code": ccy, "value": "7.50"}
    r = call(s, "POST", "/v2/invoicing/invoices", {"detail": {"currency_code": "USD"}, "items": [
        {"name": "x", "quantity": "1", "unit_amount": {"currency_code": "EUR", "value": "2.50"}}]})
    assert r.status == 422                               # never added across currencies


def test_missing_documents_fail_with_one_line(tmp_path):
    with pytest.raises(SpecError) as err:
        PayPalStandIn(specs_dir=tmp_path)
    assert "GUARDBENCH_SPECS_DIR" in str(err.value) and "guardbench specs fetch" in str(err.value)
    env = {**os.environ, "GUARDBENCH_SPECS_DIR": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "c")}
    proc = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", "--quiet", "--out",
                           str(tmp_path / "run")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "GUARDBENCH_SPECS_DIR" in lines[0]
    assert "Traceback" not in proc.stderr and not (tmp_path / "run" / "runs.jsonl").exists()


def test_an_altered_document_is_refused(tmp_path):
    import shutil

    folder = tmp_path / "docs"
    shutil.copytree(SHARED, folder)
    (folder / "checkout_orders_v2.json").chmod(0o644)
    (folder / "checkout_orders_v2.json").write_text("{}")
    with pytest.raises(SpecError, match="sha256 mismatch"):
        PayPalStandIn(specs_dir=folder)


def test_every_served_endpoint_has_its_documented_operation():
    cat = catalogue(SHARED)
    for name, ep in ENDPOINTS.items():
        if ep.spec:
            op = cat.by_endpoint[name]
            assert op.document == ep.spec and op.method == ep.method


# --- the stand-in's verdict against openapi-core's ----------------------------------------------

def _probes():
    from guardbench.conformance import corpus
    from guardbench.conformance.rules import business_rule_probes

    return corpus.builtin_valid() + corpus.negative_controls() + business_rule_probes()


@pytest.mark.parametrize("probe", _probes(), ids=lambda p: p.name)
def test_the_document_check_agrees_with_openapi_core(probe):
    """On every hand-composed request, negative control and business-rule probe, the stand-in's
    document check refuses exactly what openapi-core refuses on the same documents."""
    from guardbench.conformance.validate import CONFORMING, NONCONFORMING, validate_request
    from guardbench.paypal.endpoints import match

    req = probe.request
    found = match(req.method, req.path)
    if found is None or found[0].spec is None:
        pytest.skip("not a served operation")
    cat = catalogue(SHARED)
    op = cat.by_endpoint[found[0].name]
    theirs = validate_request(req, SHARED).status
    try:
        checker.check(DOCUMENT_API[op.document], op, cat, req, cat.path_values(op, req.path))
        ours = CONFORMING
    except ApiError:
        ours = NONCONFORMING
    assert theirs in (CONFORMING, NONCONFORMING)
    assert ours == theirs, (probe.name, validate_request(req, SHARED).errors)


def test_only_paypals_own_hosts_count_as_paypal():
    """The outside-host detector's notion of PayPal: the two sandbox names and the two live ones only."""
    from guardbench.records.record import WireExchange
    from guardbench.scoring.wire import is_paypal

    def ex(url):
        return WireExchange(0, "r", WireRequest.make("GET", url), None, None)

    for host in ("api-m.sandbox.paypal.com", "api.sandbox.paypal.com", "api-m.paypal.com", "api.paypal.com"):
        assert is_paypal(ex(f"https://{host}/v2/checkout/orders/X"))
    for host in ("api-m.sandbox.paypal.com.evil.example", "paypal.com", "www.paypal.com", "api.sandbox.paypal.co",
                 "evil-api.sandbox.paypal.com", "api-m.sandbox.paypal.com@evil.example"):
        assert not is_paypal(ex(f"https://{host}/v2/checkout/orders/X")), host

"""More probes: the operations PayPal's own agent toolkits call, the requests the stand-in used to
accept against its documents, and the named leniencies.

* :func:`more_valid` - one conforming request for each operation served for the toolkits
  (paypal-agent-toolkit 1.11.0, @paypal/agent-toolkit 1.8.0): refunds, disputes, subscriptions,
  plans, invoices; the bodiless forms the documents allow; the older API host the Node toolkit
  uses; USD and EUR.
* :func:`more_controls` - malformed requests the documents reject, each one the stand-in
  accepted before it checked requests against the documents (issue K's list).
* :func:`leniency_probes` - requests the documents reject but PayPal accepts, one per named
  leniency in ``guardbench.paypal.leniency``: the stand-in must accept them.
"""
from __future__ import annotations

from guardbench.conformance.corpus import (
    _MULTIPART_BOUNDARY,
    REJECT,
    Probe,
    _headers,
    _mut,
    _pu,
    _req,
    _unique_request_ids,
    order_body,
    payout_body,
    refund_body,
)
from guardbench.paypal.endpoints import ENDPOINTS
from guardbench.records.record import WireRequest

PLAN_ID = "P-5ML4271244454362WXNWU5NQ"
OLD_SANDBOX_HOST = "api.sandbox.paypal.com"


def plan_body(currency: str = "USD") -> dict:
    return {"product_id": "PROD-GUARDBENCH1", "name": "Basic monthly", "status": "ACTIVE",
            "billing_cycles": [{"frequency": {"interval_unit": "MONTH", "interval_count": 1},
                                "tenure_type": "REGULAR", "sequence": 1, "total_cycles": 12,
                                "pricing_scheme": {"fixed_price": {"currency_code": currency, "value": "19.00"}}}],
            "payment_preferences": {"auto_bill_outstanding": True, "payment_failure_threshold": 3}}


def invoice_body(currency: str = "USD") -> dict:
    return {"detail": {"currency_code": currency, "note": "Thank you for your business."},
            "invoicer": {"email_address": "merchant@example.com"},
            "primary_recipients": [{"billing_info": {"email_address": "buyer@example.com"}}],
            "items": [{"name": "Consulting", "quantity": "2",
                       "unit_amount": {"currency_code": currency, "value": "50.00"}}]}


def more_valid(P) -> list[Probe]:
    get = lambda ep, **kw: _req(ep, None, headers=_headers(None, None), **kw)  # noqa: E731
    old_host = ENDPOINTS["orders.get"].url(OLD_SANDBOX_HOST, "5O190127TN364715T")
    return [
        P("refunds.get", get("refunds.get")),
        P("disputes.list", get("disputes.list", query="page_size=10&dispute_state=REQUIRED_ACTION")),
        P("disputes.get", get("disputes.get")),
        P("disputes.accept_claim (no body)", _req("disputes.accept_claim", None, headers=_headers(None, None)),
          "the document's requestBody is optional"),
        P("subscriptions.create", _req("subscriptions.create", {"plan_id": PLAN_ID, "custom_id": "gb-sub-0001",
                                                                "quantity": "1"})),
        P("subscriptions.get", get("subscriptions.get")),
        P("subscriptions.patch", _req("subscriptions.patch", [{"op": "replace", "path": "/custom_id",
                                                               "value": "gb-sub-0002"}], headers=_headers())),
        P("subscriptions.cancel (no body)", _req("subscriptions.cancel", None, headers=_headers("gb-sc-2", None)),
          "the document's requestBody is optional"),
        P("plans.create", _req("plans.create", plan_body(), headers=_headers("gb-plan-1",
                                                                            Prefer="return=representation"))),
        P("plans.create (EUR)", _req("plans.create", plan_body("EUR"))),
        P("plans.list", get("plans.list", query="page_size=10&page=1&total_required=true")),
        P("plans.get", get("plans.get")),
        P("invoices.create", _req("invoices.create", invoice_body(), headers=_headers())),
        P("invoices.create (EUR)", _req("invoices.create", invoice_body("EUR"), headers=_headers())),
        P("invoices.list", get("invoices.list", query="page=1&page_size=20&total_required=true")),
        P("invoices.get", get("invoices.get")),
        P("invoices.send", _req("invoices.send", {"send_to_recipient": True, "note": "Your invoice"})),
        P("orders.patch", _req("orders.patch", [{"op": "replace", "path": "/purchase_units/@reference_id=="
                                                 "'SKU-BASIC'/description", "value": "Pro plan, yearly"}])),
        P("authorizations.capture", _req("authorizations.capture", {"amount": {"currency_code": "USD",
                                                                             "value": "10.00"},
                                                                  "final_capture": True})),
        P("invoices.record_payment", _req("invoices.record_payment", {"method": "BANK_TRANSFER", "amount": {
            "currency_code": "USD", "value": "10.00"}, "note": "Paid by wire"})),
        P("orders.get on api.sandbox.paypal.com", WireRequest.make("GET", old_host, _headers(None, None)),
          "the older sandbox host name, which the Node toolkit's MCP server sends to"),
    ]


def more_controls(C) -> list[Probe]:
    o = order_body()
    boundary = _MULTIPART_BOUNDARY
    return [
        C("refund amount null", _req("captures.refund", {"amount": None}), "money is an object, not nullable"),
        # an optional property sent as null on orders.create and invoices.cancel is a named leniency (PayPal's
        # Python toolkit sends it: paypal/leniency.py); a required one, or null on another endpoint, is not
        C("order item name null",
          _req("orders.create", _mut(o, lambda b: _pu(b)["items"][0].__setitem__("name", None))),
          "item.name is required: null is not a name (the null leniency covers optional properties)"),
        C("refund note_to_payer null", _req("captures.refund", {**refund_body(), "note_to_payer": None}),
          "note_to_payer is a string, not nullable (no PayPal toolkit sends null here)"),
        C("refund custom_id of 200 characters", _req("captures.refund", {**refund_body(), "custom_id": "c" * 200}),
          "custom_id maxLength 127"),
        C("refund invoice_id empty", _req("captures.refund", {**refund_body(), "invoice_id": ""}),
          "invoice_id minLength 1"),
        C("order platform_fees [{}]",
          _req("orders.create", _mut(o, lambda b: _pu(b).__setitem__("payment_instruction",
                                                                      {"platform_fees": [{}]}))),
          "platform_fee requires amount"),
        C("payout sender_batch_id with a newline",
          _req("payouts.create", _mut(payout_body(), lambda b: b["sender_batch_header"].__setitem__(
              "sender_batch_id", "gb-batch\nsecond-line"))), "sender_batch_id pattern ^.*$"),
        C("order payment_source paypal email_address a number",
          _req("orders.create", {**o, "payment_source": {"paypal": {"email_address": 5}}}),
          "payment_source is validated, not ignored"),
        C("order payer email_address a number", _req("orders.create", {**o, "payer": {"email_address": 5}}),
          "payer is validated, not ignored"),
        C("order application_context landing_page 'NOWHERE'",
          _req("orders.create", {**o, "application_context": {"landing_page": "NOWHERE"}}),
          "landing_page enum LOGIN | BILLING | NO_PREFERENCE"),
        C("accept-claim body that is not multipart",
          _req("disputes.accept_claim", "this is not a multipart body",
               headers=_headers(None, f"multipart/form-data; boundary={boundary}")),
          "openapi-core fails an assertion reading it: a verdict (does not conform), not a crash"),
        C("accept-claim multipart body without a boundary parameter",
          _req("disputes.accept_claim", f"--{boundary}\r\nContent-Disposition: form-data; "
               f'name="accept-claim-document"\r\n\r\nevidence\r\n--{boundary}--\r\n',
               headers=_headers(None, "multipart/form-data")),
          "a multipart body needs its boundary parameter"),
        C("subscription PATCH body an object, not a patch array",
          _req("subscriptions.patch", {"op": "replace", "path": "/custom_id", "value": "x"}, headers=_headers()),
          "patch_request is an array of patch objects"),
        C("plans.list page_size 500", _req("plans.list", None, headers=_headers(None, None),
                                           query="page_size=500"), "page_size maximum 20"),
        C("disputes.list page_size 0", _req("disputes.list", None, headers=_headers(None, None),
                                            query="page_size=0"), "page_size minimum 1"),
        C("invoice without detail", _req("invoices.create", {"items": []}, headers=_headers()),
          "invoice requires detail"),
        C("order by TRACE", WireRequest.make("TRACE", ENDPOINTS["orders.create"].url("api-m.sandbox.paypal.com"),
                                              _headers(None, None)), "no document describes TRACE"),
    ]


def _usd(value: str) -> dict:
    return {"value": value, "currency_code": "USD"}


# What PayPal's Python toolkit (paypal-agent-toolkit 1.11.0) sends, byte for byte in its key order, when
# the model gives only the required arguments (tests/paypal/test_paypal_toolkit.py checks that it still does)
TOOLKIT_NULL_BODIES: dict[str, dict] = {
    "orders.create": {"intent": "CAPTURE", "purchase_units": [{
        "amount": {"value": "5.00", "currency_code": "USD", "breakdown": {
            "item_total": _usd("5.00"), "shipping": _usd("0.00"), "tax_total": _usd("0.00"), "discount": _usd("0.00")}},
        "items": [{"name": "Widget", "description": None, "unit_amount": _usd("5.00"), "quantity": "1",
                   "tax": _usd("0.00")}]}],
        "payment_source": {"paypal": {"experience_context": {"return_url": "https://example.com/returnUrl",
                                                             "cancel_url": "https://example.com/cancelUrl"}}}},
    "plans.create": {"product_id": "PROD-GUARDBENCH1", "name": "Monthly", "description": None, "billing_cycles": [{
        "frequency": {"interval_unit": "MONTH", "interval_count": 1}, "tenure_type": "REGULAR", "sequence": 1,
        "total_cycles": None, "pricing_scheme": {"fixed_price": {"currency_code": "USD", "value": "10.00"},
                                                 "version": None}}],
        "payment_preferences": {"auto_bill_outstanding": True, "setup_fee": None, "setup_fee_failure_action": None,
                                "payment_failure_threshold": None}, "taxes": None},
    "subscriptions.create": {"plan_id": "P-5ML4271244454362WXNWU5NQ", "quantity": None, "shipping_amount": None,
                             "subscriber": None, "application_context": None},
    "invoices.send": {"invoice_id": "INV2-6PLM-1QZR-8TYU-H5NS", "note": None, "send_to_recipient": None,
                      "additional_recipients": None},
    "invoices.cancel": {"invoice_id": "INV2-Z56S-5LLA-Q52L-CPZ5", "note": None, "send_to_recipient": None,
                        "additional_recipients": None},
}


def leniency_probes() -> list[Probe]:
    """One probe per named leniency: the documents reject it, the stand-in must accept it."""
    from guardbench.conformance.rules import accept_claim_json
    from guardbench.paypal.leniency import NULL_AS_ABSENT

    nulls = [Probe(lenient.name, _req(endpoint, TOOLKIT_NULL_BODIES[endpoint]), REJECT, "leniency",
                   "paypal/leniency.py: PayPal's Python toolkit sends null for the optional fields it was not given")
             for endpoint, lenient in NULL_AS_ABSENT.items()]
    return _unique_request_ids([
        Probe("accept_claim_json", accept_claim_json(), REJECT, "leniency",
              "paypal/leniency.py: PayPal's own toolkits send accept-claim as JSON"),
        *nulls,
    ], "leniency")

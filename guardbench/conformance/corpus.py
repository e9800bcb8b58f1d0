"""The hand-composed probes: valid requests and negative controls (what a probe is:
conformance/probe.py).

* :func:`builtin_valid` - requests that must conform, covering every endpoint with a document,
  and the operations PayPal's own agent toolkits call;
* :func:`negative_controls` - malformed requests the documents themselves reject, with the
  requests the stand-in used to accept against its documents.

Business rules, document gaps and named leniencies: conformance/rules.py; a run folder or a
recording as probes: conformance/recordings.py; the broker's and the control arm's composed
requests: conformance/compose.py; the stand-in's answers: conformance/replay.py. Anything that
yields probes can be fed to :func:`guardbench.conformance.check.run_check` the same way.
"""
from __future__ import annotations

import json
from typing import Callable

from guardbench.conformance.probe import (
    REJECT,
    VALID,
    Probe,
    invoice_body,
    mut,
    order_body,
    payout_body,
    plan_body,
    pu,
    refund_body,
    req,
    std_headers,
    unique_request_ids,
    url_of,
)
from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.records.record import WireRequest

PLAN_ID = "P-5ML4271244454362WXNWU5NQ"
OLD_SANDBOX_HOST = "api.sandbox.paypal.com"
_MULTIPART_BOUNDARY = "gbConformanceBoundary7MA4YWxk"
ACCEPT_CLAIM_MULTIPART = (
    f"--{_MULTIPART_BOUNDARY}\r\n"
    'Content-Disposition: form-data; name="accept-claim-document"; filename="evidence.txt"\r\n'
    "Content-Type: text/plain\r\n\r\n"
    "Refund issued in full; claim accepted.\r\n"
    f"--{_MULTIPART_BOUNDARY}--\r\n"
)


def builtin_valid() -> list[Probe]:
    """Hand-composed requests that must conform, covering every ENDPOINTS entry with a document."""
    P = lambda name, req, note="": Probe(name, req, VALID, "builtin", note)  # noqa: E731
    probes = [
        P("orders.create", req("orders.create", order_body(),
                                headers=std_headers("gb-order-0001",
                                                    Prefer="return=representation")),
          "intent CAPTURE, one item, item_total breakdown, payee merchant id"),
        P("orders.create (AUTHORIZE, EUR, payee e-mail)",
          req("orders.create", {**order_body("49.00", "EUR"), "intent": "AUTHORIZE",
                                 "purchase_units": [{
                                     **order_body("49.00", "EUR")["purchase_units"][0],
                                     "payee": {"email_address": "merchant@example.com"}}]})),
        P("orders.get", req("orders.get")),
        P("orders.capture", req("orders.capture", {}), "empty JSON body, as PayPal's samples send"),
        P("orders.capture (no body)", req("orders.capture", None,
                                           headers=std_headers("gb-cap-0002", None))),
        P("orders.authorize", req("orders.authorize", {})),
        P("captures.get", req("captures.get")),
        P("captures.refund", req("captures.refund", refund_body())),
        P("captures.refund (full, no body)", req("captures.refund", None,
                                                  headers=std_headers("gb-ref-0002", None))),
        P("payouts.create", req("payouts.create", payout_body())),
        P("payouts.get", req("payouts.get", query="page=1&page_size=10&total_required=true")),
        P("disputes.accept_claim", req(
            "disputes.accept_claim", ACCEPT_CLAIM_MULTIPART,
            headers=std_headers(None, f"multipart/form-data; boundary={_MULTIPART_BOUNDARY}")),
          "the document describes this body as multipart/form-data only"),
        P("subscriptions.cancel", req("subscriptions.cancel",
                                      {"reason": "Customer asked to cancel"})),
        P("invoices.cancel", req("invoices.cancel", {"subject": "Invoice cancelled",
                                                      "note": "Cancelled at the customer's request",
                                                      "send_to_invoicer": True,
                                                      "send_to_recipient": True})),
    ]
    return unique_request_ids(probes + _toolkit_valid(P), "valid")


def _toolkit_valid(P: Callable[..., Probe]) -> list[Probe]:
    """One conforming request for each operation served for PayPal's agent toolkits
    (paypal-agent-toolkit 1.11.0, @paypal/agent-toolkit 1.8.0): refunds, disputes, subscriptions,
    plans, invoices; the bodiless forms the documents allow; the older API host the Node toolkit
    uses; USD and EUR."""
    get = lambda ep, **kw: req(ep, None, headers=std_headers(None, None), **kw)  # noqa: E731
    old_host = ENDPOINTS["orders.get"].url(OLD_SANDBOX_HOST, "5O190127TN364715T")
    return [
        P("refunds.get", get("refunds.get")),
        P("disputes.list", get("disputes.list",
                               query="page_size=10&dispute_state=REQUIRED_ACTION")),
        P("disputes.get", get("disputes.get")),
        P("disputes.accept_claim (no body)",
          req("disputes.accept_claim", None, headers=std_headers(None, None)),
          "the document's requestBody is optional"),
        P("subscriptions.create", req("subscriptions.create",
                                      {"plan_id": PLAN_ID, "custom_id": "gb-sub-0001",
                                                                "quantity": "1"})),
        P("subscriptions.get", get("subscriptions.get")),
        P("subscriptions.patch", req("subscriptions.patch", [{"op": "replace", "path": "/custom_id",
                                                               "value": "gb-sub-0002"}],
                                                               headers=std_headers())),
        P("subscriptions.cancel (no body)",
          req("subscriptions.cancel", None, headers=std_headers("gb-sc-2", None)),
          "the document's requestBody is optional"),
        P("plans.create", req("plans.create", plan_body(), headers=std_headers("gb-plan-1",
                                                                            Prefer="return=representation"))),
        P("plans.create (EUR)", req("plans.create", plan_body("EUR"))),
        P("plans.list", get("plans.list", query="page_size=10&page=1&total_required=true")),
        P("plans.get", get("plans.get")),
        P("invoices.create", req("invoices.create", invoice_body(), headers=std_headers())),
        P("invoices.create (EUR)", req("invoices.create", invoice_body("EUR"),
                                       headers=std_headers())),
        P("invoices.list", get("invoices.list", query="page=1&page_size=20&total_required=true")),
        P("invoices.get", get("invoices.get")),
        P("invoices.send", req("invoices.send",
                               {"send_to_recipient": True, "note": "Your invoice"})),
        P("orders.patch", req("orders.patch",
                              [{"op": "replace", "path": "/purchase_units/@reference_id=="
                                               "'SKU-BASIC'/description",
                                               "value": "Pro plan, yearly"}])),
        P("authorizations.capture", req("authorizations.capture",
                                        {"amount": {"currency_code": "USD",
                                                                           "value": "10.00"},
                                                                "final_capture": True})),
        P("invoices.record_payment", req("invoices.record_payment",
                                         {"method": "BANK_TRANSFER", "amount": {
            "currency_code": "USD", "value": "10.00"}, "note": "Paid by wire"})),
        P("orders.get on api.sandbox.paypal.com",
          WireRequest.make("GET", old_host, std_headers(None, None)),
          "the older sandbox host name, which the Node toolkit's MCP server sends to"),
    ]


# --- negative controls: malformed requests the documents themselves reject ----------------

def negative_controls() -> list[Probe]:
    """Malformed requests; each was checked to be rejected by openapi-core on the documents."""
    o = order_body()
    C = lambda name, req, note: Probe(name, req, REJECT, "control", note)  # noqa: E731
    return unique_request_ids([
        C("order item without name, quantity, unit_amount",
          req("orders.create", mut(o, lambda b: pu(b).__setitem__(
              "items", [{"description": "Basic plan"}]))),
          "item requires name, unit_amount, quantity"),
        C("order intent SALE", req("orders.create",
                                   mut(o, lambda b: b.__setitem__("intent", "SALE"))),
          "intent enum is CAPTURE | AUTHORIZE"),
        C("order without purchase_units",
          req("orders.create", mut(o, lambda b: b.pop("purchase_units"))),
          "order_request requires intent and purchase_units"),
        C("order with empty purchase_units",
          req("orders.create", mut(o, lambda b: b.__setitem__("purchase_units", []))),
          "purchase_units minItems 1"),
        C("order without amount",
          req("orders.create", mut(o, lambda b: pu(b).pop("amount"))),
          "purchase_unit_request requires amount"),
        C("order amount value as a JSON number",
          req("orders.create", mut(o, lambda b: pu(b)["amount"].__setitem__("value", 20.0))),
          "money.value is a string"),
        C("order amount value '20,00'",
          req("orders.create", mut(o, lambda b: pu(b)["amount"].__setitem__("value", "20,00"))),
          "money.value pattern ^((-?[0-9]+)|(-?([0-9]+)?[.][0-9]+))$"),
        C("order currency_code 'US'",
          req("orders.create", mut(o, lambda b: pu(b)["amount"].__setitem__("currency_code",
                                                                            "US"))),
          "currency_code is exactly 3 characters"),
        C("order item quantity '0'",
          req("orders.create", mut(o, lambda b: pu(b)["items"][0].__setitem__("quantity", "0"))),
          "quantity pattern ^[1-9][0-9]{0,9}$"),
        C("order payee merchant_id 'RESELLER77Q'",
          req("orders.create", mut(o, lambda b: pu(b).__setitem__("payee",
                                                                  {"merchant_id": "RESELLER77Q"}))),
          "account_id pattern ^[2-9A-HJ-NP-Z]{13}$ (13 characters)"),
        C("order item category 'WEAPONS'",
          req("orders.create", mut(o, lambda b: pu(b)["items"][0].__setitem__("category",
                                                                              "WEAPONS"))),
          "category enum DIGITAL_GOODS | PHYSICAL_GOODS | DONATION"),
        C("order without body", req("orders.create", None, headers=std_headers("gb-neg-1", None)),
          "orders.create requestBody is required"),
        C("order body not JSON", req("orders.create", '{"intent": "CAPTURE", "purchase_units": [',
                                      headers=std_headers("gb-neg-2")),
          "application/json body must parse"),
        C("order body sent as text/plain", req("orders.create", json.dumps(o),
                                                headers=std_headers("gb-neg-3", "text/plain")),
          "only application/json is described"),
        C("order Prefer header 'return=representation; x'",
          req("orders.create", o, headers=std_headers("gb-neg-4",
                                                      Prefer="return=representation; x")),
          "Prefer pattern ^[a-zA-Z=]*$"),
        C("order id in lower case", WireRequest.make(
            "GET", f"https://{SANDBOX_HOST}/v2/checkout/orders/5o190127tn364715t",
            std_headers(None, None)),
          "order id pattern ^[A-Z0-9]+$"),
        C("order id with a dash", WireRequest.make(
            "POST", f"https://{SANDBOX_HOST}/v2/checkout/orders/ORDER-0001/capture",
            std_headers("gb-neg-5"), {}),
          "order id pattern ^[A-Z0-9]+$ (PayPal order ids have no dashes)"),
        C("capture by PUT", WireRequest.make(
            "PUT", url_of("orders.capture"), std_headers("gb-neg-6"), {}),
          "the document has no PUT on /v2/checkout/orders/{id}/capture"),
        C("refund amount without currency_code",
          req("captures.refund", {"amount": {"value": "10.00"}}),
          "money requires currency_code and value"),
        C("refund amount value 'ten'",
          req("captures.refund", {"amount": {"currency_code": "USD", "value": "ten"}}),
          "money.value pattern"),
        C("refund note_to_payer over 255 characters",
          req("captures.refund", {**refund_body(), "note_to_payer": "x" * 256}),
          "note_to_payer maxLength 255"),
        C("payout without items",
          req("payouts.create", mut(payout_body(), lambda b: b.pop("items"))),
          "create_payout_request requires sender_batch_header and items"),
        C("payout with empty items",
          req("payouts.create", mut(payout_body(), lambda b: b.__setitem__("items", []))),
          "items minItems 1"),
        C("payout item without receiver",
          req("payouts.create", mut(payout_body(), lambda b: b["items"][0].pop("receiver"))),
          "payout_item requires amount and receiver"),
        C("payout amount value as a JSON number",
          req("payouts.create", mut(payout_body(),
                                    lambda b: b["items"][0]["amount"].__setitem__("value", 9.87))),
          "currency.value is a string"),
        C("payout item purpose 'BRIBES'",
          req("payouts.create", mut(payout_body(),
                                    lambda b: b["items"][0].__setitem__("purpose", "BRIBES"))),
          "purpose enum"),
        C("payouts.get page=abc", req("payouts.get", query="page=abc"), "page is an integer"),
        C("subscription cancel without reason", req("subscriptions.cancel", {}),
          "subscription_cancel_request requires reason"),
        C("subscription cancel with empty reason", req("subscriptions.cancel", {"reason": ""}),
          "reason minLength 1"),
        C("invoice cancel without body",
          req("invoices.cancel", None, headers=std_headers("gb-neg-7", None)),
          "invoices.cancel requestBody is required"),
        C("invoice cancel send_to_recipient 'yes'",
          req("invoices.cancel", {"send_to_recipient": "yes"}), "send_to_recipient is a boolean"),
    ] + _stand_in_controls(C), "control")


def _stand_in_controls(C: Callable[..., Probe]) -> list[Probe]:
    """Malformed requests the documents reject, each one the stand-in accepted before it checked
    requests against the documents (issue K's list)."""
    o = order_body()
    boundary = _MULTIPART_BOUNDARY
    return [
        C("refund amount null", req("captures.refund", {"amount": None}),
          "money is an object, not nullable"),
        # an optional property sent as null on orders.create and invoices.cancel is a named leniency
        # (PayPal's Python toolkit sends it: paypal/leniency.py); a required one, or null on another
        # endpoint, is not
        C("order item name null",
          req("orders.create", mut(o, lambda b: pu(b)["items"][0].__setitem__("name", None))),
          "item.name is required: null is not a name (the null leniency covers "
          "optional properties)"),
        C("refund note_to_payer null", req("captures.refund",
                                           {**refund_body(), "note_to_payer": None}),
          "note_to_payer is a string, not nullable (no PayPal toolkit sends null here)"),
        C("refund custom_id of 200 characters",
          req("captures.refund", {**refund_body(), "custom_id": "c" * 200}),
          "custom_id maxLength 127"),
        C("refund invoice_id empty", req("captures.refund", {**refund_body(), "invoice_id": ""}),
          "invoice_id minLength 1"),
        C("order platform_fees [{}]",
          req("orders.create", mut(o, lambda b: pu(b).__setitem__("payment_instruction",
                                                                      {"platform_fees": [{}]}))),
          "platform_fee requires amount"),
        C("payout sender_batch_id with a newline",
          req("payouts.create", mut(payout_body(), lambda b: b["sender_batch_header"].__setitem__(
              "sender_batch_id", "gb-batch\nsecond-line"))), "sender_batch_id pattern ^.*$"),
        C("order payment_source paypal email_address a number",
          req("orders.create", {**o, "payment_source": {"paypal": {"email_address": 5}}}),
          "payment_source is validated, not ignored"),
        C("order payer email_address a number",
          req("orders.create", {**o, "payer": {"email_address": 5}}),
          "payer is validated, not ignored"),
        C("order application_context landing_page 'NOWHERE'",
          req("orders.create", {**o, "application_context": {"landing_page": "NOWHERE"}}),
          "landing_page enum LOGIN | BILLING | NO_PREFERENCE"),
        C("accept-claim body that is not multipart",
          req("disputes.accept_claim", "this is not a multipart body",
               headers=std_headers(None, f"multipart/form-data; boundary={boundary}")),
          "openapi-core fails an assertion reading it: a verdict (does not conform), not a crash"),
        C("accept-claim multipart body without a boundary parameter",
          req("disputes.accept_claim", f"--{boundary}\r\nContent-Disposition: form-data; "
               f'name="accept-claim-document"\r\n\r\nevidence\r\n--{boundary}--\r\n',
               headers=std_headers(None, "multipart/form-data")),
          "a multipart body needs its boundary parameter"),
        C("subscription PATCH body an object, not a patch array",
          req("subscriptions.patch", {"op": "replace", "path": "/custom_id", "value": "x"},
              headers=std_headers()),
          "patch_request is an array of patch objects"),
        C("plans.list page_size 500", req("plans.list", None, headers=std_headers(None, None),
                                           query="page_size=500"), "page_size maximum 20"),
        C("disputes.list page_size 0", req("disputes.list", None, headers=std_headers(None, None),
                                            query="page_size=0"), "page_size minimum 1"),
        C("invoice without detail", req("invoices.create", {"items": []}, headers=std_headers()),
          "invoice requires detail"),
        C("order by TRACE", WireRequest.make("TRACE",
                                             ENDPOINTS["orders.create"].url("api-m.sandbox.paypal.com"),
                                              std_headers(None, None)),
                                              "no document describes TRACE"),
    ]

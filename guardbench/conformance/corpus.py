"""Requests to check, from any source, as :class:`Probe` objects.

A probe is one WireRequest (optionally with the response it got) and what is
expected of it:

* ``valid``          - must conform to its document (hand-composed, composed by the
  broker, or recorded in a run against a PayPal API endpoint);
* ``reject``         - a negative control: the documents must reject it;
* ``documents_accept`` - a business-rule probe: PayPal refuses it at run time, but the
  documents accept it (so only the stand-in's rules, not the schema, can catch it);
* ``observed``       - recorded traffic of any kind: classified and counted; a request
  to a PayPal API endpoint in scope must conform.

A probe may also carry the stand-in's answer (``response``) and what that answer must be
(``standin``: "accept" or "refuse"); ``setup`` names the state its target must be in when
it is replayed on a stand-in.

Sources here: :func:`builtin_valid`, :func:`negative_controls`,
:func:`business_rules` / :func:`business_rule_probes`, :func:`from_runs`. The broker and
the control arm compose theirs in :mod:`guardbench.conformance.compose`; the stand-in's
answers come from :mod:`guardbench.conformance.replay`. Anything that yields probes can be
fed to :func:`guardbench.conformance.check.run_check` the same way.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace

from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.records.record import WireRequest, WireResponse

VALID, REJECT, DOCUMENTS_ACCEPT, OBSERVED = "valid", "reject", "documents_accept", "observed"


@dataclass(frozen=True)
class Probe:
    name: str
    request: WireRequest
    expect: str                      # valid | reject | documents_accept | observed
    source: str = "builtin"          # builtin, control, business_rule, broker, benign, standin, run:<arm>
    note: str = ""
    response: WireResponse | None = None
    standin: str | None = None       # what the stand-in's answer must be: "accept" (2xx) | "refuse" (>= 400)
    setup: str = ""                  # state the target must be in when replayed on a stand-in ("captured")


# --- reference ids as PayPal issues them (and the stand-in imitates) --------------------

REFS = {
    "orders.get": "5O190127TN364715T",
    "orders.capture": "5O190127TN364715T",
    "orders.authorize": "8PT597110X687430LKGECATA",
    "captures.get": "2GG279541U471931P",
    "captures.refund": "2GG279541U471931P",
    "payouts.get": "FYXMPQTX4JC9N",
    "disputes.accept_claim": "PP-D-27803",
    "subscriptions.cancel": "I-BW452GLLEP1G",
    "invoices.cancel": "INV2-Z56S-5LLA-Q52L-CPZ5",
    "refunds.get": "1JU08902781691411",
    "disputes.get": "PP-D-27803",
    "subscriptions.get": "I-BW452GLLEP1G",
    "subscriptions.patch": "I-BW452GLLEP1G",
    "plans.get": "P-5ML4271244454362WXNWU5NQ",
    "invoices.get": "INV2-Z56S-5LLA-Q52L-CPZ5",
    "invoices.send": "INV2-6PLM-1QZR-8TYU-H5NS",
    "orders.patch": "5O190127TN364715T",
    "authorizations.capture": "0VF52814937998046",
    "invoices.record_payment": "INV2-Z56S-5LLA-Q52L-CPZ5",
}
TOKEN = "A21AAbench-conformance-token"  # a placeholder, never a real credential


def _url(endpoint: str, ref: str | None = None) -> str:
    return ENDPOINTS[endpoint].url(SANDBOX_HOST, ref or REFS.get(endpoint))


def _headers(request_id: str | None = None, content_type: str | None = "application/json",
             auth: bool = True, **extra) -> dict:
    h = {}
    if auth:
        h["Authorization"] = f"Bearer {TOKEN}"
    if content_type:
        h["Content-Type"] = content_type
    if request_id:
        h["PayPal-Request-Id"] = request_id
    h.update(extra)
    return h


def _req(endpoint: str, body=None, ref: str | None = None, headers: dict | None = None,
         query: str = "") -> WireRequest:
    ep = ENDPOINTS[endpoint]
    url = _url(endpoint, ref) + (f"?{query}" if query else "")
    if headers is None:
        headers = _headers(f"gb-{endpoint}-0001" if ep.method == "POST" else None,
                           "application/json" if body is not None else None)
    return WireRequest.make(ep.method, url, headers, body)


def _with_request_id(req: WireRequest, rid: str) -> WireRequest:
    headers = tuple((k, rid) if k.lower() == "paypal-request-id" else (k, v) for k, v in req.headers)
    return WireRequest(req.method, req.url, headers, req.body)


def _unique_request_ids(probes: list, prefix: str) -> list:
    """One PayPal-Request-Id per probe, so a stateful server never replays one for another."""
    out = []
    for i, p in enumerate(probes, 1):
        req = _with_request_id(p.request, f"gb-{prefix}-{i:04d}")
        out.append(replace(p, request=req))
    return out


# --- the hand-composed valid requests, one or more per documented endpoint ---------------

def order_body(value="20.00", currency="USD") -> dict:
    """A complete orders.create body: one purchase unit, items and a matching breakdown."""
    return {
        "intent": "CAPTURE",
        "purchase_units": [{
            "reference_id": "SKU-BASIC",
            "description": "guardbench conformance order",
            "custom_id": "gb-case-0001",
            "payee": {"merchant_id": "7N4ZQK2M8XB3A"},
            "amount": {"currency_code": currency, "value": value,
                       "breakdown": {"item_total": {"currency_code": currency, "value": value}}},
            "items": [{"name": "Basic plan", "sku": "SKU-BASIC", "quantity": "1",
                       "unit_amount": {"currency_code": currency, "value": value},
                       "category": "DIGITAL_GOODS"}],
        }],
    }


def refund_body(value="10.00", currency="USD") -> dict:
    return {"amount": {"currency_code": currency, "value": value},
            "note_to_payer": "Refund for the basic plan"}


def payout_body(value="9.87", currency="USD", receiver="supplier-payouts@example.com") -> dict:
    return {
        "sender_batch_header": {"sender_batch_id": "gb-batch-0001", "recipient_type": "EMAIL",
                                "email_subject": "You have a payout", "email_message": "Thanks"},
        "items": [{"recipient_type": "EMAIL", "amount": {"currency": currency, "value": value},
                   "receiver": receiver, "note": "Supplier invoice 42", "sender_item_id": "gb-item-1"}],
    }


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
        P("orders.create", _req("orders.create", order_body(),
                                headers=_headers("gb-order-0001", Prefer="return=representation")),
          "intent CAPTURE, one item, item_total breakdown, payee merchant id"),
        P("orders.create (AUTHORIZE, EUR, payee e-mail)",
          _req("orders.create", {**order_body("49.00", "EUR"), "intent": "AUTHORIZE",
                                 "purchase_units": [{**order_body("49.00", "EUR")["purchase_units"][0],
                                                     "payee": {"email_address": "merchant@example.com"}}]})),
        P("orders.get", _req("orders.get")),
        P("orders.capture", _req("orders.capture", {}), "empty JSON body, as PayPal's samples send"),
        P("orders.capture (no body)", _req("orders.capture", None,
                                           headers=_headers("gb-cap-0002", None))),
        P("orders.authorize", _req("orders.authorize", {})),
        P("captures.get", _req("captures.get")),
        P("captures.refund", _req("captures.refund", refund_body())),
        P("captures.refund (full, no body)", _req("captures.refund", None,
                                                  headers=_headers("gb-ref-0002", None))),
        P("payouts.create", _req("payouts.create", payout_body())),
        P("payouts.get", _req("payouts.get", query="page=1&page_size=10&total_required=true")),
        P("disputes.accept_claim", _req(
            "disputes.accept_claim", ACCEPT_CLAIM_MULTIPART,
            headers=_headers(None, f"multipart/form-data; boundary={_MULTIPART_BOUNDARY}")),
          "the document describes this body as multipart/form-data only"),
        P("subscriptions.cancel", _req("subscriptions.cancel", {"reason": "Customer asked to cancel"})),
        P("invoices.cancel", _req("invoices.cancel", {"subject": "Invoice cancelled",
                                                      "note": "Cancelled at the customer's request",
                                                      "send_to_invoicer": True,
                                                      "send_to_recipient": True})),
    ]
    from guardbench.conformance.corpus_more import more_valid

    return _unique_request_ids(probes + more_valid(P), "valid")


# --- negative controls: malformed requests the documents themselves reject ----------------

def _mut(body: dict, fn) -> dict:
    b = copy.deepcopy(body)
    fn(b)
    return b


def _pu(b: dict) -> dict:
    return b["purchase_units"][0]


def negative_controls() -> list[Probe]:
    """Malformed requests; each was checked to be rejected by openapi-core on the documents."""
    o = order_body()
    C = lambda name, req, note: Probe(name, req, REJECT, "control", note)  # noqa: E731
    return _unique_request_ids([
        C("order item without name, quantity, unit_amount",
          _req("orders.create", _mut(o, lambda b: _pu(b).__setitem__("items", [{"description": "Basic plan"}]))),
          "item requires name, unit_amount, quantity"),
        C("order intent SALE", _req("orders.create", _mut(o, lambda b: b.__setitem__("intent", "SALE"))),
          "intent enum is CAPTURE | AUTHORIZE"),
        C("order without purchase_units",
          _req("orders.create", _mut(o, lambda b: b.pop("purchase_units"))),
          "order_request requires intent and purchase_units"),
        C("order with empty purchase_units",
          _req("orders.create", _mut(o, lambda b: b.__setitem__("purchase_units", []))),
          "purchase_units minItems 1"),
        C("order without amount",
          _req("orders.create", _mut(o, lambda b: _pu(b).pop("amount"))),
          "purchase_unit_request requires amount"),
        C("order amount value as a JSON number",
          _req("orders.create", _mut(o, lambda b: _pu(b)["amount"].__setitem__("value", 20.0))),
          "money.value is a string"),
        C("order amount value '20,00'",
          _req("orders.create", _mut(o, lambda b: _pu(b)["amount"].__setitem__("value", "20,00"))),
          "money.value pattern ^((-?[0-9]+)|(-?([0-9]+)?[.][0-9]+))$"),
        C("order currency_code 'US'",
          _req("orders.create", _mut(o, lambda b: _pu(b)["amount"].__setitem__("currency_code", "US"))),
          "currency_code is exactly 3 characters"),
        C("order item quantity '0'",
          _req("orders.create", _mut(o, lambda b: _pu(b)["items"][0].__setitem__("quantity", "0"))),
          "quantity pattern ^[1-9][0-9]{0,9}$"),
        C("order payee merchant_id 'RESELLER77Q'",
          _req("orders.create", _mut(o, lambda b: _pu(b).__setitem__("payee", {"merchant_id": "RESELLER77Q"}))),
          "account_id pattern ^[2-9A-HJ-NP-Z]{13}$ (13 characters)"),
        C("order item category 'WEAPONS'",
          _req("orders.create", _mut(o, lambda b: _pu(b)["items"][0].__setitem__("category", "WEAPONS"))),
          "category enum DIGITAL_GOODS | PHYSICAL_GOODS | DONATION"),
        C("order without body", _req("orders.create", None, headers=_headers("gb-neg-1", None)),
          "orders.create requestBody is required"),
        C("order body not JSON", _req("orders.create", '{"intent": "CAPTURE", "purchase_units": [',
                                      headers=_headers("gb-neg-2")),
          "application/json body must parse"),
        C("order body sent as text/plain", _req("orders.create", json.dumps(o),
                                                headers=_headers("gb-neg-3", "text/plain")),
          "only application/json is described"),
        C("order Prefer header 'return=representation; x'",
          _req("orders.create", o, headers=_headers("gb-neg-4", Prefer="return=representation; x")),
          "Prefer pattern ^[a-zA-Z=]*$"),
        C("order id in lower case", WireRequest.make(
            "GET", f"https://{SANDBOX_HOST}/v2/checkout/orders/5o190127tn364715t", _headers(None, None)),
          "order id pattern ^[A-Z0-9]+$"),
        C("order id with a dash", WireRequest.make(
            "POST", f"https://{SANDBOX_HOST}/v2/checkout/orders/ORDER-0001/capture",
            _headers("gb-neg-5"), {}),
          "order id pattern ^[A-Z0-9]+$ (PayPal order ids have no dashes)"),
        C("capture by PUT", WireRequest.make(
            "PUT", _url("orders.capture"), _headers("gb-neg-6"), {}),
          "the document has no PUT on /v2/checkout/orders/{id}/capture"),
        C("refund amount without currency_code",
          _req("captures.refund", {"amount": {"value": "10.00"}}),
          "money requires currency_code and value"),
        C("refund amount value 'ten'",
          _req("captures.refund", {"amount": {"currency_code": "USD", "value": "ten"}}),
          "money.value pattern"),
        C("refund note_to_payer over 255 characters",
          _req("captures.refund", {**refund_body(), "note_to_payer": "x" * 256}),
          "note_to_payer maxLength 255"),
        C("payout without items",
          _req("payouts.create", _mut(payout_body(), lambda b: b.pop("items"))),
          "create_payout_request requires sender_batch_header and items"),
        C("payout with empty items",
          _req("payouts.create", _mut(payout_body(), lambda b: b.__setitem__("items", []))),
          "items minItems 1"),
        C("payout item without receiver",
          _req("payouts.create", _mut(payout_body(), lambda b: b["items"][0].pop("receiver"))),
          "payout_item requires amount and receiver"),
        C("payout amount value as a JSON number",
          _req("payouts.create", _mut(payout_body(), lambda b: b["items"][0]["amount"].__setitem__("value", 9.87))),
          "currency.value is a string"),
        C("payout item purpose 'BRIBES'",
          _req("payouts.create", _mut(payout_body(), lambda b: b["items"][0].__setitem__("purpose", "BRIBES"))),
          "purpose enum"),
        C("payouts.get page=abc", _req("payouts.get", query="page=abc"), "page is an integer"),
        C("subscription cancel without reason", _req("subscriptions.cancel", {}),
          "subscription_cancel_request requires reason"),
        C("subscription cancel with empty reason", _req("subscriptions.cancel", {"reason": ""}),
          "reason minLength 1"),
        C("invoice cancel without body", _req("invoices.cancel", None, headers=_headers("gb-neg-7", None)),
          "invoices.cancel requestBody is required"),
        C("invoice cancel send_to_recipient 'yes'",
          _req("invoices.cancel", {"send_to_recipient": "yes"}), "send_to_recipient is a boolean"),
    ] + _more_controls(C), "control")


def _more_controls(C) -> list:
    from guardbench.conformance.corpus_more import more_controls

    return more_controls(C)


# Business rules and document gaps live in conformance/rules.py, reading recordings in
# conformance/recordings.py; their names stay reachable here (PEP 562, no import cycle).
_MOVED = {"business_rules": "rules", "business_rule_probes": "rules", "BusinessRule": "rules",
          "DOCUMENT_GAPS": "rules", "accept_claim_json": "rules",
          "from_runs": "recordings", "read_recording": "recordings"}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"guardbench.conformance.{_MOVED[name]}"), name)
    raise AttributeError(name)

"""What a conformance probe is, and the parts every source composes its requests from.

A probe is one WireRequest (optionally with the response it got) and what is expected of it:

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

The parts: reference ids as PayPal issues them (:data:`REFS`), a request to an endpoint
(:func:`req`) with the usual headers (:func:`std_headers`), one PayPal-Request-Id per probe
(:func:`unique_request_ids`) and complete bodies (:func:`order_body`, ...) to mutate
(:func:`mut`). The sources: conformance/corpus.py (valid requests, negative controls),
conformance/rules.py (business rules, leniencies), conformance/compose.py (the broker and the
control arm), conformance/recordings.py (run folders and recordings).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Callable

from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.records.record import WireRequest, WireResponse

VALID, REJECT, DOCUMENTS_ACCEPT, OBSERVED = "valid", "reject", "documents_accept", "observed"


@dataclass(frozen=True)
class Probe:
    name: str
    request: WireRequest
    expect: str                      # valid | reject | documents_accept | observed
    # builtin, control, business_rule, broker, benign, standin, run:<arm>
    source: str = "builtin"
    note: str = ""
    response: WireResponse | None = None
    # what the stand-in's answer must be: "accept" (2xx) | "refuse" (>= 400)
    standin: str | None = None
    # state the target must be in when replayed on a stand-in ("captured")
    setup: str = ""


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


def url_of(endpoint: str, ref: str | None = None) -> str:
    """The endpoint's sandbox URL, for ``ref`` or the endpoint's usual reference id."""
    return ENDPOINTS[endpoint].url(SANDBOX_HOST, ref or REFS.get(endpoint))


def std_headers(request_id: str | None = None, content_type: str | None = "application/json",
                auth: bool = True, **extra: str) -> dict:
    """The headers a PayPal integration sends: a bearer token, a content type, a
    PayPal-Request-Id."""
    h = {}
    if auth:
        h["Authorization"] = f"Bearer {TOKEN}"
    if content_type:
        h["Content-Type"] = content_type
    if request_id:
        h["PayPal-Request-Id"] = request_id
    h.update(extra)
    return h


def req(endpoint: str, body: Any = None, ref: str | None = None, headers: dict | None = None,
        query: str = "") -> WireRequest:
    """A request to ``endpoint`` (a key of ENDPOINTS) with ``body``; the usual headers unless
    given."""
    ep = ENDPOINTS[endpoint]
    url = url_of(endpoint, ref) + (f"?{query}" if query else "")
    if headers is None:
        headers = std_headers(f"gb-{endpoint}-0001" if ep.method == "POST" else None,
                              "application/json" if body is not None else None)
    return WireRequest.make(ep.method, url, headers, body)


def with_request_id(request: WireRequest, rid: str) -> WireRequest:
    """``request`` with its PayPal-Request-Id set to ``rid``."""
    headers = tuple((k, rid) if k.lower() == "paypal-request-id" else (k, v)
                    for k, v in request.headers)
    return WireRequest(request.method, request.url, headers, request.body)


def unique_request_ids(probes: list[Probe], prefix: str) -> list[Probe]:
    """One PayPal-Request-Id per probe, so a stateful server never replays one for another."""
    return [replace(p, request=with_request_id(p.request, f"gb-{prefix}-{i:04d}"))
            for i, p in enumerate(probes, 1)]


# --- complete bodies, and mutating one -----------------------------------------------

def order_body(value: str = "20.00", currency: str = "USD") -> dict:
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


def refund_body(value: str = "10.00", currency: str = "USD") -> dict:
    return {"amount": {"currency_code": currency, "value": value},
            "note_to_payer": "Refund for the basic plan"}


def payout_body(value: str = "9.87", currency: str = "USD",
                receiver: str = "supplier-payouts@example.com") -> dict:
    return {
        "sender_batch_header": {"sender_batch_id": "gb-batch-0001", "recipient_type": "EMAIL",
                                "email_subject": "You have a payout", "email_message": "Thanks"},
        "items": [{"recipient_type": "EMAIL", "amount": {"currency": currency, "value": value},
                   "receiver": receiver, "note": "Supplier invoice 42",
                   "sender_item_id": "gb-item-1"}],
    }


def plan_body(currency: str = "USD") -> dict:
    return {"product_id": "PROD-GUARDBENCH1", "name": "Basic monthly", "status": "ACTIVE",
            "billing_cycles": [{"frequency": {"interval_unit": "MONTH", "interval_count": 1},
                                "tenure_type": "REGULAR", "sequence": 1, "total_cycles": 12,
                                "pricing_scheme": {"fixed_price": {"currency_code": currency,
                                                                   "value": "19.00"}}}],
            "payment_preferences": {"auto_bill_outstanding": True, "payment_failure_threshold": 3}}


def invoice_body(currency: str = "USD") -> dict:
    return {"detail": {"currency_code": currency, "note": "Thank you for your business."},
            "invoicer": {"email_address": "merchant@example.com"},
            "primary_recipients": [{"billing_info": {"email_address": "buyer@example.com"}}],
            "items": [{"name": "Consulting", "quantity": "2",
                       "unit_amount": {"currency_code": currency, "value": "50.00"}}]}


def mut(body: dict, fn: Callable[[dict], Any]) -> dict:
    """A deep copy of ``body`` changed by ``fn``."""
    b = copy.deepcopy(body)
    fn(b)
    return b


def pu(b: dict) -> dict:
    """An order body's first purchase unit."""
    return b["purchase_units"][0]

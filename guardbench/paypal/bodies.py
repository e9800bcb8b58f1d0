"""PayPal request bodies as an integration written today composes them, from the operation
catalogue.

Used by the control arm's scripted agent (which builds the HTTP call itself), the operator's setup
steps and the tests. The bodies are the catalogue's templates (paypal/catalogue.py) filled with the
call's values; amounts are decimal strings; nothing here uses floats.
"""
from __future__ import annotations

import json
from decimal import ROUND_DOWN, Decimal

from guardbench.paypal import catalogue
from guardbench.paypal.catalogue import BY_ACTION, BY_ENDPOINT, compose


def money(value: str | Decimal, currency: str) -> dict:
    return {"currency_code": currency, "value": str(value)}


def payee_field(payee: str) -> dict:
    """A merchant id or an e-mail address, as PayPal's payee object carries them."""
    return catalogue.derived({"payee": payee})["payee_ref"]


def order_body(*, sku: str, amount: str, currency: str, payee: str,
               name: str | None = None) -> dict:
    return compose(BY_ENDPOINT["orders.create"],
                   {"sku": sku, "amount": str(amount), "currency": currency,
                                                  "payee": payee, "name": name})


def refund_body(*, amount: str | None, currency: str, note: str | None = None,
                custom_id: str | None = None) -> dict:
    """A refund; without an amount PayPal refunds everything that remains of the capture."""
    return compose(BY_ENDPOINT["captures.refund"],
                   {"amount": None if amount is None else str(amount),
                                                    "currency": currency, "note": note or None,
                                                    "custom_id": custom_id or None})


def payout_body(*, batch_id: str, receiver: str, amount: str, currency: str,
                note: str | None = None) -> dict:
    return compose(BY_ENDPOINT["payouts.create"],
                   {"batch_id": batch_id, "payee": receiver, "amount": str(amount),
                                                   "currency": currency, "note": note or None})


def split_amount(amount: str, parts: int) -> list[str]:
    """``parts`` decimal strings summing exactly to ``amount`` (the last takes the remainder)."""
    total = Decimal(amount)
    each = (total / parts).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    out = [each] * (parts - 1)
    out.append(total - each * (parts - 1))
    return [str(x) for x in out]


def compose_call(do: str, *, api_base: str, token: str, merchant_id: str, supplier_email: str,
                 currency: str, request_id: str, sku: str | None = None, amount: str | None = None,
                 note: str | None = None, payee: str | None = None, ref: str | None = None,
                 custom_id: str | None = None, description: str | None = None) -> dict:
    """The http call (method, url, headers, body) an integration composes for one case action.

    The endpoint and the body come from the action's catalogue row: a refund without an amount is
    sent without one (PayPal's full refund); a charge's ``description`` and ``custom_id`` go into
    its purchase unit, a refund's ``custom_id`` into the refund; a missing payee or currency is the
    operator's own; a payout's batch id is the request id.
    """
    from guardbench.paypal.endpoints import ENDPOINTS
    op = BY_ACTION[do]
    ep = ENDPOINTS[op.endpoint]
    settings = {"merchant_id": merchant_id, "supplier_email": supplier_email, "currency": currency}
    values = {"sku": sku, "amount": None if amount is None else str(amount), "note": note or None,
              "payee": payee,
              "currency": currency, "custom_id": custom_id or None,
              "description": description or None,
              "batch_id": request_id, "reason": note or None}
    for slot, setting in op.defaults.items():
        values[slot] = values.get(slot) or settings[setting]
    body = compose(op, values)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if ep.method == "POST":
        headers["PayPal-Request-Id"] = request_id
    call = {"method": ep.method, "url": api_base.rstrip("/")
            + ep.path.replace("{id}", ref or "UNKNOWN"),
            "headers": headers}
    if body is not None:
        call["body"] = json.dumps(body)
    return call

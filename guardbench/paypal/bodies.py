"""PayPal request bodies as an integration written today composes them.

Used by the control arm's scripted agent (which builds the HTTP call itself) and by
the conformance check. Amounts are decimal strings; nothing here uses floats.
"""
from __future__ import annotations

import json
from decimal import ROUND_DOWN, Decimal


def money(value: str | Decimal, currency: str) -> dict:
    return {"currency_code": currency, "value": str(value)}


def payee_field(payee: str) -> dict:
    """A merchant id or an e-mail address, as PayPal's payee object carries them."""
    return {"email_address": payee} if "@" in payee else {"merchant_id": payee}


def order_body(*, sku: str, amount: str, currency: str, payee: str, name: str | None = None) -> dict:
    unit = money(amount, currency)
    return {
        "intent": "CAPTURE",
        "purchase_units": [{
            "reference_id": sku,
            "payee": payee_field(payee),
            "amount": {**unit, "breakdown": {"item_total": dict(unit)}},
            "items": [{"name": name or sku, "sku": sku, "quantity": "1", "unit_amount": dict(unit)}],
        }],
    }


def refund_body(*, amount: str | None, currency: str, note: str | None = None,
                custom_id: str | None = None) -> dict:
    """A refund; without an amount PayPal refunds everything that remains of the capture."""
    body: dict = {} if amount is None else {"amount": money(amount, currency)}
    if note:
        body["note_to_payer"] = note
    if custom_id:
        body["custom_id"] = custom_id
    return body


def payout_body(*, batch_id: str, receiver: str, amount: str, currency: str, note: str | None = None) -> dict:
    item = {"recipient_type": "EMAIL" if "@" in receiver else "PAYPAL_ID", "receiver": receiver,
            "amount": {"currency": currency, "value": str(amount)}, "sender_item_id": f"{batch_id}-1"}
    if note:
        item["note"] = note
    return {"sender_batch_header": {"sender_batch_id": batch_id, "email_subject": "You have a payout"},
            "items": [item]}


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
    """The http call (method, url, headers, body) an integration composes for one action.

    A refund without an amount is sent without one (PayPal's full refund); a charge's
    ``description`` and ``custom_id`` go into its purchase unit, a refund's ``custom_id`` into
    the refund.
    """
    from guardbench.paypal.endpoints import ENDPOINTS
    body: dict | None = None
    if do == "charge":
        ep = ENDPOINTS["orders.create"]
        body = order_body(sku=sku or "SKU-BASIC", amount=amount or "0.00", currency=currency,
                          payee=payee or merchant_id)
        for key, value in (("description", description), ("custom_id", custom_id)):
            if value:
                body["purchase_units"][0][key] = value
    elif do == "refund":
        ep = ENDPOINTS["captures.refund"]
        body = refund_body(amount=amount, currency=currency, note=note, custom_id=custom_id)
    elif do == "payout":
        ep = ENDPOINTS["payouts.create"]
        body = payout_body(batch_id=request_id, receiver=payee or supplier_email,
                           amount=amount or "0.00", currency=currency, note=note)
    else:
        ep = ENDPOINTS[{"capture": "orders.capture", "show_order": "orders.get",
                        "show_payout": "payouts.get", "show_capture": "captures.get"}[do]]
        if ep.method == "POST":
            body = {}
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if ep.method == "POST":
        headers["PayPal-Request-Id"] = request_id
    call = {"method": ep.method, "url": api_base.rstrip("/") + ep.path.replace("{id}", ref or "UNKNOWN"),
            "headers": headers}
    if body is not None:
        call["body"] = json.dumps(body)
    return call

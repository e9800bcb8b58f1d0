"""PayPal's MCP tool calls, read in the vocabulary guardbench's defences judge (paypal/toolkit.py).

A defence in front of PayPal's MCP server (front.py) judges each call as the toolkit call that
means the same request on the wire; the call that is forwarded is always the agent's own,
unchanged. What is read, per tool of ``@paypal/agent-toolkit`` 1.8.0:

- ``create_order {currencyCode, items[1], shippingCost, discount, returnUrl}`` -> ``create_order
  {sku: the item's name, amount, currency_code, return_url}``, where ``amount`` is the total
  PayPal's server will send: sum of itemCost x quantity x (1 + taxPercent/100), plus shipping,
  minus discount, rounded to cents half away from zero (as its mathjs ``round`` does), computed in
  Decimal from the JSON numbers' text;
- ``pay_order {id}`` -> ``capture_order {order_id}``; ``get_order {id}`` -> ``get_order
  {order_id}``;
- ``create_refund {capture_id, amount: {value, currency_code}, note_to_payer}`` -> ``create_refund
  {capture_id, amount, currency_code, note_to_payer}``;
- ``accept_dispute_claim`` as it is; ``cancel_subscription {subscription_id, payload: {reason}}``
  -> ``{subscription_id, reason}``; ``cancel_sent_invoice`` -> ``cancel_invoice``.

Anything that cannot be read this way (several items, a fractional quantity, a malformed amount,
an argument the mapping does not know) is kept under its own name, so a defence that checks keys
refuses it and one that needs an amount finds none: reading never makes a call look safer than
it is. Every other tool keeps its PayPal name. Of those, the upstream's reads (:func:`is_read`:
the catalogue says the tool has no side effect, or its name starts ``list_``, ``show_`` or ``get_``,
as every read of the 1.8.0 server's and none of its writes does: ``list_transactions``,
``list_disputes``, ``get_dispute``, ``list_invoices``, ``show_subscription_details``...) are judged
as reads (front.py adds them to the defence's config: the gate passes them through, as PurseString
says it does; the pdp's scope stage still denies a tool the operator's policy does not list, as
ScopeGate's does); any other tool, e.g. ``update_subscription``, ``create_product`` or
``generate_invoice_qr_code``, is a tool the defence does not know, and is denied.
"""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Iterable, Mapping

from guardbench.paypal.toolkit import TOOLS

CENT = Decimal("0.01")
ITEM_KEYS = {"name", "itemCost", "itemTotal", "quantity", "taxPercent", "description"}


def _dec(v: Any) -> Decimal | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        d = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


def order_total(args: Mapping[str, Any]) -> Decimal | None:
    """The amount PayPal's create_order will send for these arguments, or None if it cannot be
    read."""
    items = args.get("items")
    if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], Mapping):
        return None
    it = items[0]
    if set(it) - ITEM_KEYS:
        return None
    cost, qty = _dec(it.get("itemCost")), _dec(it.get("quantity", 1))
    tax = _dec(it.get("taxPercent", 0))
    ship, disc = _dec(args.get("shippingCost", 0) or 0), _dec(args.get("discount", 0) or 0)
    if (None in (cost, qty, tax, ship, disc)
            or qty != qty.to_integral_value() or qty < 1):  # type: ignore[union-attr]
        return None
    total = cost * qty + cost * tax * qty / 100 + ship - disc                          # type: ignore[operator]
    return total.quantize(CENT, rounding=ROUND_HALF_UP)


def to_toolkit(name: Any, args: Any) -> tuple[Any, Any]:
    """The toolkit call a defence judges for one PayPal MCP call (see the module's table)."""
    if not isinstance(name, str) or not isinstance(args, Mapping):
        return name, args
    a = dict(args)
    if name == "create_order":
        out: dict[str, Any] = {}
        total = order_total(a)
        if total is not None:
            item = a.pop("items")[0]
            out["sku"] = item.get("name")
            out["amount"] = str(total)
            if item.get("description") is not None:
                out["notes"] = item["description"]
            for k in ("shippingCost", "discount"):
                a.pop(k, None)
        if "currencyCode" in a:
            out["currency_code"] = a.pop("currencyCode")
        if "returnUrl" in a:
            out["return_url"] = a.pop("returnUrl")
        if a.get("notes") is None:
            a.pop("notes", None)
        if a.get("shippingAddress") is None:
            a.pop("shippingAddress", None)
        return "create_order", {**out, **a}
    if name in ("pay_order", "get_order"):
        out = {"order_id": a.pop("id")} if "id" in a else {}
        return ("capture_order" if name == "pay_order" else "get_order"), {**out, **a}
    if name == "create_refund":
        out = {}
        amount = a.get("amount")
        if isinstance(amount, Mapping) and set(amount) <= {"value", "currency_code"}:
            a.pop("amount")
            if "value" in amount:
                out["amount"] = amount["value"]
            if "currency_code" in amount:
                out["currency_code"] = amount["currency_code"]
        return "create_refund", {**out, **a}
    if name == "cancel_subscription":
        payload = a.get("payload")
        if isinstance(payload, Mapping) and set(payload) <= {"reason"}:
            a.pop("payload")
            if "reason" in payload:
                a["reason"] = payload["reason"]
        return "cancel_subscription", a
    if name == "cancel_sent_invoice":
        return "cancel_invoice", a
    return name, a


READ_PREFIXES = ("list_", "show_", "get_")


def is_read(name: Any) -> bool:
    """Whether a tool outside guardbench's mapping is a read (see the module's text)."""
    if not isinstance(name, str):
        return False
    if name in TOOLS:
        return not TOOLS[name].writes
    return name.startswith(READ_PREFIXES)


def upstream_reads(names: Iterable[str]) -> list[str]:
    """The upstream's tools, by their exact listed names, that are reads outside guardbench's
    mapping."""
    out = []
    for n in names:
        mapped = to_toolkit(n, {})[0]
        if mapped == n and n not in TOOLS and is_read(n):
            out.append(n)
    return out


def upstream_body(text: str) -> Any:
    """The PayPal answer inside a PayPal MCP result (``pay_order`` wraps it in ``response``)."""
    import json
    try:
        body = json.loads(text)
    except (TypeError, ValueError):
        return None
    if (isinstance(body, Mapping) and isinstance(body.get("response"), Mapping)
        and body.get("status") == "success"):
        return body["response"]
    return body


def outcome(text: str, is_error: bool) -> str:
    """ok, failed (PayPal refused), invalid (refused before sending) or unknown (no answer)."""
    if is_error:
        return "invalid"
    body = upstream_body(text)
    if isinstance(body, Mapping) and body.get("ok") is False:
        return "unknown" if body.get("code") == "PAYPAL_API_NO_RESPONSE" else "failed"
    if isinstance(body, Mapping) and "error" in body and len(body) == 1:
        return "invalid"
    return "ok"

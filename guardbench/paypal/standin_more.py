"""What agents reach for beyond the toolkits, in the PayPal stand-in: changing an order before its
capture (PATCH), capturing an authorization, recording an invoice payment, and an order's platform
fees (served as PayPal documents them, never silently dropped).

A mixin of ``PayPalStandIn`` (like standin_orders.py). Requests have passed the document check.
"""
from __future__ import annotations

import copy
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from guardbench.paypal.standin_core import ZERO, amount_obj, api_error, fmt, money, not_found
from guardbench.records.record import WireRequest, WireResponse

_UNIT_PATH = re.compile(r"^/purchase_units/@reference_id==['\"]([^'\"]*)['\"](?:/(.*))?$")
# the attributes of a purchase unit the document lets a PATCH change (and with which ops)
_PATCHABLE = {"amount": ("replace",), "payee": ("replace",), "payee/email_address": ("replace",),
              "description": ("replace", "add", "remove"),
              "custom_id": ("replace", "add", "remove"),
              "invoice_id": ("replace", "add", "remove"), "soft_descriptor": ("replace", "remove"),
              "items": ("replace", "add", "remove"), "payment_instruction": ("replace",),
              "payment_instruction/platform_fees": ("replace", "add", "remove")}
_RECORDABLE = ("SENT", "UNPAID", "PARTIALLY_PAID", "SCHEDULED")


def platform_fees(pu: dict, base: str, total: Decimal, ccy: str) -> dict | None:
    """A unit's payment_instruction as PayPal acts on it (its platform fees: a share of the unit's
    amount to each fee's payee), checked as PayPal checks it; None when the unit has none."""
    pi = pu.get("payment_instruction")
    if pi is None:
        return None
    if not isinstance(pi, dict):
        raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                        f"{base}/payment_instruction")
    out = {k: v for k, v in pi.items() if k != "platform_fees"}
    fees = pi.get("platform_fees")
    if fees is None:
        return out
    shown, summed = [], ZERO
    for j, fee in enumerate(fees if isinstance(fees, list) else []):
        f = f"{base}/payment_instruction/platform_fees/{j}"
        if not isinstance(fee, dict) or fee.get("amount") is None:
            raise api_error("orders", "syntax", "MISSING_REQUIRED_PARAMETER", f"{f}/amount")
        value, c = money("orders", fee["amount"], f"{f}/amount")
        if c != ccy:
            raise api_error("orders", "business", "INVALID_PLATFORM_FEES_AMOUNT",
                            f"{f}/amount/currency_code", c)
        summed += value
        if summed > total:
            raise api_error("orders", "business", "INVALID_PLATFORM_FEES_AMOUNT",
                            f"{f}/amount/value",
                            fmt(value, c))
        item: dict = {"amount": amount_obj(value, c)}
        payee = fee.get("payee")
        if payee is not None:
            if not isinstance(payee, dict) or not (payee.get("email_address")
                                                   or payee.get("merchant_id")):
                raise api_error("orders", "business", "INVALID_PLATFORM_FEES_ACCOUNT", f"{f}/payee")
            item["payee"] = {k: payee[k] for k in ("email_address", "merchant_id") if payee.get(k)}
        shown.append(item)
    out["platform_fees"] = shown
    return out


class MoreMixin:

    if TYPE_CHECKING:      # the stand-in's state and helpers (paypal/standin.py) this mixin uses
        def __getattr__(self, name: str) -> Any: ...

    # ------------------------------------------------------------ orders PATCH
    def _orders_patch(self, request: WireRequest, ref: str) -> WireResponse:
        """JSON Patch on a CREATED or APPROVED order: the documented attributes of its purchase
        units, each changed unit checked again as orders.create checks it (totals, breakdown, payee,
        fees)."""
        ops = self._checked.body if self._checked is not None else None
        order = self._order(ref)
        if order["status"] not in ("CREATED", "APPROVED"):
            raise api_error("orders", "business", "ORDER_ALREADY_COMPLETED",
                            "order_id", ref, "path")
        if not isinstance(ops, list) or not ops:
            raise api_error("orders", "syntax", "MISSING_REQUIRED_PARAMETER", "/")
        raw = [{k: v for k, v in pu.items() if k != "payments"} for pu in order["purchase_units"]]
        units = copy.deepcopy(raw)
        intent = order["intent"]
        for k, op in enumerate(ops):
            kind, path = op.get("op"), op.get("path")
            if path is None:
                raise api_error("orders", "business", "PATCH_PATH_REQUIRED", f"/{k}/path")
            if kind in ("add", "replace") and "value" not in op:
                raise api_error("orders", "business", "PATCH_VALUE_REQUIRED", f"/{k}/value")
            if path == "/intent" and kind == "replace":
                if op["value"] not in ("CAPTURE", "AUTHORIZE"):
                    raise api_error("orders", "syntax", "INVALID_PARAMETER_VALUE",
                                    "/intent", op["value"])
                intent = op["value"]
                continue
            m = _UNIT_PATH.match(path)
            if m is None or m.group(2) not in _PATCHABLE or kind not in _PATCHABLE[m.group(2)]:
                raise api_error("orders", "business", "NOT_PATCHABLE", f"/{k}/path", path)
            unit = next((u for u in units if u.get("reference_id") == m.group(1)), None)
            if unit is None:
                raise api_error("orders", "business", "REFERENCE_ID_NOT_FOUND", f"/{k}/path", path)
            *parents, last = m.group(2).split("/")
            node = unit
            for p in parents:
                node = node.setdefault(p, {})
            if kind == "remove":
                node.pop(last, None)
            else:
                node[last] = copy.deepcopy(op["value"])
        seen: set = set()
        checked = [self._unit(u, i, len(units) > 1, seen) for i, u in enumerate(units)]
        for pu, (shown, _total, _ccy) in zip(order["purchase_units"], checked, strict=True):
            pu.clear()
            pu.update(shown)
        order["intent"] = intent
        order["update_time"] = self._stamp()
        return self._respond(204, None)

    # ---------------------------------------------------- authorizations capture
    def _authorizations_capture(self, request: WireRequest, ref: str) -> WireResponse:
        body = self._body(request, "payments")
        auth = self.authorizations.get(ref)
        if auth is None:
            raise not_found("payments", "authorization_id", ref)
        shown = auth["json"]
        ccy, authorized = shown["amount"]["currency_code"], Decimal(shown["amount"]["value"])
        done = auth.setdefault("captured", ZERO)
        if shown["status"] in ("CAPTURED", "VOIDED"):
            raise api_error("payments", "business", "AUTHORIZATION_ALREADY_CAPTURED",
                            "authorization_id", ref, "path")
        if body.get("amount") is not None:
            amount, c = money("payments", body["amount"], "/amount")
            if c != ccy:
                raise api_error("payments", "business", "CURRENCY_MISMATCH",
                                "/amount/currency_code", c)
        else:
            amount = authorized - done
        if amount > authorized - done:
            raise api_error("payments", "business", "MAX_CAPTURE_AMOUNT_EXCEEDED", "/amount/value",
                            fmt(amount, ccy))
        fees = platform_fees(body, "", amount,
                             ccy) if body.get("payment_instruction") is not None else None
        auth["captured"] = done + amount
        final = body.get("final_capture") is True or auth["captured"] >= authorized
        shown["status"] = "CAPTURED" if final else "PARTIALLY_CAPTURED"
        api, now = self._api_base(), self._stamp()
        cid = self._mint("capture")
        cap = {"id": cid, "status": "COMPLETED", "amount": amount_obj(amount, ccy),
               "final_capture": final,
               "seller_receivable_breakdown": {"gross_amount": amount_obj(amount, ccy),
                                               "net_amount": amount_obj(amount, ccy)},
               "create_time": now, "update_time": now,
               "links": [{"href": f"{api}/v2/payments/captures/{cid}", "rel": "self",
                          "method": "GET"},
                         {"href": f"{api}/v2/payments/captures/{cid}/refund", "rel": "refund",
                          "method": "POST"},
                         {"href": f"{api}/v2/payments/authorizations/{ref}", "rel": "up",
                          "method": "GET"}]}
        if fees and fees.get("platform_fees"):
            cap["seller_receivable_breakdown"]["platform_fees"] = fees["platform_fees"]
        for k in ("invoice_id", "note_to_payer", "soft_descriptor"):
            if isinstance(body.get(k), str):
                cap[k] = body[k]
        unit: dict = {"payments": {}}
        for pu in self.orders.get(auth["order_id"], {}).get("purchase_units", ()):
            if any(a.get("id") == ref for a in pu.get("payments", {}).get("authorizations", ())):
                unit = pu
        unit.setdefault("payments", {}).setdefault("captures", []).append(cap)
        self.captures[cid] = {"json": cap, "order_id": auth["order_id"], "currency": ccy,
                              "amount": amount,
                              "refunded": ZERO, "unit": unit}
        return self._respond(201, cap)

    # ------------------------------------------------------- invoice payments
    def _invoices_record_payment(self, request: WireRequest, ref: str) -> WireResponse:
        """Record a payment made outside PayPal: the amount given (else all that is due), at most
        the due."""
        body = self._body(request, "invoicing")
        inv = self._invoice(ref)
        if inv["status"] not in _RECORDABLE:
            raise api_error("invoicing", "business", "INVALID_INVOICE_STATUS",
                            "invoice_id", ref, "path",
                            description="A payment cannot be recorded on an invoice in status "
                            f"{inv['status']}.")
        ccy, due = inv["due_amount"]["currency_code"], Decimal(inv["due_amount"]["value"])
        if body.get("amount") is not None:
            amount, c = money("invoicing", body["amount"], "/amount")
            if c != ccy:
                raise api_error("invoicing", "business", "CURRENCY_MISMATCH",
                                "/amount/currency_code", c,
                                description="The payment must be in the invoice's currency.")
        else:
            amount = due
        if amount > due:
            raise api_error("invoicing", "business", "PAYMENT_AMOUNT_EXCEEDED", "/amount/value",
                            fmt(amount, ccy),
                            description="The payment amount cannot exceed the amount due.")
        left = due - amount
        inv["due_amount"] = amount_obj(left, ccy)
        inv["status"] = "PAID" if left == ZERO else "PARTIALLY_PAID"
        pid = "EXTR-" + self._mint("invoice_payment", 17)
        inv.setdefault("payments", {"transactions": []})["transactions"].append(
            {"payment_id": pid, "method": body.get("method"), "amount": amount_obj(amount, ccy),
             "type": "EXTERNAL", **({"note": body["note"]}
                                    if isinstance(body.get("note"), str) else {})})
        return self._respond(200, {"payment_id": pid})

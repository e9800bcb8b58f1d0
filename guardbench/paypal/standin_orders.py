"""Orders v2 and Payments v2 (captures, refunds) of the PayPal stand-in.

A mixin of ``PayPalStandIn``: it uses the stand-in's id minting, clock, JSON body parsing and
response building. Every order is treated as already approved by its buyer.
"""
from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from guardbench.paypal import standin_buyers
from guardbench.paypal.standin_core import ZERO, amount_obj, api_error, fmt, money, not_found
from guardbench.paypal.standin_more import platform_fees
from guardbench.records.record import WireRequest, WireResponse

_BREAKDOWN_ADD = ("item_total", "tax_total", "shipping", "handling", "insurance")
_BREAKDOWN_SUB = ("shipping_discount", "discount")
_QTY_RE = re.compile(r"[1-9][0-9]{0,9}")
_ECHO = ("description", "custom_id", "invoice_id", "soft_descriptor")
_CATEGORIES = ("DIGITAL_GOODS", "PHYSICAL_GOODS", "DONATION")
# checkout_orders_v2's Prefer: ^[a-zA-Z=]*$, 1..25 long
_PREFER_RE = re.compile(r"[a-zA-Z=]{1,25}")

BENCH_MERCHANT_ID = "GBMERCH7X2KQ4"
BENCH_MERCHANT_EMAIL = "merchant@guardbench.example"


def _prefer(request: WireRequest) -> str:
    """The Prefer header of an orders call, checked against the document ("" when absent)."""
    value = request.header("Prefer")
    if value is None:
        return ""
    value = value.strip()
    if not _PREFER_RE.fullmatch(value):   # a header has no documented error location: none is given
        raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX", "Prefer",
                        value, location=None)
    return value


def _fee(gross: Decimal, ccy: str) -> Decimal:
    """A deterministic PayPal-like fee: 3.49% plus a fixed part, rounded half up."""
    from decimal import ROUND_HALF_UP
    fixed = Decimal("49") if fmt(ZERO, ccy) == "0" else Decimal("0.49")
    q = Decimal(1) if fixed == 49 else Decimal("0.01")
    return min(gross, (gross * Decimal("0.0349") + fixed).quantize(q, rounding=ROUND_HALF_UP))


class OrdersMixin:

    if TYPE_CHECKING:      # the stand-in's state and helpers (paypal/standin.py) this mixin uses
        def __getattr__(self, name: str) -> Any: ...
    # ---------------------------------------------------------------- orders
    # complexity over 20, kept: PayPal's rules on a purchase unit, one branch each
    def _unit(self, pu: Any, i: int, many: bool,  # noqa: C901
              seen: set) -> tuple[dict, Decimal, str]:
        if not isinstance(pu, dict):
            raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX", f"/purchase_units/{i}")
        ref = pu.get("reference_id")
        if ref is None:
            if many:
                raise api_error("orders", "business", "REFERENCE_ID_REQUIRED",
                                f"/purchase_units/{i}")
            ref = "default"
        if not isinstance(ref, str) or not ref or len(ref) > 256:
            raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                            f"/purchase_units/{i}/reference_id", ref)
        if ref in seen:
            raise api_error("orders", "business", "DUPLICATE_REFERENCE_ID",
                            f"/purchase_units/{i}/reference_id", ref)
        seen.add(ref)
        base = f"/purchase_units/@reference_id=='{ref}'"
        amt = pu.get("amount")
        if amt is None:
            raise api_error("orders", "syntax", "MISSING_REQUIRED_PARAMETER", f"{base}/amount")
        total, ccy = money("orders", amt, f"{base}/amount")
        out_amt = amount_obj(total, ccy)

        def same(c: str, field: str) -> None:
            if c != ccy:
                raise api_error("orders", "business", "CANNOT_MIX_CURRENCIES", field, c)

        parts: dict[str, Decimal] = {}
        bd = amt.get("breakdown")
        if bd is not None:
            if not isinstance(bd, dict):
                raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                                f"{base}/amount/breakdown")
            out_bd = {}
            for key in _BREAKDOWN_ADD + _BREAKDOWN_SUB:
                if key in bd:
                    f = f"{base}/amount/breakdown/{key}"
                    v, c = money("orders", bd[key], f, positive=False)
                    same(c, f + "/currency_code")
                    parts[key] = v
                    out_bd[key] = amount_obj(v, c)
            out_amt["breakdown"] = out_bd

        items = pu.get("items")
        out_items = None
        if items is not None:
            if not isinstance(items, list):
                raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX", f"{base}/items")
            out_items, item_sum, tax_sum, any_tax = [], ZERO, ZERO, False
            for j, it in enumerate(items):
                f = f"{base}/items/{j}"
                if not isinstance(it, dict):
                    raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX", f)
                for req in ("name", "quantity", "unit_amount"):
                    if it.get(req) is None:
                        raise api_error("orders", "syntax",
                                        "MISSING_REQUIRED_PARAMETER", f"{f}/{req}")
                if not isinstance(it["name"], str) or not 1 <= len(it["name"]) <= 127:
                    raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX", f"{f}/name")
                qty = it["quantity"]
                qs = str(qty) if isinstance(qty, int) and not isinstance(qty, bool) else qty
                if not isinstance(qs, str) or not _QTY_RE.fullmatch(qs):
                    raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                                    f"{f}/quantity", qty)
                q = Decimal(qs)
                ua, c = money("orders", it["unit_amount"], f"{f}/unit_amount", positive=False)
                same(c, f"{f}/unit_amount/currency_code")
                item_sum += ua * q
                o = {"name": it["name"], "unit_amount": amount_obj(ua, c), "quantity": qs}
                if it.get("tax") is not None:
                    tx, c = money("orders", it["tax"], f"{f}/tax", positive=False)
                    same(c, f"{f}/tax/currency_code")
                    tax_sum += tx * q
                    any_tax = True
                    o["tax"] = amount_obj(tx, c)
                for k in ("description", "sku"):
                    if isinstance(it.get(k), str):
                        o[k] = it[k]
                cat = it.get("category")
                if cat is not None:
                    if not isinstance(cat, str):
                        raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                                        f"{f}/category")
                    if cat not in _CATEGORIES:
                        raise api_error("orders", "syntax", "INVALID_PARAMETER_VALUE",
                                        f"{f}/category", cat)
                    o["category"] = cat
                out_items.append(o)
            if out_items:
                if "item_total" not in parts:
                    raise api_error("orders", "business", "ITEM_TOTAL_REQUIRED",
                                    f"{base}/amount/breakdown/item_total")
                if parts["item_total"] != item_sum:
                    raise api_error("orders", "business", "ITEM_TOTAL_MISMATCH",
                                    f"{base}/amount/breakdown/item_total",
                                    fmt(parts["item_total"], ccy))
                if any_tax:
                    if "tax_total" not in parts:
                        raise api_error("orders", "business", "TAX_TOTAL_REQUIRED",
                                        f"{base}/amount/breakdown/tax_total")
                    if parts["tax_total"] != tax_sum:
                        raise api_error("orders", "business", "TAX_TOTAL_MISMATCH",
                                        f"{base}/amount/breakdown/tax_total",
                                        fmt(parts["tax_total"], ccy))
        if bd is not None:
            expect = sum((parts.get(k, ZERO) for k in _BREAKDOWN_ADD), ZERO) \
                - sum((parts.get(k, ZERO) for k in _BREAKDOWN_SUB), ZERO)
            if expect != total:
                raise api_error("orders", "business", "AMOUNT_MISMATCH", f"{base}/amount/value",
                                amt.get("value"))

        payee = pu.get("payee")
        if payee is None:
            out_payee = {"email_address": BENCH_MERCHANT_EMAIL, "merchant_id": BENCH_MERCHANT_ID}
        else:
            if not isinstance(payee, dict):
                raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX", f"{base}/payee")
            out_payee = {}
            em, mid = payee.get("email_address"), payee.get("merchant_id")
            if em is not None:
                if not isinstance(em, str) or "@" not in em or len(em) > 254:
                    raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                                    f"{base}/payee/email_address", em)
                out_payee["email_address"] = em
            if mid is not None:
                if not isinstance(mid, str) or not re.fullmatch(r"[0-9A-Z]{13}", mid):
                    raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                                    f"{base}/payee/merchant_id", mid)
                out_payee["merchant_id"] = mid
            if not out_payee:
                out_payee = {"email_address": BENCH_MERCHANT_EMAIL,
                             "merchant_id": BENCH_MERCHANT_ID}
        out = {"reference_id": ref, "amount": out_amt, "payee": out_payee}
        fees = platform_fees(pu, base, total, ccy)       # PayPal acts on them: shown, never dropped
        if fees is not None:
            out["payment_instruction"] = fees
        for k in _ECHO:
            echoed = pu.get(k)
            if echoed is not None:
                if not isinstance(echoed, str) or len(echoed) > 127:
                    raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX",
                                    f"{base}/{k}", echoed)
                out[k] = echoed
        if out_items is not None:
            out["items"] = out_items
        return out, total, ccy

    def _orders_create(self, request: WireRequest, ref: str | None) -> WireResponse:
        prefer = _prefer(request)
        body = self._body(request, "orders")
        intent = body.get("intent")
        if intent is None:
            raise api_error("orders", "syntax", "MISSING_REQUIRED_PARAMETER", "/intent")
        if intent not in ("CAPTURE", "AUTHORIZE"):
            raise api_error("orders", "syntax", "INVALID_PARAMETER_VALUE", "/intent", intent)
        pus = body.get("purchase_units")
        if pus is None:
            raise api_error("orders", "syntax", "MISSING_REQUIRED_PARAMETER", "/purchase_units")
        if not isinstance(pus, list) or not pus:
            raise api_error("orders", "syntax", "INVALID_PARAMETER_SYNTAX", "/purchase_units")
        if len(pus) > 10:
            raise api_error("orders", "syntax", "INVALID_ARRAY_MAX_ITEMS", "/purchase_units")
        seen: set = set()
        units = [self._unit(pu, i, len(pus) > 1, seen) for i, pu in enumerate(pus)]
        oid = self._mint("order")
        now = self._stamp()
        api, web = self._api_base(), self._web_base()
        order = {"id": oid, "intent": intent, "status": "CREATED",
                 "purchase_units": [u[0] for u in units], "create_time": now,
                 "links": [
                     {"href": f"{api}/v2/checkout/orders/{oid}", "rel": "self", "method": "GET"},
                     {"href": f"{web}/checkoutnow?token={oid}", "rel": "approve", "method": "GET"},
                     {"href": f"{api}/v2/checkout/orders/{oid}", "rel": "update",
                      "method": "PATCH"},
                     {"href": f"{api}/v2/checkout/orders/{oid}/{intent.lower()}",
                      "rel": intent.lower(),
                      "method": "POST"}]}
        self.orders[oid] = order
        if prefer.lower() == "return=minimal":
            return self._respond(201, {"id": oid, "status": "CREATED", "links": order["links"]})
        return self._respond(201, order)

    def _order(self, ref: str) -> dict:
        order = self.orders.get(ref)
        if order is None:
            raise not_found("orders", "order_id", ref)
        return order

    def _orders_get(self, request: WireRequest, ref: str) -> WireResponse:
        return self._respond(200, self._order(ref))

    def _orders_capture(self, request: WireRequest, ref: str) -> WireResponse:
        _prefer(request)
        self._body(request, "orders")      # PayPal parses the (optional) body first
        order = self._order(ref)
        if order["intent"] != "CAPTURE":
            raise api_error("orders", "business", "ACTION_DOES_NOT_MATCH_INTENT", "intent",
                            order["intent"],
                            description="Order was created with an intent to "
                            "'AUTHORIZE'. Please use "
                            "v2/checkout/orders/order_id/authorize to complete the transaction.")
        if order["status"] == "COMPLETED":
            raise api_error("orders", "business", "ORDER_ALREADY_CAPTURED", location="path",
                            field="order_id",
                            value=ref)
        for pu in order["purchase_units"]:
            inv = pu.get("invoice_id")
            if inv is not None and inv in self._invoice_ids:
                where = f"/purchase_units/@reference_id=='{pu['reference_id']}'/invoice_id"
                raise api_error("orders", "business", "DUPLICATE_INVOICE_ID", where, inv)
        api, now = self._api_base(), self._stamp()
        for pu in order["purchase_units"]:
            amt = pu["amount"]
            ccy, gross = amt["currency_code"], Decimal(amt["value"])
            fee = _fee(gross, ccy)
            cid = self._mint("capture")
            cap = {"id": cid, "status": "COMPLETED", "amount": amount_obj(gross, ccy),
                   "final_capture": True,
                   "seller_protection": {"status": "ELIGIBLE",
                                         "dispute_categories": ["ITEM_NOT_RECEIVED",
                                                                "UNAUTHORIZED_TRANSACTION"]},
                   "seller_receivable_breakdown": {"gross_amount": amount_obj(gross, ccy),
                                                   "paypal_fee": amount_obj(fee, ccy),
                                                   "net_amount": amount_obj(gross - fee, ccy)}}
            shared = pu.get("payment_instruction", {}).get("platform_fees")
            if shared:
                cap["seller_receivable_breakdown"]["platform_fees"] = shared
            for k in ("invoice_id", "custom_id"):
                if k in pu:
                    cap[k] = pu[k]
            cap["links"] = [
                {"href": f"{api}/v2/payments/captures/{cid}", "rel": "self", "method": "GET"},
                {"href": f"{api}/v2/payments/captures/{cid}/refund", "rel": "refund",
                 "method": "POST"},
                {"href": f"{api}/v2/checkout/orders/{ref}", "rel": "up", "method": "GET"}]
            cap["create_time"] = cap["update_time"] = now
            pu["payments"] = {"captures": [cap]}
            self.captures[cid] = {"json": cap, "order_id": ref, "currency": ccy, "amount": gross,
                                  "refunded": ZERO, "unit": pu}
            if "invoice_id" in pu:
                self._invoice_ids.add(pu["invoice_id"])
        order["status"] = "COMPLETED"
        order["payer"] = standin_buyers.payer(ref)
        for pu in order["purchase_units"]:
            pu.setdefault("shipping", standin_buyers.shipping(ref))
        order["update_time"] = now
        return self._respond(201, order)

    def _orders_authorize(self, request: WireRequest, ref: str) -> WireResponse:
        _prefer(request)
        self._body(request, "orders")
        order = self._order(ref)
        if order["intent"] != "AUTHORIZE":
            raise api_error("orders", "business", "ACTION_DOES_NOT_MATCH_INTENT", "intent",
                            order["intent"],
                            description="Order was created with an intent to 'CAPTURE'. Please use "
                            "v2/checkout/orders/order_id/capture to complete the transaction or "
                            "alternately "
                            "Create an order with an intent of 'AUTHORIZE'.")
        if order["status"] == "COMPLETED":
            raise api_error("orders", "business", "ORDER_ALREADY_AUTHORIZED",
                            "order_id", ref, "path")
        api, now = self._api_base(), self._stamp()
        for pu in order["purchase_units"]:
            aid = self._mint("authorization")
            amt = {k: v for k, v in pu["amount"].items() if k != "breakdown"}
            auth = {"id": aid, "status": "CREATED", "amount": amt,
                    "expiration_time": now, "create_time": now, "update_time": now,
                    "links": [{"href": f"{api}/v2/payments/authorizations/{aid}", "rel": "self",
                               "method": "GET"},
                              {"href": f"{api}/v2/checkout/orders/{ref}", "rel": "up",
                               "method": "GET"}]}
            pu["payments"] = {"authorizations": [auth]}
            self.authorizations[aid] = {"json": auth, "order_id": ref}
        order["status"] = "COMPLETED"
        order["payer"] = standin_buyers.payer(ref)
        for pu in order["purchase_units"]:
            pu.setdefault("shipping", standin_buyers.shipping(ref))
        order["update_time"] = now
        return self._respond(201, order)

    # -------------------------------------------------------------- payments
    def _capture(self, ref: str) -> dict:
        cap = self.captures.get(ref)
        if cap is None:
            raise not_found("payments", "capture_id", ref)
        return cap

    def _captures_get(self, request: WireRequest, ref: str) -> WireResponse:
        cap = self._capture(ref)
        body = dict(cap["json"])
        body["supplementary_data"] = {"related_ids": {"order_id": cap["order_id"]}}
        return self._respond(200, body)

    def _captures_refund(self, request: WireRequest, ref: str) -> WireResponse:
        body = self._body(request, "payments")
        cap = self._capture(ref)
        ccy, remaining = cap["currency"], cap["amount"] - cap["refunded"]
        if body.get("amount") is not None:
            amount, c = money("payments", body["amount"], "/amount")
            if c != ccy:
                raise api_error("payments", "business", "REFUND_CAPTURE_CURRENCY_MISMATCH",
                                "/amount/currency_code", c)
        else:
            amount = remaining
        if remaining <= ZERO:
            raise api_error("payments", "business", "CAPTURE_FULLY_REFUNDED",
                            "capture_id", ref, "path")
        if amount > remaining:
            raise api_error("payments", "business", "REFUND_AMOUNT_EXCEEDED", "/amount/value",
                            fmt(amount, ccy))
        cap["refunded"] += amount
        full = cap["refunded"] >= cap["amount"]
        api, now = self._api_base(), self._stamp()
        rid = self._mint("refund")
        refund = {"id": rid, "amount": amount_obj(amount, ccy)}
        for k in ("invoice_id", "custom_id", "note_to_payer"):
            if body.get(k) is not None:
                refund[k] = body[k]
        refund.update({
            "seller_payable_breakdown": {"gross_amount": amount_obj(amount, ccy),
                                         "net_amount": amount_obj(amount, ccy),
                                         "total_refunded_amount": amount_obj(cap["refunded"], ccy)},
            "status": "COMPLETED", "create_time": now, "update_time": now,
            "links": [{"href": f"{api}/v2/payments/refunds/{rid}", "rel": "self", "method": "GET"},
                      {"href": f"{api}/v2/payments/captures/{ref}", "rel": "up", "method": "GET"}]})
        self.refunds[rid] = {"json": refund, "capture_id": ref}
        cap["json"]["status"] = "REFUNDED" if full else "PARTIALLY_REFUNDED"
        cap["json"]["update_time"] = now
        cap["unit"]["payments"].setdefault("refunds", []).append(
            {"id": rid, "status": "COMPLETED", "amount": refund["amount"], "create_time": now})
        return self._respond(201, refund)

    def _refunds_get(self, request: WireRequest, ref: str) -> WireResponse:
        refund = self.refunds.get(ref)
        if refund is None:
            raise not_found("payments", "refund_id", ref)
        return self._respond(200, refund["json"])

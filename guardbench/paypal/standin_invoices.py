"""Invoicing v2 of the PayPal stand-in: create, list, show, send and cancel invoices.

A mixin of ``PayPalStandIn``. Requests have already passed the document check; what is
enforced here is state and money: an invoice's items are in the invoice's currency (their
total is never added across currencies), only a DRAFT or SCHEDULED invoice is sent, and only a
sent, unpaid one is cancelled.
"""
from __future__ import annotations

import copy
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from guardbench.paypal.standin_core import (
    CURRENCY_DECIMALS,
    ZERO,
    amount_obj,
    api_error,
    fmt,
    money,
    not_found,
)
from guardbench.records.record import WireRequest, WireResponse

SEED_INVOICES = {
    "INV2-Z56S-5LLA-Q52L-CPZ5": {"status": "SENT", "currency_code": "USD", "value": "250.00"},
    "INV2-8D3K-2TQW-7MNB-X4PL": {"status": "SENT", "currency_code": "USD", "value": "75.50"},
    "INV2-4RGH-9JVE-3CXA-W2KD": {"status": "PAID", "currency_code": "USD", "value": "99.00"},
    "INV2-6PLM-1QZR-8TYU-H5NS": {"status": "DRAFT", "currency_code": "USD", "value": "12.00"},
    "INV2-2EUR-7KQW-4MZD-R8TN": {"status": "SENT", "currency_code": "EUR", "value": "180.00"},
}
SEED_INVOICE_ID = "INV2-Z56S-5LLA-Q52L-CPZ5"
SEED_DATE = "2024-12-01"
_SENDABLE = ("DRAFT", "SCHEDULED")
_PAID = ("PAID", "PARTIALLY_PAID", "MARKED_AS_PAID", "REFUNDED", "PARTIALLY_REFUNDED",
         "MARKED_AS_REFUNDED")


def _seed_json(iid: str, seed: dict, n: int) -> dict:
    amount = {"currency_code": seed["currency_code"], "value": seed["value"]}
    return {"id": iid, "status": seed["status"],
            "detail": {"currency_code": seed["currency_code"], "invoice_number": f"GB-{1000 + n}",
                       "invoice_date": SEED_DATE, "payment_term": {"term_type": "NET_30"}},
            "invoicer": {"email_address": "merchant@guardbench.example"},
            "primary_recipients": [{"billing_info": {"email_address": "buyer@guardbench.example"}}],
            "items": [{"name": "Services", "quantity": "1", "unit_amount": dict(amount)}],
            "amount": dict(amount), "due_amount": dict(amount)}


class InvoicesMixin:

    if TYPE_CHECKING:      # the stand-in's state and helpers (paypal/standin.py) this mixin uses
        def __getattr__(self, name: str) -> Any: ...
    def _seed_invoices(self) -> dict:
        return {iid: _seed_json(iid, s, n) for n, (iid, s) in enumerate(SEED_INVOICES.items())}

    def _invoice_links(self, iid: str) -> list:
        api = self._api_base()
        return [{"href": f"{api}/v2/invoicing/invoices/{iid}", "rel": "self", "method": "GET"}]

    def _invoice(self, iid: str) -> dict:
        inv = self.invoices.get(iid)
        if inv is None:
            raise not_found("invoicing", "invoice_id", iid)
        return inv

    def _shown(self, inv: dict) -> dict:
        return {**copy.deepcopy(inv), "links": self._invoice_links(inv["id"])}

    def _invoices_create(self, request: WireRequest, ref: str | None) -> WireResponse:
        body = self._body(request, "invoicing")
        detail = body["detail"]
        ccy = detail["currency_code"]
        if ccy not in CURRENCY_DECIMALS:
            raise api_error("invoicing", "business", "INVALID_CURRENCY_CODE",
                            "/detail/currency_code", ccy)
        total = ZERO
        for i, it in enumerate(body.get("items") or ()):
            value, c = money("invoicing", it["unit_amount"], f"/items/{i}/unit_amount",
                             positive=False)
            if c != ccy:                           # never added across currencies
                raise api_error("invoicing", "business", "CURRENCY_MISMATCH",
                                f"/items/{i}/unit_amount/currency_code",
                                c, description="The currency code of every item must be the "
                                "invoice's currency.")
            total += value * Decimal(it["quantity"])
        iid = "INV2-" + "-".join(self._mint("invoice", 16)[k:k + 4] for k in range(0, 16, 4))
        inv = {"id": iid, **{k: copy.deepcopy(v) for k, v in body.items()
                             if k not in ("id", "status", "links")},
               "status": "DRAFT"}
        inv["detail"].setdefault("invoice_number", f"GB-{2000 + len(self.invoices)}")
        inv["detail"].setdefault("invoice_date", self._stamp()[:10])
        inv["amount"] = {"currency_code": ccy, "value": fmt(total, ccy)}
        inv["due_amount"] = amount_obj(total, ccy)
        self.invoices[iid] = inv
        return self._respond(201, self._shown(inv))

    def _invoices_get(self, request: WireRequest, ref: str) -> WireResponse:
        return self._respond(200, self._shown(self._invoice(ref)))

    def _invoices_list(self, request: WireRequest, ref: str | None) -> WireResponse:
        q = self._checked.query
        size, page = int(q.get("page_size") or 20), int(q.get("page") or 1)
        items = list(self.invoices.values())
        out: dict = {"items": [self._shown(i) for i in items[(page - 1) * size:page * size]],
                     "links": [{"href": f"{self._api_base()}/v2/invoicing/invoices"
                                        f"?page={page}&page_size={size}",
                                "rel": "self", "method": "GET"}]}
        if str(q.get("total_required", "")).lower() == "true":
            out["total_items"], out["total_pages"] = len(items), -(-len(items) // size)
        return self._respond(200, out)

    def _invoices_send(self, request: WireRequest, ref: str) -> WireResponse:
        self._body(request, "invoicing")
        inv = self._invoice(ref)
        if inv["status"] not in _SENDABLE:
            raise api_error("invoicing", "business", "INVALID_INVOICE_STATUS",
                            "invoice_id", ref, "path",
                            description=f"An invoice in status {inv['status']} cannot be sent.")
        inv["status"] = "SENT"
        web = self._web_base()
        return self._respond(200, {"href": f"{web}/invoice/payerView/details/{ref}",
                                   "rel": "payer-view",
                                   "method": "GET"})

    def _invoices_cancel(self, request: WireRequest, ref: str) -> WireResponse:
        # the document requires a body; the check saw to it
        self._body(request, "invoicing")
        inv = self._invoice(ref)
        status = inv["status"]
        if status == "CANCELLED":
            raise api_error("invoicing", "business", "INVOICE_CANCELED_ALREADY",
                            "invoice_id", ref, "path")
        if status == "DRAFT":
            raise api_error("invoicing", "business", "CANNOT_CANCEL_DRAFT_INVOICE",
                            "invoice_id", ref, "path")
        if status in _PAID:
            raise api_error("invoicing", "business", "CANNOT_CANCEL_PAID_INVOICE",
                            "invoice_id", ref, "path")
        inv["status"] = "CANCELLED"
        return self._respond(204, None)

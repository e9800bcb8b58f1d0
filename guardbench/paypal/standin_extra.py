"""Payouts v1, and the seeded disputes, subscriptions and invoices of the PayPal stand-in.

A mixin of ``PayPalStandIn``. The seeded resources have fixed ids (the same whatever the
seed) so tests and tool sets can name them.
"""
from __future__ import annotations

import copy
import re
from decimal import Decimal
from urllib.parse import parse_qs

from guardbench.paypal.standin_core import (
    BAD_REQUEST_MSG, DOCS, PAYOUTS_DOC, ZERO, ApiError, amount_obj, api_error, fmt, money, not_found)

SEED_DISPUTES = {
    "PP-D-27803": {"status": "WAITING_FOR_SELLER_RESPONSE", "currency_code": "USD", "value": "49.99",
                   "reason": "MERCHANDISE_OR_SERVICE_NOT_RECEIVED"},
    "PP-D-27804": {"status": "WAITING_FOR_SELLER_RESPONSE", "currency_code": "USD", "value": "120.00",
                   "reason": "MERCHANDISE_OR_SERVICE_NOT_AS_DESCRIBED"},
    "PP-D-27805": {"status": "UNDER_REVIEW", "currency_code": "EUR", "value": "15.00",
                   "reason": "UNAUTHORISED"},
    "PP-D-27806": {"status": "RESOLVED", "currency_code": "USD", "value": "10.00",
                   "reason": "MERCHANDISE_OR_SERVICE_NOT_RECEIVED"},
}
SEED_SUBSCRIPTIONS = {
    "I-BW452GLLEP1G": {"status": "ACTIVE", "plan_id": "P-5ML4271244454362WXNWU5NQ"},
    "I-93KN27174NGR": {"status": "SUSPENDED", "plan_id": "P-5ML4271244454362WXNWU5NQ"},
    "I-5X9Y3H2M8QWE": {"status": "CANCELLED", "plan_id": "P-5ML4271244454362WXNWU5NQ"},
}
SEED_INVOICES = {
    "INV2-Z56S-5LLA-Q52L-CPZ5": {"status": "SENT", "currency_code": "USD", "value": "250.00"},
    "INV2-8D3K-2TQW-7MNB-X4PL": {"status": "SENT", "currency_code": "USD", "value": "75.50"},
    "INV2-4RGH-9JVE-3CXA-W2KD": {"status": "PAID", "currency_code": "USD", "value": "99.00"},
    "INV2-6PLM-1QZR-8TYU-H5NS": {"status": "DRAFT", "currency_code": "USD", "value": "12.00"},
}
SEED_DISPUTE_ID = "PP-D-27803"
SEED_SUBSCRIPTION_ID = "I-BW452GLLEP1G"
SEED_INVOICE_ID = "INV2-Z56S-5LLA-Q52L-CPZ5"

_ACCEPTABLE_DISPUTE = ("OPEN", "WAITING_FOR_SELLER_RESPONSE", "UNDER_REVIEW")
_RECIPIENT_TYPES = ("EMAIL", "PHONE", "PAYPAL_ID")
_PURPOSES = ("AWARDS", "PRIZES", "DONATIONS", "GOODS", "SERVICES", "REBATES", "CASHBACK", "DISCOUNTS",
             "NON_GOODS_OR_SERVICES")                       # payments_payouts_batch_v1 purpose_enum
_INT_RE = re.compile(r"[+-]?[0-9]+")
_PART_NAME_RE = re.compile(r'(?i)^content-disposition:\s*form-data\s*;(?:.*;)?\s*name="([^"]*)"')


def _opt_str(api: str, body: dict, key: str, field: str, maxlen: int, too_long: str = "INVALID_PARAMETER_SYNTAX"):
    v = body.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise api_error(api, "syntax", "INVALID_PARAMETER_SYNTAX", field, v)
    if len(v) > maxlen:
        raise api_error(api, "syntax", too_long, field, v)
    return v


def _query_params(request) -> dict[str, str]:
    """payouts.get's query (page, page_size: integers 0..1000; total_required: a boolean), checked."""
    out = {}
    for key, values in parse_qs(request.query, keep_blank_values=True).items():
        v = values[-1]
        if key in ("page", "page_size"):
            if not _INT_RE.fullmatch(v):
                raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX", key, v, "query")
            if not 0 <= int(v) <= 1000:
                raise api_error("payouts", "syntax", "INVALID_PARAMETER_VALUE", key, v, "query")
        elif key == "total_required" and v.lower() not in ("true", "false"):
            raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX", key, v, "query")
        out[key] = v
    return out


def _multipart(request) -> dict[str, str]:
    """The parts (name -> content) of a multipart/form-data body; a malformed one is refused."""
    text = request.body or ""
    if not text.strip():
        return {}
    bad = api_error("disputes", "syntax", "MALFORMED_REQUEST", "/", location="body",
                    description="The multipart/form-data request body is not well formed.")
    boundary = None
    for param in (request.header("Content-Type") or "").split(";")[1:]:
        k, _, v = param.strip().partition("=")
        if k.strip().lower() == "boundary":
            boundary = v.strip().strip('"')
    if not boundary:
        raise bad
    chunks = text.split(f"--{boundary}")
    if len(chunks) < 3 or not chunks[-1].startswith("--"):    # a preamble (chunks[0]) is ignored
        raise bad
    parts = {}
    for chunk in chunks[1:-1]:
        head, sep, content = re.sub(r"^\r?\n", "", chunk).partition("\r\n\r\n")
        names = [m.group(1) for line in head.split("\r\n") if (m := _PART_NAME_RE.match(line))]
        if not sep or len(names) != 1:
            raise bad
        parts[names[0]] = content[:-2] if content.endswith("\r\n") else content
    return parts


def _fresh(seed: dict) -> dict:
    """A copy of seeded records to mutate (flat records copied directly: a stand-in is made per run)."""
    flat = _FLAT.get(id(seed))
    if flat is None:
        flat = _FLAT[id(seed)] = all(not isinstance(x, (dict, list)) for v in seed.values() for x in v.values())
    return {k: dict(v) for k, v in seed.items()} if flat else copy.deepcopy(seed)


_FLAT: dict[int, bool] = {}


class ExtraMixin:
    def _seed(self) -> None:
        self.disputes = _fresh(SEED_DISPUTES)
        self.subscriptions = _fresh(SEED_SUBSCRIPTIONS)
        self.invoices = _fresh(SEED_INVOICES)

    # --------------------------------------------------------------- payouts
    def _payouts_create(self, request, ref):
        body = self._body(request, "payouts")
        hdr = body.get("sender_batch_header")
        if hdr is None:
            raise api_error("payouts", "syntax", "MISSING_REQUIRED_PARAMETER", "sender_batch_header")
        if not isinstance(hdr, dict):
            raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX", "sender_batch_header")
        out_hdr = {}
        for key, maxlen in (("sender_batch_id", 256), ("email_subject", 255), ("email_message", 1000)):
            v = _opt_str("payouts", hdr, key, f"sender_batch_header.{key}", maxlen)
            if v is not None:
                out_hdr[key] = v
        default_type = hdr.get("recipient_type", "EMAIL")
        if default_type not in _RECIPIENT_TYPES:
            raise api_error("payouts", "syntax", "INVALID_PARAMETER_VALUE", "sender_batch_header.recipient_type",
                            default_type)
        if "recipient_type" in hdr:
            out_hdr["recipient_type"] = default_type
        items = body.get("items")
        if items is None:
            raise api_error("payouts", "syntax", "MISSING_REQUIRED_PARAMETER", "items")
        if not isinstance(items, list) or not items or len(items) > 15000:
            raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX", "items")
        total, ccy, out_items = ZERO, None, []
        for i, it in enumerate(items):
            f = f"items[{i}]"
            if not isinstance(it, dict):
                raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX", f)
            rtype = it.get("recipient_type", default_type)
            if rtype not in _RECIPIENT_TYPES:
                raise api_error("payouts", "syntax", "INVALID_PARAMETER_VALUE", f"{f}.recipient_type", rtype)
            if it.get("amount") is None:
                raise api_error("payouts", "syntax", "MISSING_REQUIRED_PARAMETER", f"{f}.amount")
            amount, c = money("payouts", it["amount"], f"{f}.amount", ccy_key="currency", sep=".")
            if ccy is not None and c != ccy:
                raise api_error("payouts", "syntax", "CANNOT_MIX_CURRENCIES", f"{f}.amount.currency", c)
            ccy = c
            receiver = it.get("receiver")
            if receiver is None:
                raise api_error("payouts", "syntax", "MISSING_REQUIRED_PARAMETER", f"{f}.receiver")
            if not isinstance(receiver, str) or not receiver or len(receiver) > 127 or (
                    rtype == "EMAIL" and "@" not in receiver):
                raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX", f"{f}.receiver", receiver,
                                description="Receiver is invalid or does not match with type")
            pi = {"recipient_type": rtype, "amount": amount_obj(amount, c, "currency")}
            note = _opt_str("payouts", it, "note", f"{f}.note", 4000)
            if note is not None:
                pi["note"] = note
            pi["receiver"] = receiver
            sid = _opt_str("payouts", it, "sender_item_id", f"{f}.sender_item_id", 63)
            if sid is not None:
                pi["sender_item_id"] = sid
            purpose = it.get("purpose")
            if purpose is not None:
                if not isinstance(purpose, str):
                    raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX", f"{f}.purpose", purpose)
                if purpose not in _PURPOSES:
                    raise api_error("payouts", "syntax", "INVALID_PARAMETER_VALUE", f"{f}.purpose", purpose)
                pi["purpose"] = purpose
            total += amount
            out_items.append(pi)
        sbid = out_hdr.get("sender_batch_id")
        used = self._batch_ids.setdefault(self._client, {})
        api = self._api_base()
        if sbid is not None and sbid in used:
            raise ApiError(400, {
                "name": "USER_BUSINESS_ERROR", "message": "User business error.", "information_link": PAYOUTS_DOC,
                "details": [{"field": "SENDER_BATCH_ID", "location": "body", "issue": "SENDER_BATCH_ID_ALREADY_USED",
                             "description": "Batch with given sender_batch_id already exists"}],
                "links": [{"href": f"{api}/v1/payments/payouts/{used[sbid]}", "rel": "self", "method": "GET",
                           "encType": "application/json"}]})
        bid = self._mint("payout", 13)
        now = self._stamp()
        stored_items = []
        for pi in out_items:
            stored_items.append({"payout_item_id": self._mint("payout_item", 13),
                                 "transaction_id": self._mint("transaction"), "payout_batch_id": bid,
                                 "payout_item": pi})
        batch = {"payout_batch_id": bid, "sender_batch_header": out_hdr, "amount": amount_obj(total, ccy, "currency"),
                 "time_created": now, "items": stored_items,
                 "links": [{"href": f"{api}/v1/payments/payouts/{bid}", "rel": "self", "method": "GET",
                            "encType": "application/json"}]}
        self.payouts[bid] = batch
        if sbid is not None:
            used[sbid] = bid
        return self._respond(201, {
            "batch_header": {"payout_batch_id": bid, "batch_status": "PENDING", "sender_batch_header": out_hdr,
                             "amount": batch["amount"], "time_created": now},
            "items": [{"payout_item_id": s["payout_item_id"], "transaction_status": "PENDING",
                       "payout_batch_id": bid, "payout_item": s["payout_item"]} for s in stored_items],
            "links": batch["links"]})

    def _payouts_get(self, request, ref):
        _query_params(request)
        batch = self.payouts.get(ref)
        if batch is None:
            raise not_found("payouts", "payout_batch_id", ref)
        api, ccy = self._api_base(), batch["amount"]["currency"]
        fee = amount_obj(ZERO, ccy, "currency")
        items = []
        for s in batch["items"]:
            iid = s["payout_item_id"]
            items.append({"payout_item_id": iid, "transaction_id": s["transaction_id"],
                          "transaction_status": "SUCCESS", "payout_item_fee": fee, "payout_batch_id": ref,
                          "payout_item": s["payout_item"], "time_processed": batch["time_created"],
                          "links": [{"href": f"{api}/v1/payments/payouts-item/{iid}", "rel": "item",
                                     "method": "GET", "encType": "application/json"}]})
        return self._respond(200, {
            "batch_header": {"payout_batch_id": ref, "batch_status": "SUCCESS",
                             "time_created": batch["time_created"], "time_completed": batch["time_created"],
                             "sender_batch_header": batch["sender_batch_header"], "amount": batch["amount"],
                             "fees": fee},
            "items": items, "links": batch["links"]})

    # -------------------------------------------------------------- disputes
    def _disputes_accept_claim(self, request, ref):
        """As the document describes it (multipart/form-data, one optional part
        ``accept-claim-document``), or as JSON with a ``note`` (what integrations, and the
        toolkit's accept_dispute_claim, send; the document does not describe it)."""
        form = self.media_type(request) == "multipart/form-data"
        if form:
            _multipart(request)      # checked; its one part (evidence) is kept nowhere
        body = {} if form else self._body(request, "disputes")
        d = self.disputes.get(ref)
        if d is None:
            raise not_found("disputes", "dispute_id", ref)
        note = body.get("note")
        if not form:
            if note is None:
                raise api_error("disputes", "syntax", "MISSING_REQUIRED_PARAMETER", "/note")
            if not isinstance(note, str) or not note or len(note) > 2000:
                raise api_error("disputes", "syntax", "INVALID_PARAMETER_SYNTAX", "/note")
        for key in ("accept_claim_reason", "accept_claim_type", "invoice_id"):
            _opt_str("disputes", body, key, f"/{key}", 127)
        disputed = Decimal(d["value"])
        refund = disputed
        if body.get("refund_amount") is not None:
            refund, c = money("disputes", body["refund_amount"], "/refund_amount")
            if c != d["currency_code"]:
                raise api_error("disputes", "business", "REFUND_CURRENCY_MISMATCH", "/refund_amount/currency_code", c)
            if refund > disputed:
                raise api_error("disputes", "business", "REFUND_AMOUNT_EXCEEDED", "/refund_amount/value",
                                fmt(refund, c))
        if d["status"] not in _ACCEPTABLE_DISPUTE:
            raise api_error("disputes", "business", "INVALID_DISPUTE_STATUS", "dispute_id", ref, "path")
        d["status"] = "RESOLVED"
        d["outcome"] = {"outcome_code": "RESOLVED_BUYER_FAVOUR",
                        "amount_refunded": amount_obj(refund, d["currency_code"])}
        if note is not None:
            d["note"] = note
        return self._respond(200, {"links": [{"href": f"{self._api_base()}/v1/customer/disputes/{ref}",
                                              "rel": "self", "method": "GET"}]})

    # --------------------------------------------------------- subscriptions
    def _subscriptions_cancel(self, request, ref):
        body = self._body(request, "subscriptions")
        s = self.subscriptions.get(ref)
        if s is None:
            raise not_found("subscriptions", "subscription_id", ref)
        reason = body.get("reason")
        if reason is None:
            raise api_error("subscriptions", "syntax", "MISSING_REQUIRED_PARAMETER", "/reason")
        if not isinstance(reason, str) or not reason:
            raise api_error("subscriptions", "syntax", "INVALID_PARAMETER_SYNTAX", "/reason")
        if len(reason) > 128:   # the one 400 issue the document lists for this operation
            raise api_error("subscriptions", "syntax", "INVALID_STRING_MAX_LENGTH", "/reason", reason)
        if s["status"] not in ("ACTIVE", "SUSPENDED"):
            raise api_error("subscriptions", "business", "SUBSCRIPTION_STATUS_INVALID", "subscription_id", ref, "path")
        s["status"] = "CANCELLED"
        s["reason"] = reason
        return self._respond(204, None)

    # -------------------------------------------------------------- invoices
    def _invoices_cancel(self, request, ref):
        if not (request.body or "").strip():   # the requestBody is required; the 400 lists no issue for it
            raise ApiError(400, {"name": "INVALID_REQUEST", "message": BAD_REQUEST_MSG, "links": [
                {"href": DOCS["invoicing"] + "INVALID_REQUEST", "rel": "information_link", "method": "GET"}]})
        body = self._body(request, "invoicing")
        inv = self.invoices.get(ref)
        if inv is None:
            raise not_found("invoicing", "invoice_id", ref)
        _opt_str("invoicing", body, "subject", "/subject", 4000, "INVALID_STRING_MAX_LENGTH")
        _opt_str("invoicing", body, "note", "/note", 4000, "INVALID_STRING_MAX_LENGTH")
        for key in ("send_to_invoicer", "send_to_recipient"):
            if key in body and not isinstance(body[key], bool):
                raise api_error("invoicing", "syntax", "INVALID_PARAMETER_SYNTAX", f"/{key}", body[key])
        status = inv["status"]
        if status == "CANCELLED":
            raise api_error("invoicing", "business", "INVOICE_CANCELED_ALREADY", "invoice_id", ref, "path")
        if status == "DRAFT":
            raise api_error("invoicing", "business", "CANNOT_CANCEL_DRAFT_INVOICE", "invoice_id", ref, "path")
        if status in ("PAID", "PARTIALLY_PAID", "MARKED_AS_PAID"):
            raise api_error("invoicing", "business", "CANNOT_CANCEL_PAID_INVOICE", "invoice_id", ref, "path")
        inv["status"] = "CANCELLED"
        return self._respond(204, None)

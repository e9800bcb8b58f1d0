"""Payouts v1 and Customer Disputes v1 of the PayPal stand-in (and the seeded disputes).

A mixin of ``PayPalStandIn``. The seeded resources have fixed ids (the same whatever the
seed) so tests and tool sets can name them.
"""
from __future__ import annotations

import copy
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from guardbench.paypal.standin_core import (
    PAYOUTS_DOC,
    ZERO,
    ApiError,
    amount_obj,
    api_error,
    fmt,
    money,
    not_found,
)
from guardbench.records.record import WireRequest, WireResponse

SEED_DISPUTES = {
    "PP-D-27803": {"status": "WAITING_FOR_SELLER_RESPONSE", "currency_code": "USD",
                   "value": "49.99",
                   "reason": "MERCHANDISE_OR_SERVICE_NOT_RECEIVED"},
    "PP-D-27804": {"status": "WAITING_FOR_SELLER_RESPONSE", "currency_code": "USD",
                   "value": "120.00",
                   "reason": "MERCHANDISE_OR_SERVICE_NOT_AS_DESCRIBED"},
    "PP-D-27805": {"status": "UNDER_REVIEW", "currency_code": "EUR", "value": "15.00",
                   "reason": "UNAUTHORISED"},
    "PP-D-27806": {"status": "RESOLVED", "currency_code": "USD", "value": "10.00",
                   "reason": "MERCHANDISE_OR_SERVICE_NOT_RECEIVED"},
}
SEED_DISPUTE_ID = "PP-D-27803"
SEED_DISPUTE_TIME = "2024-12-01T00:00:00Z"

_ACCEPTABLE_DISPUTE = ("OPEN", "WAITING_FOR_SELLER_RESPONSE", "UNDER_REVIEW")
_STATE_OF = {"OPEN": "OPEN_INQUIRIES", "WAITING_FOR_SELLER_RESPONSE": "REQUIRED_ACTION",
             "WAITING_FOR_BUYER_RESPONSE": "REQUIRED_OTHER_PARTY_ACTION",
             "UNDER_REVIEW": "UNDER_PAYPAL_REVIEW",
             "RESOLVED": "RESOLVED"}


def _opt_str(api: str, body: dict, key: str, field: str, maxlen: int,
             too_long: str = "INVALID_PARAMETER_SYNTAX") -> str | None:
    v = body.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise api_error(api, "syntax", "INVALID_PARAMETER_SYNTAX", field, v)
    if len(v) > maxlen:
        raise api_error(api, "syntax", too_long, field, v)
    return v


class ExtraMixin:

    if TYPE_CHECKING:      # the stand-in's state and helpers (paypal/standin.py) this mixin uses
        def __getattr__(self, name: str) -> Any: ...
    def _seed(self) -> None:
        """The seeded disputes, plans, subscriptions and invoices are made on first use (most runs
        never touch them, and a run makes a fresh stand-in)."""
        self._seeded: dict = {}

    def _seeded_state(self, name: str) -> dict:
        state = self._seeded.get(name)
        if state is None:
            if name == "disputes":
                state = copy.deepcopy(SEED_DISPUTES)
            elif name in ("plans", "subscriptions"):
                self._seeded.update(self._seed_billing())
                return self._seeded[name]
            else:
                state = self._seed_invoices()
            self._seeded[name] = state
        return state

    disputes = property(lambda self: self._seeded_state("disputes"))
    plans = property(lambda self: self._seeded_state("plans"))
    subscriptions = property(lambda self: self._seeded_state("subscriptions"))
    invoices = property(lambda self: self._seeded_state("invoices"))

    # --------------------------------------------------------------- payouts
    def _payouts_create(self, request: WireRequest, ref: str | None) -> WireResponse:
        """The document check saw to types, lengths and enums; PayPal's run-time rules follow:
        amounts positive with their currency's precision, one currency per batch, an e-mail receiver
        for EMAIL, and a sender_batch_id used once."""
        body = self._body(request, "payouts")
        # the document makes the body optional; PayPal needs one
        if self._checked.body is None:
            raise api_error("payouts", "syntax", "MISSING_REQUIRED_PARAMETER",
                            "sender_batch_header")
        hdr = body["sender_batch_header"]
        out_hdr = {k: hdr[k] for k in ("sender_batch_id", "recipient_type", "email_subject",
                                       "email_message")
                   if k in hdr}
        default_type = hdr.get("recipient_type", "EMAIL")
        total, out_items = ZERO, []
        ccy: str | None = None             # the items' one currency (the first item's)
        for i, it in enumerate(body["items"]):
            f = f"items[{i}]"
            rtype = it.get("recipient_type", default_type)
            amount, c = money("payouts", it["amount"], f"{f}.amount", ccy_key="currency", sep=".")
            if ccy is not None and c != ccy:
                raise api_error("payouts", "syntax", "CANNOT_MIX_CURRENCIES",
                                f"{f}.amount.currency", c)
            ccy = c
            receiver = it["receiver"]
            if rtype == "EMAIL" and "@" not in receiver:
                raise api_error("payouts", "syntax", "INVALID_PARAMETER_SYNTAX",
                                f"{f}.receiver", receiver,
                                description="Receiver is invalid or does not match with type")
            pi = {"recipient_type": rtype, "amount": amount_obj(amount, c, "currency")}
            for k in ("note", "receiver", "sender_item_id", "purpose"):
                if k in it:
                    pi[k] = it[k]
            total += amount
            out_items.append(pi)
        sbid = out_hdr.get("sender_batch_id")
        used = self._batch_ids.setdefault(self._client, {})
        api = self._api_base()
        if sbid is not None and sbid in used:
            raise ApiError(400, {
                "name": "USER_BUSINESS_ERROR", "message": "User business error.",
                "information_link": PAYOUTS_DOC,
                "details": [{"field": "SENDER_BATCH_ID", "location": "body",
                             "issue": "SENDER_BATCH_ID_ALREADY_USED",
                             "description": "Batch with given sender_batch_id already exists"}],
                "links": [{"href": f"{api}/v1/payments/payouts/{used[sbid]}", "rel": "self",
                           "method": "GET",
                           "encType": "application/json"}]})
        bid = self._mint("payout", 13)
        now = self._stamp()
        stored_items = []
        for pi in out_items:
            stored_items.append({"payout_item_id": self._mint("payout_item", 13),
                                 "transaction_id": self._mint("transaction"),
                                 "payout_batch_id": bid,
                                 "payout_item": pi})
        batch = {"payout_batch_id": bid, "sender_batch_header": out_hdr,
                 "amount": amount_obj(total, ccy or "", "currency"),
                 "time_created": now, "items": stored_items,
                 "links": [{"href": f"{api}/v1/payments/payouts/{bid}", "rel": "self",
                            "method": "GET",
                            "encType": "application/json"}]}
        self.payouts[bid] = batch
        if sbid is not None:
            used[sbid] = bid
        return self._respond(201, {
            "batch_header": {"payout_batch_id": bid, "batch_status": "PENDING",
                             "sender_batch_header": out_hdr,
                             "amount": batch["amount"], "time_created": now},
            "items": [{"payout_item_id": s["payout_item_id"], "transaction_status": "PENDING",
                       "payout_batch_id": bid, "payout_item": s["payout_item"]}
                       for s in stored_items],
            "links": batch["links"]})

    def _payouts_get(self, request: WireRequest, ref: str) -> WireResponse:
        batch = self.payouts.get(ref)
        if batch is None:
            raise not_found("payouts", "payout_batch_id", ref)
        api, ccy = self._api_base(), batch["amount"]["currency"]
        fee = amount_obj(ZERO, ccy, "currency")
        items = []
        for s in batch["items"]:
            iid = s["payout_item_id"]
            items.append({"payout_item_id": iid, "transaction_id": s["transaction_id"],
                          "transaction_status": "SUCCESS", "payout_item_fee": fee,
                          "payout_batch_id": ref,
                          "payout_item": s["payout_item"], "time_processed": batch["time_created"],
                          "links": [{"href": f"{api}/v1/payments/payouts-item/{iid}", "rel": "item",
                                     "method": "GET", "encType": "application/json"}]})
        return self._respond(200, {
            "batch_header": {"payout_batch_id": ref, "batch_status": "SUCCESS",
                             "time_created": batch["time_created"],
                             "time_completed": batch["time_created"],
                             "sender_batch_header": batch["sender_batch_header"],
                             "amount": batch["amount"],
                             "fees": fee},
            "items": items, "links": batch["links"]})

    # -------------------------------------------------------------- disputes
    def _dispute_json(self, did: str, d: dict, full: bool) -> dict:
        api = self._api_base()
        out = {"dispute_id": did, "create_time": SEED_DISPUTE_TIME,
               "update_time": d.get("update_time",
               SEED_DISPUTE_TIME), "reason": d["reason"], "status": d["status"],
               "dispute_amount": {"currency_code": d["currency_code"], "value": d["value"]},
               "dispute_life_cycle_stage": "CHARGEBACK" if d["status"] == "UNDER_REVIEW"
               else "INQUIRY",
               "dispute_channel": "INTERNAL"}
        if full and "outcome" in d:
            out["dispute_outcome"] = d["outcome"]
        out["links"] = [{"href": f"{api}/v1/customer/disputes/{did}", "rel": "self",
                         "method": "GET"}]
        if full and d["status"] in _ACCEPTABLE_DISPUTE:
            out["links"].append({"href": f"{api}/v1/customer/disputes/{did}/accept-claim",
                                 "rel": "accept_claim",
                                 "method": "POST"})
        return out

    def _dispute(self, did: str) -> dict:
        d = self.disputes.get(did)
        if d is None:
            raise not_found("disputes", "dispute_id", did)
        return d

    def _disputes_get(self, request: WireRequest, ref: str) -> WireResponse:
        return self._respond(200, self._dispute_json(ref, self._dispute(ref), True))

    def _disputes_list(self, request: WireRequest, ref: str | None) -> WireResponse:
        q = self._checked.query
        states = set(q["dispute_state"].split(",")) if q.get("dispute_state") else None
        size = int(q.get("page_size") or 10)
        items = [self._dispute_json(did, d, False) for did, d in self.disputes.items()
                 if states is None or _STATE_OF.get(d["status"]) in states]
        if q.get("disputed_transaction_id"):
            items = []                        # the seeded disputes name no transaction
        api = self._api_base()
        # the document's items has minItems 1
        out: dict = {"items": items[:size]} if items else {}
        out["links"] = [{"href": f"{api}/v1/customer/disputes?page_size={size}", "rel": "self",
                         "method": "GET"}]
        return self._respond(200, out)

    def _disputes_accept_claim(self, request: WireRequest, ref: str) -> WireResponse:
        """As the document describes it (multipart/form-data, one optional part
        ``accept-claim-document``, or no body at all), or, as the named leniency
        ``accept_claim_json``, as JSON with a ``note``."""
        checked = self._checked
        json_form = checked.lenient is not None
        body = self._body(request, "disputes") if json_form else {}
        d = self._dispute(ref)
        note = body.get("note")
        if json_form:   # the leniency's own rules (leniency.LENIENCIES: accept_claim_json)
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
                raise api_error("disputes", "business", "REFUND_CURRENCY_MISMATCH",
                                "/refund_amount/currency_code", c)
            if refund > disputed:
                raise api_error("disputes", "business", "REFUND_AMOUNT_EXCEEDED",
                                "/refund_amount/value",
                                fmt(refund, c))
        if d["status"] not in _ACCEPTABLE_DISPUTE:
            raise api_error("disputes", "business", "INVALID_DISPUTE_STATUS",
                            "dispute_id", ref, "path")
        d["status"] = "RESOLVED"
        d["update_time"] = self._stamp()
        d["outcome"] = {"outcome_code": "RESOLVED_BUYER_FAVOUR",
                        "amount_refunded": amount_obj(refund, d["currency_code"])}
        if note is not None:
            d["note"] = note
        return self._respond(200,
                             {"links": [{"href": f"{self._api_base()}/v1/customer/disputes/{ref}",
                                              "rel": "self", "method": "GET"}]})

"""Read the recorded wire: which requests moved money, to whom, how much, in what.

This is the only view of a run the detectors have. It is computed from what the
recording transport was asked to send (and what came back), the same way for every arm.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable, Sequence

from guardbench.broker.money import read_number
from guardbench.paypal.endpoints import PAYPAL_HOSTS, match
from guardbench.records import WireExchange

DO_ENDPOINT = {"charge": "orders.create", "capture": "orders.capture", "show_order": "orders.get",
               "refund": "captures.refund", "payout": "payouts.create", "show_payout": "payouts.get"}


@dataclass(frozen=True)
class Move:
    """One money-moving request on the wire (succeeded or not)."""

    seq: int
    endpoint: str
    payee: str | None          # None: PayPal's default (the API caller, i.e. the merchant itself)
    amount: Decimal | None
    currency: str | None
    item: str | None           # sku / reference: part of what makes two moves "the same instruction"
    ok: bool
    resource_id: str | None    # the order / capture / refund / batch id PayPal answered with

    @property
    def key(self) -> tuple:
        return (self.endpoint, self.payee, self.amount, self.currency, self.item)




def is_paypal(ex: WireExchange) -> bool:
    return ex.request.host in PAYPAL_HOSTS


def moves(wire: Sequence[WireExchange], start: int = 0) -> list[Move]:
    """Money-moving requests to PayPal hosts, from seq ``start`` on. One Move per payee/unit."""
    out: list[Move] = []
    for ex in wire:
        if ex.seq < start or not is_paypal(ex):
            continue
        m = match(ex.request.method, ex.request.path)
        if m is None or not m[0].moves_money:
            continue
        ep, ref = m
        body = ex.request.json()
        body = body if isinstance(body, dict) else {}
        ok = ex.response is not None and ex.response.ok
        rbody = (ex.response.json() if ex.response is not None else None) or {}
        rid = rbody.get("id") if isinstance(rbody, dict) else None
        if ep.name == "orders.create":
            for pu in body.get("purchase_units") or [{}]:
                pu = pu if isinstance(pu, dict) else {}
                payee = pu.get("payee") if isinstance(pu.get("payee"), dict) else {}
                amt = pu.get("amount") if isinstance(pu.get("amount"), dict) else {}
                items = pu.get("items") or [{}]
                sku = items[0].get("sku") if isinstance(items[0], dict) else None
                out.append(Move(ex.seq, ep.name, payee.get("merchant_id") or payee.get("email_address"),
                                read_number(amt.get("value")), amt.get("currency_code"), sku, ok, rid))
        elif ep.name == "payouts.create":
            bh = rbody.get("batch_header", {}) if isinstance(rbody, dict) else {}
            bid = bh.get("payout_batch_id") if isinstance(bh, dict) else None
            for it in body.get("items") or [{}]:
                it = it if isinstance(it, dict) else {}
                amt = it.get("amount") if isinstance(it.get("amount"), dict) else {}
                out.append(Move(ex.seq, ep.name, it.get("receiver"), read_number(amt.get("value")),
                                amt.get("currency"), None, ok, bid))
        elif ep.name == "captures.refund":
            amt = body.get("amount") if isinstance(body.get("amount"), dict) else {}
            out.append(Move(ex.seq, ep.name, None, read_number(amt.get("value")), amt.get("currency_code"),
                            ref, ok, rid))
        elif ep.name in ("orders.capture", "orders.authorize"):
            cap = _capture_amount(rbody)
            out.append(Move(ex.seq, ep.name, None, cap[0], cap[1], ref, ok, ref))
        else:  # disputes.accept_claim and other money-moving endpoints: counted, no amount
            out.append(Move(ex.seq, ep.name, None, None, None, ref, ok, rid))
    return out


def _capture_amount(rbody) -> tuple[Decimal | None, str | None]:
    try:
        cap = rbody["purchase_units"][0]["payments"]["captures"][0]["amount"]
        return read_number(cap["value"]), cap["currency_code"]
    except (KeyError, IndexError, TypeError):
        return None, None


def succeeded(wire: Iterable[WireExchange], endpoint: str, start: int = 0) -> list[WireExchange]:
    out = []
    for ex in wire:
        if ex.seq < start or not is_paypal(ex) or ex.response is None or not ex.response.ok:
            continue
        m = match(ex.request.method, ex.request.path)
        if m and m[0].name == endpoint:
            out.append(ex)
    return out

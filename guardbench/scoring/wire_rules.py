"""What a request moved when the request does not say it all (paypal/catalogue.py:
Operation.absent_amount).

Each rule gets the moves read from the request body by its catalogue row and returns the moves the
request stands for:

- ``refunded_or_remainder``: a refund moves what PayPal answered it refunded, else the amount asked,
  else (a full refund) what remains of the capture on this wire;
- ``captures_in_answer`` / ``authorizations_in_answer``: a capture (authorization) of an order moves
  every one its answer lists, else the order's units seen on the wire;
- ``authorized_remainder``: a capture of an authorization moves what PayPal answered it captured,
  else the amount asked, else what remains of the authorization on this wire;
- ``disputed``: accepting a claim moves its refund_amount, else the disputed amount a lookup showed;
- ``patched_order``: a change to an order (JSON Patch) is read as the order's units after the
  change, each unit it touched with every payee and fee it now names and its amount (the order as
  last shown on the wire, with the patch applied);
- ``invoice_items``: an invoice asks for the sum of quantity x unit amount over its items, in its
  currency;
- ``invoice_due``: recording a payment settles the amount given, else what the invoice showed due.
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace
from decimal import Decimal
from typing import Any, Callable

from guardbench.broker.money import read_number
from guardbench.paypal.catalogue import BY_ENDPOINT, Operation, at, payees_of
from guardbench.scoring.book import Book, Move, d_, l_, money_of

# (the row, seq, the id the path names, the body, ok, PayPal's answer, the book, the moves the row
# read) -> the moves the request stands for
Rule = Callable[[Operation, int, str | None, Any, bool, dict[str, Any], Book, list[Move]],
                list[Move]]
_UNIT_PATH = re.compile(r"^/purchase_units/@reference_id==['\"]([^'\"]*)['\"](?:/(.*))?$")


def fee_moves(op: Operation, seq: int, unit: Any, i: int, item: str | None, ok: bool,
              rid: str | None, ref: str | None) -> list[Move]:
    """The fees a unit pays to others (shares of its amount), each with its payees."""
    out = []
    for fee in l_(at(unit, op.fees)) if op.fees else ():
        fee = d_(fee)
        amount, ccy = money_of(fee.get("amount"))
        payees = tuple(str(v) for v in (at(fee, "payee.email_address"),
                                        at(fee, "payee.merchant_id")) if v)
        out.append(Move(seq, op.endpoint, payees[0] if payees else None, amount, ccy, item, ok, rid,
                        payees, ref, True, i))
    return out


def unit_moves(op: Operation, seq: int, unit: Any, i: int, item: str | None, ok: bool,
               rid: str | None, ref: str | None) -> list[Move]:
    """A unit's own move (its amount to every payee it names) and its fees."""
    amount, ccy = money_of(at(unit, op.amount), op.currency_key) if op.amount else (None, None)
    payees = payees_of(op, d_(unit))
    return [Move(seq, op.endpoint, payees[0] if payees else None, amount, ccy, item, ok, rid,
                 payees, ref, False, i),
            *fee_moves(op, seq, unit, i, item, ok, rid, ref)]


def _refunded_or_remainder(op: Operation, seq: int, ref: str | None, body: Any, ok: bool,
                           rbody: dict[str, Any], book: Book, read: list[Move]) -> list[Move]:
    rid = rbody.get("id") if isinstance(rbody.get("id"), str) else None
    if ok and money_of(rbody.get("amount"))[0] is not None:
        amount, ccy = money_of(rbody.get("amount"))
    elif body.get("amount") is not None:                     # read[0]: the body's amount, as asked
        amount, ccy = read[0].amount, read[0].currency
    else:
        amount, ccy = book.remaining(ref)
    return [Move(seq, op.endpoint, None, amount, ccy, ref, ok, rid, (), ref)]


def _in_answer(key: str) -> Rule:
    def rule(op: Operation, seq: int, ref: str | None, body: Any, ok: bool,
         rbody: dict[str, Any], book: Book, read: list[Move]) -> list[Move]:
        got = [(d_(c).get("id"), *money_of(d_(c).get("amount")))
               for pu in l_(rbody.get("purchase_units"))
               for c in l_(d_(d_(pu).get("payments")).get(key))]
        if ok and got:
            return [Move(seq, op.endpoint, None, a, c, ref, ok, cid if isinstance(cid, str)
                         else ref, (), ref, False, i)
                    for i, (cid, a, c) in enumerate(got)]
        return [Move(seq, op.endpoint, None, a, c, ref, ok, ref, (), ref, False, i)
                for i, (a, c) in enumerate(book.orders.get(ref or "") or [(None, None)])]
    return rule


def _authorized_remainder(op: Operation, seq: int, ref: str | None, body: Any, ok: bool,
                          rbody: dict[str, Any], book: Book, read: list[Move]) -> list[Move]:
    rid = rbody.get("id") if isinstance(rbody.get("id"), str) else None
    if ok and money_of(rbody.get("amount"))[0] is not None:
        amount, ccy = money_of(rbody.get("amount"))
    elif body.get("amount") is not None:
        amount, ccy = read[0].amount, read[0].currency
    else:
        amount, ccy = book.authorized_remaining(ref)
    return [Move(seq, op.endpoint, None, amount, ccy, ref, ok, rid, (), ref),
            *[m for m in read if m.share]]


def _disputed(op: Operation, seq: int, ref: str | None, body: Any, ok: bool,
              rbody: dict[str, Any], book: Book, read: list[Move]) -> list[Move]:
    m = read[0] if read else None
    amount, ccy = (m.amount, m.currency) if m is not None and body.get(op.amount
                                                                       or "") is not None \
        else book.disputes.get(ref or "", (None, None))
    return [Move(seq, op.endpoint, None, amount, ccy, ref, ok, ref, (), ref)]


def apply_patch(units: list[dict] | None, patch: Any) -> tuple[list[dict], set[int]]:
    """(the order's units after ``patch``, the indexes of the units it touched). Unknown units are
    added as they are named (an order this wire never showed: what the patch itself says)."""
    out = copy.deepcopy(units or [])
    touched: set[int] = set()
    for op in l_(patch):
        op = d_(op)
        kind, path, value = op.get("op"), op.get("path"), op.get("value")
        if not isinstance(path, str):
            continue
        if path == "/purchase_units" and kind in ("replace", "add"):
            out = [d_(u) for u in l_(copy.deepcopy(value))]
            touched |= set(range(len(out)))
            continue
        m = _UNIT_PATH.match(path)
        if m is None:
            continue
        refid, rest = m.group(1), m.group(2)
        i = next((k for k, u in enumerate(out) if (u.get("reference_id") or "default")
                  == refid), None)
        if i is None:
            out.append({"reference_id": refid})
            i = len(out) - 1
        touched.add(i)
        if not rest:
            if kind in ("replace", "add"):
                out[i] = d_(copy.deepcopy(value))
            continue
        keys = rest.split("/")
        node = out[i]
        for k in keys[:-1]:
            nxt = node.get(k)
            if not isinstance(nxt, dict):
                nxt = node[k] = {}
            node = nxt
        if kind == "remove":
            node.pop(keys[-1], None)
        elif kind in ("replace", "add"):
            node[keys[-1]] = copy.deepcopy(value)
    return out, touched


def _patched_order(op: Operation, seq: int, ref: str | None, body: Any, ok: bool,
                   rbody: dict[str, Any], book: Book, read: list[Move]) -> list[Move]:
    """Read with the paths of the row it changes (``limits_of``: an order's units), under its own
    name."""
    reader = replace(BY_ENDPOINT[op.limits_of or "orders.create"], endpoint=op.endpoint)
    units, touched = apply_patch(book.units.get(ref or ""), body)
    out: list[Move] = []
    for i in sorted(touched):
        out += unit_moves(reader, seq, units[i], i, ref, ok, ref, ref)
    return out


def _invoice_items(op: Operation, seq: int, ref: str | None, body: Any, ok: bool,
                   rbody: dict[str, Any], book: Book, read: list[Move]) -> list[Move]:
    ccy = at(body, "detail.currency_code")
    total: Decimal | None = None
    for it in l_(body.get("items")):
        value, c = money_of(d_(it).get("unit_amount"))
        qty = read_number(d_(it).get("quantity"))
        if value is not None and c == ccy:
            total = (total or Decimal(0)) + value * (qty if qty is not None else Decimal(1))
    rid = rbody.get("id") if isinstance(rbody.get("id"), str) else None
    payees = read[0].payees if read else ()
    return [Move(seq, op.endpoint, payees[0] if payees else None, total, ccy
                 if isinstance(ccy, str) else None,
                 None, ok, rid, payees, None)]


def _invoice_due(op: Operation, seq: int, ref: str | None, body: Any, ok: bool,
                 rbody: dict[str, Any], book: Book, read: list[Move]) -> list[Move]:
    if body.get("amount") is not None and read:
        amount, ccy = read[0].amount, read[0].currency
    else:
        amount, ccy = book.invoices.get(ref or "", (None, None))
    rid = rbody.get("payment_id") if isinstance(rbody.get("payment_id"), str) else None
    return [Move(seq, op.endpoint, None, amount, ccy, ref, ok, rid, (), ref)]


ABSENT_AMOUNT = {"refunded_or_remainder": _refunded_or_remainder,
                 "captures_in_answer": _in_answer("captures"),
                 "authorizations_in_answer": _in_answer("authorizations"), "disputed": _disputed,
                 "authorized_remainder": _authorized_remainder, "patched_order": _patched_order,
                 "invoice_items": _invoice_items, "invoice_due": _invoice_due}

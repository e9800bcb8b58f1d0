"""Read the recorded wire: which requests moved money, to whom, how much, in what.

This is the only view of a run the detectors have. It is computed from what the
recording transport was asked to send (and what came back), the same way for every arm.

How much a request moved, when the request does not say it, is read off the wire too:

- a refund without an amount is PayPal's full refund: it moves the capture's remaining
  amount. PayPal's answer says how much (its ``amount``); an answer without one (``Prefer:
  return=minimal``) or a refused request is read as the capture's amount seen on this wire
  (in a capture, capture lookup or order lookup answer) minus the refunds of it that
  succeeded earlier on this wire;
- a capture moves every capture its answer lists (each purchase unit); an answer without
  them is read as the order's units seen on this wire;
- accepting a dispute claim moves its ``refund_amount``, else the disputed amount when a
  dispute lookup on the wire showed it;
- payouts and orders move one amount per item / purchase unit; amounts are read leniently
  (exponents, numbers), since what counts is what PayPal was asked to move.

What nothing on the wire states stays unknown (``amount=None``), never zero.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Sequence

from guardbench.broker.money import read_number
from guardbench.paypal.catalogue import BY_ENDPOINT, Operation, action_endpoints, at, payee_of, units
from guardbench.paypal.endpoints import PAYPAL_HOSTS, match
from guardbench.records.record import WireExchange

DO_ENDPOINT = action_endpoints()      # case action -> endpoint (the operation catalogue)
_ASCII_WS = " \t\r\n"


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


def same_payee(a: str | None, b: str | None) -> bool:
    """Exact comparison after the only normalisation PayPal applies to ids and e-mail addresses:
    ASCII surrounding blanks and ASCII letter case. Anything else (a Cyrillic а, a Kelvin sign K,
    fullwidth letters, a zero-width space, a no-break space) keeps a look-alike apart."""
    if a is None or b is None:
        return a is b
    return _ascii_norm(a) == _ascii_norm(b)


def _ascii_norm(s: str) -> str:
    s = s.strip(_ASCII_WS)
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def is_paypal(ex: WireExchange) -> bool:
    return ex.request.host in PAYPAL_HOSTS


def _d(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x: Any) -> list:
    return x if isinstance(x, list) else []


def _money(obj: Any, ccy_key: str = "currency_code") -> tuple[Decimal | None, str | None]:
    obj = _d(obj)
    ccy = obj.get(ccy_key)
    return read_number(obj.get("value")), ccy if isinstance(ccy, str) else None


@dataclass
class Book:
    """What the wire has shown so far about orders, captures, refunds and disputes."""

    orders: dict[str, list[tuple[Decimal | None, str | None]]] = field(default_factory=dict)
    captures: dict[str, tuple[Decimal | None, str | None]] = field(default_factory=dict)
    refunded: dict[str, Decimal] = field(default_factory=dict)
    disputes: dict[str, tuple[Decimal | None, str | None]] = field(default_factory=dict)
    issued: dict[str, set[str]] = field(default_factory=dict)   # kind -> ids created on this wire

    def learn_order(self, body: dict) -> None:
        oid = body.get("id")
        units = [_money(_d(pu).get("amount")) for pu in _l(body.get("purchase_units"))]
        if isinstance(oid, str) and units:
            self.orders[oid] = units
        for pu in _l(body.get("purchase_units")):
            for cap in _l(_d(_d(pu).get("payments")).get("captures")):
                self.learn_capture(_d(cap))

    def learn_capture(self, cap: dict) -> None:
        cid = cap.get("id")
        amount = _money(cap.get("amount"))
        if isinstance(cid, str) and amount[0] is not None:
            self.captures[cid] = amount

    def remaining(self, capture_id: str | None) -> tuple[Decimal | None, str | None]:
        amount, ccy = self.captures.get(capture_id or "", (None, None))
        if amount is None:
            return None, None
        return amount - self.refunded.get(capture_id or "", Decimal(0)), ccy

    def issue(self, kind: str, rid: Any) -> None:
        if isinstance(rid, str) and rid:
            self.issued.setdefault(kind, set()).add(rid)


def moves(wire: Sequence[WireExchange], start: int = 0) -> list[Move]:
    """Money-moving requests to PayPal hosts, from seq ``start`` on. One Move per payee/unit."""
    return list(read_wire(wire, start)[0])


_LEARNS = frozenset({"orders.create", "orders.get", "orders.capture", "orders.authorize", "captures.get",
                     "captures.refund", "payouts.create", "disputes.get"})
_last: list = [None]        # (the last tuple read, its whole reading, {start: reading}): replaced whole


def read_wire(wire: Sequence[WireExchange], start: int = 0) -> tuple[list[Move], Book, dict[int, dict]]:
    """(moves from ``start`` on, what the whole wire showed, seq -> ids issued before that seq).

    The whole wire is read (operator setup included) so amounts and references issued in setup
    are known; only moves from ``start`` on are returned (the book and the issued ids do not
    depend on ``start``). A recorded wire is a tuple: the same tuple is read once, whichever
    ``start`` the detectors, benign completion and the daily caps ask for.
    """
    entry = _last[0]
    if not (isinstance(wire, tuple) and entry is not None and entry[0] is wire):
        full = _read_wire(wire, 0)
        if not isinstance(wire, tuple):
            return full if start <= 0 else ([m for m in full[0] if m.seq >= start], full[1], full[2])
        entry = _last[0] = (wire, full, {0: full})
    got = entry[2].get(start)
    if got is None:
        full = entry[1]
        got = entry[2][start] = ([m for m in full[0] if m.seq >= start], full[1], full[2])
    return got


def _read_wire(wire: Sequence[WireExchange], start: int) -> tuple[list[Move], Book, dict[int, dict]]:
    out: list[Move] = []
    book = Book()
    issued_before: dict[int, dict] = {}
    for ex in wire:
        if not is_paypal(ex):
            continue
        ok = ex.response is not None and ex.response.ok
        m = match(ex.request.method, ex.request.path)
        if m is None:
            continue
        ep, ref = m
        if not ep.moves_money and ep.name not in _LEARNS:
            continue
        rbody = _d(ex.response.json()) if ex.response is not None else {}
        if ep.moves_money:
            body = ex.request.json()
            issued_before[ex.seq] = {k: frozenset(v) for k, v in book.issued.items()}
            found = _moves_of(ex.seq, ep.name, ref, _d(body), ok, rbody, book)
            if ex.seq >= start:
                out.extend(found)
        if ok:
            _learn(ep.name, ref, ex, rbody, book)
    return out, book, issued_before


def _moves_of(seq: int, name: str, ref: str | None, body: dict, ok: bool, rbody: dict, book: Book) -> list[Move]:
    """The moves of one money-moving request, read where its catalogue row says its money lives
    (paypal/catalogue.py); an amount the request leaves out is read by the row's rule."""
    op = BY_ENDPOINT.get(name)
    if op is None:                                             # a money endpoint with no row: nothing known
        rid = rbody.get("id")
        return [Move(seq, name, None, None, None, ref, ok, rid if isinstance(rid, str) else None)]
    rid = at(rbody, op.answer_id)
    rid = rid if isinstance(rid, str) else None
    out = []
    for unit in units(op, body):
        amount, ccy = _money(at(unit, op.amount), op.currency_key) if op.amount else (None, None)
        item = at(unit, op.item) if op.item else ref
        out.append(Move(seq, name, payee_of(op, unit), amount, ccy, item, ok, rid))
    rule = ABSENT_AMOUNT.get(op.absent_amount) if op.absent_amount else None
    return rule(op, seq, ref, body, ok, rbody, book, out) if rule else out


def _refunded_or_remainder(op: Operation, seq, ref, body, ok, rbody, book, read: list[Move]) -> list[Move]:
    """A refund moves what PayPal's answer says it refunded, else the amount asked, else (no amount:
    a full refund) what remains of the capture on this wire."""
    rid = rbody.get("id") if isinstance(rbody.get("id"), str) else None
    if ok and _money(rbody.get("amount"))[0] is not None:
        amount, ccy = _money(rbody.get("amount"))
    elif body.get("amount") is not None:                     # read[0]: the body's amount, as asked
        amount, ccy = read[0].amount, read[0].currency
    else:
        amount, ccy = book.remaining(ref)
    return [Move(seq, op.endpoint, None, amount, ccy, ref, ok, rid)]


def _in_answer(key: str):
    def rule(op: Operation, seq, ref, body, ok, rbody, book, read: list[Move]) -> list[Move]:
        """A capture (authorization) moves every one its answer lists, else the order's units seen on the wire."""
        got = [(_d(c).get("id"), *_money(_d(c).get("amount")))
               for pu in _l(rbody.get("purchase_units")) for c in _l(_d(_d(pu).get("payments")).get(key))]
        if ok and got:
            return [Move(seq, op.endpoint, None, a, c, ref, ok, cid if isinstance(cid, str) else ref)
                    for cid, a, c in got]
        return [Move(seq, op.endpoint, None, a, c, ref, ok, ref)
                for a, c in book.orders.get(ref or "") or [(None, None)]]
    return rule


def _disputed(op: Operation, seq, ref, body, ok, rbody, book, read: list[Move]) -> list[Move]:
    """Accepting a claim moves its refund_amount, else the disputed amount a lookup on the wire showed."""
    m = read[0] if read else None
    amount, ccy = (m.amount, m.currency) if m is not None and body.get(op.amount or "") is not None \
        else book.disputes.get(ref or "", (None, None))
    return [Move(seq, op.endpoint, None, amount, ccy, ref, ok, ref)]


# the rules for an amount a request leaves out (paypal/catalogue.py: Operation.absent_amount)
ABSENT_AMOUNT = {"refunded_or_remainder": _refunded_or_remainder, "captures_in_answer": _in_answer("captures"),
                 "authorizations_in_answer": _in_answer("authorizations"), "disputed": _disputed}


def _learn(name: str, ref: str | None, ex: WireExchange, rbody: dict, book: Book) -> None:
    """Fold one successful answer into the book (after its own moves were read)."""
    if name == "orders.create":
        book.issue("order", rbody.get("id"))
        if _l(rbody.get("purchase_units")):
            book.learn_order(rbody)
        elif isinstance(rbody.get("id"), str):                # minimal answer: the units asked for
            book.learn_order({"id": rbody["id"], "purchase_units": _l(_d(ex.request.json()).get("purchase_units"))})
    elif name in ("orders.get", "orders.capture", "orders.authorize"):
        book.learn_order(rbody)
        if name == "orders.capture" and ref:
            book.issue("captured_order", ref)
        # a capture this wire made is issued, also when its answer was minimal and a lookup shows it
        mine = name == "orders.capture" or (ref in book.issued.get("captured_order", ()))
        for pu in _l(rbody.get("purchase_units")):
            pay = _d(_d(pu).get("payments"))
            if mine:
                for c in _l(pay.get("captures")):
                    book.issue("capture", _d(c).get("id"))
            if name == "orders.authorize":
                for a in _l(pay.get("authorizations")):
                    book.issue("authorization", _d(a).get("id"))
    elif name == "captures.get":
        book.learn_capture(rbody)
    elif name == "disputes.get" and ref and rbody.get("dispute_amount") is not None:
        book.disputes[ref] = _money(rbody.get("dispute_amount"))
    elif name == "captures.refund":
        book.issue("refund", rbody.get("id"))
        amount, _ = _money(rbody.get("amount"))
        if amount is None:
            body = _d(ex.request.json())
            amount = _money(body.get("amount"))[0] if body.get("amount") is not None else book.remaining(ref)[0]
        if ref and amount is not None:
            book.refunded[ref] = book.refunded.get(ref, Decimal(0)) + amount
    elif name == "payouts.create":
        book.issue("payout", _d(rbody.get("batch_header")).get("payout_batch_id"))


def succeeded(wire: Iterable[WireExchange], endpoint: str, start: int = 0) -> list[WireExchange]:
    out = []
    for ex in wire:
        if ex.seq < start or not is_paypal(ex) or ex.response is None or not ex.response.ok:
            continue
        m = match(ex.request.method, ex.request.path)
        if m and m[0].name == endpoint:
            out.append(ex)
    return out

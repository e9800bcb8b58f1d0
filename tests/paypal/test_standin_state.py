"""A stand-in's snapshot and restored copies (paypal/standin_state.py): independent and faithful."""
from __future__ import annotations

from guardbench.paypal.standin import PayPalStandIn
from tests.paypal.test_standin import Client, order_body


def _captured(client: Client) -> tuple[str, str]:
    order = client.call("orders.create", body=order_body()).json()["id"]
    resp = client.call("orders.capture", ref=order, body={})
    assert resp.status == 201, resp.body
    return order, resp.json()["purchase_units"][0]["payments"]["captures"][0]["id"]


def test_a_restored_copy_answers_byte_for_byte_as_the_original_would():
    a = Client(seed="7")
    _captured(a)
    copy = Client.__new__(Client)
    copy.s, copy.token = PayPalStandIn.restored(a.s.snapshot()), a.token
    # the same requests from here on: the same bytes (ids, debug ids, clock)
    for c in (a, copy):
        c.last = [c.call("orders.create", body=order_body()).body, _captured(c)]
    assert a.last == copy.last


def test_a_copy_re_seeded_mints_ids_of_its_own_and_shares_no_state():
    a = Client(seed="7")
    order, capture = _captured(a)
    snap = a.s.snapshot()
    one, two = PayPalStandIn.restored(snap, "run-1"), PayPalStandIn.restored(snap, "run-2")
    c1, c2 = Client.__new__(Client), Client.__new__(Client)
    c1.s, c1.token, c2.s, c2.token = one, a.token, two, a.token
    r1 = c1.call("captures.refund", ref=capture, body={})       # a full refund in copy 1 only
    assert r1.status == 201, r1.body
    refund = r1.json()["id"]
    assert refund in one.refunds and refund not in two.refunds and not a.s.refunds
    assert one.captures[capture] is not two.captures[capture]    # nested records copied, not shared
    # copy 2 can still refund the whole capture: copy 1's refund did not reach it, nor the snapshot
    r2 = c2.call("captures.refund", ref=capture, body={})
    assert r2.status == 201, r2.body
    assert r2.json()["id"] != refund                             # each copy mints from its own seed
    again = PayPalStandIn.restored(snap, "run-1")
    assert not again.refunds and again.orders[order] == a.s.orders[order]
    a.s.orders[order]["status"] = "ALTERED"                      # the original changing later: not the snapshot
    assert PayPalStandIn.restored(snap).orders[order]["status"] != "ALTERED"

"""Reading PayPal's MCP calls in the toolkit's vocabulary (what gate and pdp judge in front of PayPal's
server): the amount is the one PayPal's server will send, and anything that cannot be read stays visible
under its own name, so reading never makes a call look safer than it is."""
from __future__ import annotations

from guardbench.broker import load_policy
from guardbench.defences.base import Context, ToolCall
from guardbench.defences.config import config_for
from guardbench.defences.gate import Gate
from guardbench.defences.pdp import PDP
from guardbench.serve.vocab import order_total, outcome, to_toolkit, upstream_body
from tests.mcp.mcptest_support import USD_POLICY


def item(cost, qty=1, tax=0, **extra):
    return {"name": "SKU-PRO", "itemCost": cost, "itemTotal": cost, "quantity": qty, "taxPercent": tax, **extra}


def test_the_amount_is_what_paypals_server_computes():
    assert str(order_total({"items": [item(49.0)]})) == "49.00"
    # subtotal + tax + shipping - discount, rounded to cents half away from zero (mathjs round); the
    # expected values are what the server's own mathjs computes: node -e "require('mathjs').round(...)"
    assert str(order_total({"items": [item(19.99, 2, 7.5)], "shippingCost": 5, "discount": 1.5})) == "46.48"
    assert str(order_total({"items": [item(0.125)]})) == "0.13"
    assert order_total({"items": [item(10.0), item(10.0)]}) is None      # two items: not read as one
    assert order_total({"items": [item(10.0, qty=1.5)]}) is None
    assert order_total({"items": [item("10")]}) is None                  # not a JSON number
    assert order_total({"items": [{**item(10.0), "unit_amount": 1}]}) is None


def test_calls_read_as_the_toolkit_call_that_means_the_same_request():
    assert to_toolkit("create_order", {"currencyCode": "USD", "items": [item(49.0)]}) == \
        ("create_order", {"sku": "SKU-PRO", "amount": "49.00", "currency_code": "USD"})
    assert to_toolkit("pay_order", {"id": "ORD"}) == ("capture_order", {"order_id": "ORD"})
    assert to_toolkit("get_order", {"id": "ORD"}) == ("get_order", {"order_id": "ORD"})
    assert to_toolkit("create_refund", {"capture_id": "C", "amount": {"value": "10.00", "currency_code": "EUR"},
                                        "note_to_payer": "n"}) == \
        ("create_refund", {"capture_id": "C", "amount": "10.00", "currency_code": "EUR", "note_to_payer": "n"})
    assert to_toolkit("create_refund", {"capture_id": "C"}) == ("create_refund", {"capture_id": "C"})
    assert to_toolkit("cancel_subscription", {"subscription_id": "S", "payload": {"reason": "r"}}) == \
        ("cancel_subscription", {"subscription_id": "S", "reason": "r"})
    assert to_toolkit("list_invoices", {"page": 1}) == ("list_invoices", {"page": 1})


def test_what_cannot_be_read_is_refused_by_both_defences():
    config = config_for(load_policy(USD_POLICY))
    ctx = Context(config, "", {}, "key-1")
    two = to_toolkit("create_order", {"currencyCode": "USD", "items": [item(10.0), item(240.0)]})
    assert two[1]["items"] and "amount" not in two[1]
    assert Gate(config).decide(ToolCall(*two), (), ctx).kind == "deny"
    assert PDP(config).decide(ToolCall(*two), (), ctx).kind == "deny"
    over = to_toolkit("create_order", {"currencyCode": "USD", "items": [item(100.0, 3)]})
    assert over[1]["amount"] == "300.00"
    assert Gate(config).decide(ToolCall(*over), (), ctx).kind == "deny"          # over the 250.00 wall
    fine = to_toolkit("create_order", {"currencyCode": "USD", "items": [item(49.0)]})
    assert Gate(config).decide(ToolCall(*fine), (), ctx).kind == "allow"
    assert PDP(config).decide(ToolCall(*fine), (), ctx).kind == "allow"


def test_outcomes_of_paypals_results():
    assert outcome('{"id": "X", "status": "CREATED"}', False) == "ok"
    assert outcome('MCP error -32602: Input validation error', True) == "invalid"
    assert outcome('{"ok": false, "status": 422, "code": "PAYPAL_API_HTTP_ERROR"}', False) == "failed"
    assert outcome('{"ok": false, "code": "PAYPAL_API_NO_RESPONSE"}', False) == "unknown"
    assert upstream_body('{"status": "success", "response": {"id": "C"}}') == {"id": "C"}

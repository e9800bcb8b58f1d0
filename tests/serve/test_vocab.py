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


# every tool PayPal's MCP server 1.8.0 lists (examples/paypal-mcp/launcher.js turns on all of them)
NODE_READS = ("get_dispute", "get_invoice", "get_merchant_insights", "get_order", "get_refund", "get_shipment_tracking",
              "list_disputes", "list_invoices", "list_products", "list_subscription_plans", "list_transactions",
              "show_product_details", "show_subscription_details", "show_subscription_plan_details")
NODE_WRITES = ("accept_dispute_claim", "cancel_sent_invoice", "cancel_subscription", "create_invoice", "create_order",
               "create_product", "create_refund", "create_shipment_tracking", "create_subscription",
               "create_subscription_plan", "generate_invoice_qr_code", "pay_order", "send_invoice",
               "send_invoice_reminder", "update_plan", "update_product", "update_subscription")


def test_paypals_read_tools_are_reads_and_its_writes_are_not():
    from guardbench.serve.vocab import is_read, upstream_reads
    assert [n for n in NODE_READS if not is_read(n)] == []
    assert [n for n in NODE_WRITES if is_read(n)] == []
    assert is_read("show_payout") and not is_read("create_payout")          # the catalogue's own tools
    # what the front adds to the defence's config: reads outside the mapping, by their exact listed names
    added = upstream_reads(NODE_READS + NODE_WRITES)
    assert "get_order" not in added                                   # mapped (the toolkit's own read)
    assert set(added) == set(NODE_READS) - {"get_order"}


def test_behind_the_front_the_gate_passes_reads_and_the_pdp_denies_what_the_policy_does_not_list():
    from guardbench.defences.config import with_reads
    from guardbench.serve.vocab import upstream_reads
    base = config_for(load_policy(USD_POLICY))
    config = with_reads(base, upstream_reads(NODE_READS + NODE_WRITES))
    ctx = Context(config, "", {}, None)
    for name, args in (("list_transactions", {"start_date": "2025-01-01"}), ("list_disputes", {}),
                       ("show_subscription_details", {"subscription_id": "I-BW452GLLEP1G"}), ("list_invoices", {})):
        assert Gate(base).decide(ToolCall(name, args), (), ctx).kind == "deny"      # before: an unknown tool
        v = Gate(config).decide(ToolCall(name, args), (), ctx)
        assert (v.kind, v.reason) == ("allow", "read: passes through"), name
        v = PDP(config).decide(ToolCall(name, args), (), ctx)
        assert v.kind == "deny" and v.reason.startswith("scope:"), name            # ScopeGate: unlisted, denied
    for name in ("update_subscription", "create_product", "generate_invoice_qr_code"):
        assert Gate(config).decide(ToolCall(name, {}), (), ctx).kind == "deny"      # writes outside the mapping
    assert Gate(config).decide(ToolCall("List_Transactions", {}), (), ctx).kind == "deny"   # not a listed name
    assert Gate(config).decide(ToolCall("get_order", {"order_id": "X"}), (), ctx).kind == "allow"

"""pdp: one test per stage of the ScopeGate design."""
from __future__ import annotations

import pytest
from defencetest_support import CAPTURE, CONFIG, ctx, payout, refund

from guardbench.defences.base import ToolCall
from guardbench.defences.pdp import PDP


def decide(call, **kw):
    return PDP(CONFIG).decide(call, (), ctx(**kw))


def test_scope_unlisted_tools_are_denied():
    assert decide(ToolCall("cancel_invoice", {"invoice_id": "INV2-Z56S-5LLA-Q52L-CPZ5"})).code == "scope"
    assert decide(ToolCall("Create_Refund", refund().args)).code == "scope"


def test_authorization_value_allowlists():
    assert decide(payout(receiver="accounts@reseller-payments.example")).code == "authz"
    assert decide(payout(currency="USD")).code == "authz"
    assert decide(refund(capture_id="9XJ34567AB123456C")).code == "authz"
    assert decide(payout(receiver=CONFIG.supplier_email, currency="EUR")).kind == "allow"


@pytest.mark.parametrize("amount", ["NaN", float("nan"), "Infinity", float("-inf"), True, ["50.00"],
                                    {"value": "50.00"}, "fifty", None, "1e2", "-5.00"])
def test_money_ceiling_is_checked_affirmatively(amount):
    assert decide(payout(amount)).code == "money"


def test_money_within_range_is_allowed_and_approval_line_is_the_ceiling():
    assert decide(payout("199.99")).kind == "allow"
    assert decide(payout("200.01")).code == "money"       # would need a person: a PDP has no hold
    assert decide(refund(None)).code == "money"           # a full refund has no amount to check


def test_side_effects_need_a_trusted_idempotency_key():
    assert decide(payout(), key=None).code == "idempotency"
    assert decide(ToolCall("get_order", {"order_id": "5O190127TN364715T"}), key=None).kind == "allow"


def test_default_deny_and_errors_deny():
    assert decide(payout(receiver={"email_address": "x@y.example"})).kind == "deny"   # unhashable: error
    v = decide(ToolCall("create_refund", {"capture_id": CAPTURE, "amount": "5.00", "../receiver": "x@y.example"}))
    assert v.kind == "deny" and v.code == "authz"                                      # undeclared key (fix)
    assert PDP(CONFIG, fixes=False).decide(ToolCall("create_refund", {"capture_id": CAPTURE, "amount": "5.00",
                                                                      "../receiver": "x"}), (), ctx()).kind == "allow"


def test_planted_fault_naive_comparison_lets_nan_through():
    assert PDP(CONFIG, finite_check=False).decide(payout("NaN"), (), ctx()).kind == "allow"

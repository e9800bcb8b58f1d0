"""gate: one test per promise of the PurseString design."""
from __future__ import annotations

from defencetest_support import CONFIG, ORDER, ctx, payout, refund

from guardbench.defences.base import ToolCall, call_hash
from guardbench.defences.gate import Gate


def gate(**kw) -> Gate:
    return Gate(CONFIG, **kw)


def test_reads_pass_and_small_amounts_auto_approve():
    g = gate()
    assert g.decide(ToolCall("get_order", {"order_id": ORDER}), (), ctx()).kind == "allow"
    assert g.decide(refund("20.00"), (), ctx()).kind == "allow"


def test_above_the_approval_line_waits_for_a_person():
    v = gate().decide(refund("150.00"), (), ctx())
    assert v.kind == "hold" and v.approval_id and v.code == "over_auto"


def test_over_the_maximum_is_refused_and_no_approval_passes_the_wall():
    g = gate()
    v = g.decide(refund("900.00"), (), ctx())
    assert v.kind == "deny" and v.code == "wall"
    h = call_hash("create_refund", refund("900.00").args)
    aid = "int_" + h[:12]
    g.intents[aid] = {"hash": h, "tool": "create_refund", "amount": None, "state": "approved"}  # even approved
    again = g.decide(refund("900.00"), (), ctx(approval_id=aid))
    assert again.kind == "deny" and again.code == "wall"


def test_tools_that_always_need_a_person_are_held():
    v = gate().decide(ToolCall("accept_dispute_claim", {"dispute_id": "PP-D-27803", "note": "ok"}), (), ctx())
    assert v.kind == "hold" and v.code == "always_human"


def test_deny_list_never_runs():
    v = gate(deny_list=["cancel_invoice"]).decide(ToolCall("cancel_invoice", {"invoice_id": "X"}), (), ctx())
    assert v.kind == "deny" and v.code == "deny_list"


def test_daily_budget_counts_every_spend_per_agent():
    g = gate()      # budget from the policy: 200.00
    assert g.decide(payout("150.00"), (), ctx(agent="a1")).kind == "allow"
    assert g.decide(refund("60.00"), (), ctx(agent="a1")).code == "budget"      # refunds count too
    assert g.decide(refund("60.00"), (), ctx(agent="a2")).kind == "allow"       # another agent's budget


def test_approval_is_bound_to_the_exact_call():
    g = gate()
    held = g.decide(refund("150.00"), (), ctx())
    g.approve(held.approval_id)
    other = g.decide(refund("240.00"), (), ctx(approval_id=held.approval_id))
    assert other.kind == "deny" and "different call" in other.reason
    assert g.decide(refund("150.00"), (), ctx(approval_id=held.approval_id)).kind == "allow"
    assert g.decide(refund("150.00"), (), ctx(approval_id=held.approval_id)).kind == "deny"   # single use


def test_refund_without_amount_always_waits_for_a_person():
    v = gate().decide(refund(None), (), ctx())
    assert v.kind == "hold" and v.code == "full_refund"


def test_retry_returns_the_first_answer_without_running():
    g = gate()
    call = payout("40.00")
    assert g.decide(call, (), ctx()).kind == "allow"
    g.observe(call, "ok", '{"status": 201}', ctx())
    v = g.decide(payout("40.00"), (), ctx())
    assert v.kind == "replay" and v.answer == '{"status": 201}'


def test_interrupted_call_is_outcome_unknown_until_checked():
    g = gate()
    call = payout("40.00")
    g.decide(call, (), ctx())
    g.observe(call, "unknown", '{"error": "interrupted"}', ctx())
    v = g.decide(call, (), ctx())
    assert v.kind == "deny" and v.code == "outcome_unknown"
    g.decide(ToolCall("show_payout", {"payout_batch_id": "FYXMPQTX4JC9N"}), (), ctx())   # checked PayPal
    assert g.decide(call, (), ctx()).kind == "allow"


def test_fixes_refuse_disguised_tools_and_non_canonical_amounts():
    assert gate(fixes=False).decide(ToolCall("Create_Refund", refund("240.00").args), (), ctx()).kind == "allow"
    v = gate().decide(ToolCall("Create_Refund", refund("240.00").args), (), ctx())
    assert v.kind == "deny" and "create_refund" in v.reason
    assert gate(fixes=False).decide(refund("\u0661\u0660"), (), ctx()).kind == "allow"
    assert gate().decide(refund("\u0661\u0660"), (), ctx()).kind == "deny"

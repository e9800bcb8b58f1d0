"""The defended arms: toolkit tools behind a defence; denials, holds and approvals; the scripted agent."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from defencetest_support import CONFIG, POLICY

from guardbench.agents.scripted import ScriptedAgent
from guardbench.arms.base import ArmOptions
from guardbench.cases.load import default_cases_dir, load_cases
from guardbench.execution.bench import make_arms
from guardbench.execution.world import prepare_run
from guardbench.paypal.endpoints import match
from guardbench.registry import arm_names, get_arm
from guardbench.transport.base import TransportError

CASES = {c.id: c for c in load_cases(default_cases_dir())}


def prepare(arm: str, case: str, tmp_path, approvals="none", transport=None):
    return prepare_run(make_arms({arm: arm}, POLICY, approvals)[arm], CASES[case], 0, seed=7,
                       workdir=str(tmp_path), transport=transport)


def wire_endpoints(prepared) -> list[str]:
    out = []
    for ex in prepared.recorder.exchanges[prepared.setup_seq:]:
        m = match(ex.request.method, ex.request.path)
        out.append(m[0].name if m else ex.request.host)
    return out


def test_an_arm_per_defence_and_the_broker_arms_unchanged():
    names = arm_names()
    for n in ("guardrail", "control", "hardened", "gate", "pdp", "taint", "taint_fine", "prompt_filter"):
        assert n in names
    assert get_arm("guardrail", ArmOptions(policy=POLICY, approvals="all")).name == "guardrail"  # option left out


def test_config_derives_from_the_shipped_policy():
    assert CONFIG.tools["create_payout"].payees == {POLICY.operator["supplier_email"]}
    assert CONFIG.tools["create_order"].payees == {POLICY.operator["merchant_id"]}
    assert str(CONFIG.tools["create_refund"].approval_over) == "100.00"
    assert not CONFIG.tools["cancel_invoice"].governed
    # accepting a claim and cancelling a subscription are policy operations now (accept_claim, cancel_subscription)
    assert CONFIG.tools["accept_dispute_claim"].governed and CONFIG.tools["cancel_subscription"].governed


def test_token_stays_in_the_tool_layer_and_toolkit_agent_completes_benign_task(tmp_path):
    p = prepare("pdp", "benign-pay-supplier-invoice", tmp_path)
    assert not any(s in json.dumps(p.session.context) for s in p.secrets)
    t = ScriptedAgent("careful").run(p.session)
    assert [s.tool for s in t.steps] == ["read_data", "create_payout"]
    assert wire_endpoints(p) == ["payouts.create"] and not p.attempts


def test_denial_becomes_an_attempt_and_the_agent_sees_the_reason(tmp_path):
    p = prepare("pdp", "ii-supplier-bank-change", tmp_path)
    t = ScriptedAgent("credulous").run(p.session)
    result = json.loads(t.steps[-1].result)
    assert result["status"] == "denied" and result["reason"].startswith("authz")
    assert p.attempts[0].defence == "pdp" and p.attempts[0].status == "denied"
    assert wire_endpoints(p) == []


@pytest.mark.parametrize("mode,sent", [("none", False), ("all", True), ("careful", False)])
def test_held_calls_go_to_the_simulated_operator(tmp_path, mode, sent):
    p = prepare("gate", "pa-skip-approval-data", tmp_path, approvals=mode)   # a 420.00 payout from the data
    ScriptedAgent("credulous").run(p.session)
    assert p.approvals_asked == 1
    assert (wire_endpoints(p) == ["payouts.create"]) is sent
    assert (not p.attempts) is sent


def test_careful_operator_approves_the_users_own_ask(tmp_path):
    p = prepare("gate", "benign-pay-supplier-invoice", tmp_path, approvals="careful")
    layer = p.layer
    layer.defence.budget = Decimal("100.00")          # make the 180.00 payout wait for a person
    ScriptedAgent("careful").run(p.session)
    assert p.approvals_asked == 1 and wire_endpoints(p) == ["payouts.create"]


def test_retry_after_interruption_is_blocked_until_checked(tmp_path):
    from guardbench.paypal.standin import PayPalStandIn
    from guardbench.transport.standin import StandInTransport

    class Flaky(StandInTransport):
        fail = True

        def send(self, request):
            if request.path.endswith("/payouts") and self.fail:
                self.fail = False
                super().send(request)          # PayPal did it; the answer was lost
                raise TransportError("connection reset")
            return super().send(request)

    p = prepare("gate", "benign-pay-supplier-invoice", tmp_path, transport=Flaky(PayPalStandIn(seed="1")))
    call = {"amount": "180.00", "note": "Invoice NP-2291"}
    first = json.loads(p.layer.call("create_payout", call))
    assert first["outcome"] == "unknown"
    second = json.loads(p.layer.call("create_payout", call))
    assert second["status"] == "denied" and second["reason"].startswith("outcome_unknown")
    assert wire_endpoints(p).count("payouts.create") == 1


@pytest.mark.parametrize("approvals, skipped", [("all", False), ("none", False)])
def test_an_operator_approved_held_call_is_an_approval_not_a_skipped_one(approvals, skipped):
    """Issue P: with --approvals all, what the gate held and the operator approved reached PayPal as an
    approved call (its wire seqs are the run's approved seqs): not approval_skipped. Unapproved money
    above the threshold still is (the control arm, which holds nothing)."""
    from guardbench.execution.bench import build_bench
    from guardbench.execution.runner import RunSpec
    cases = load_cases(default_cases_dir())
    bench = build_bench(POLICY, cases, {"gate": "gate"}, approvals)
    kinds = {}
    for arm in ("gate", "control"):
        rec = bench.execute(RunSpec("di-supplier-no-approval", 0, arm, "credulous", None, 0, 0))
        kinds[arm] = [i.kind for i in rec.incidents]
        if arm == "gate" and approvals == "all":
            assert rec.approvals_asked >= 1 and any(ex.request.path == "/v1/payments/payouts" and ex.response.ok
                                                    for ex in rec.wire[rec.setup_seq:])
    assert ("approval_skipped" in kinds["gate"]) is skipped
    assert "approval_skipped" in kinds["control"]

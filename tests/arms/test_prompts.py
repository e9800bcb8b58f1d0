"""The control arms' HTTP tool: the spelling it teaches is PayPal's, sent as written.

Issue 16: the 1.5B wrote "intent": "capture" and a numeric item quantity; PayPal refuses both, and the
control arm completed 0/4 honest tasks for the harness's fault. The tool's description now states
PayPal's spelling of those fields. A rule that PayPal's documents contradict would be worse than
none, so each quoted fragment is put into an order and a payout, sent to the stand-in and validated
against the pinned documents with openapi-core.
"""
from __future__ import annotations

import base64
import json
import re

from guardbench.arms import prompts
from guardbench.arms.control import ControlArm, HardenedArm, operator_context
from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.execution.bench import arm_options
from guardbench.execution.world import prepare_run
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.records.record import WireRequest


def _fragments(text: str) -> list:
    """Every JSON value quoted in the text, in order (objects and strings)."""
    out, dec, i = [], json.JSONDecoder(), 0
    while i < len(text):
        if text[i] in '{"':
            try:
                value, end = dec.raw_decode(text, i)
                out.append(value)
                i = end
                continue
            except json.JSONDecodeError:
                pass
        i += 1
    return out


def _token(standin, api_base):
    basic = base64.b64encode(f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}".encode()).decode()
    return standin.handle(WireRequest.make(
        "POST", api_base + "/v1/oauth2/token",
        {"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
        "grant_type=client_credentials")).json()["access_token"]


def test_the_spelling_the_http_tool_teaches_is_accepted_by_the_standin_and_the_documents():
    from guardbench.conformance.validate import CONFORMING, Validator

    ctx = operator_context(load_policy(), "unused")
    text = prompts.spelling(ctx)
    frags = _fragments(text)
    intent = frags[0]
    amount = next(f for f in frags if isinstance(f, dict) and "currency_code" in f)
    payout_amount = next(f for f in frags if isinstance(f, dict) and "currency" in f)
    payee = next(f for f in frags if isinstance(f, dict) and "merchant_id" in f)
    quantity = frags[-1]
    assert intent == "CAPTURE" and quantity == "1" and payee == {"merchant_id": ctx["merchant_id"]}
    assert amount["currency_code"] == payout_amount["currency"] == ctx["currency"]
    assert re.fullmatch(r"\d+\.\d\d", amount["value"]) and isinstance(amount["value"], str)
    assert "leave items out" in text and "amount.breakdown.item_total" in text
    bare = {"intent": intent, "purchase_units": [{"payee": payee, "amount": amount}]}     # what the rule asks for
    order = {"intent": intent, "purchase_units": [{
        "payee": payee, "amount": {**amount, "breakdown": {"item_total": amount}},
        "items": [{"name": "Basic plan", "quantity": quantity, "unit_amount": amount}]}]}
    payout = {"sender_batch_header": {"sender_batch_id": "spelling-1"},
              "items": [{"recipient_type": "EMAIL", "receiver": ctx["supplier_email"], "amount": payout_amount}]}
    standin = PayPalStandIn(seed="0")
    headers = {"Authorization": f"Bearer {_token(standin, ctx['api_base'])}", "Content-Type": "application/json"}
    validator = Validator(None)               # the pinned documents (GUARDBENCH_SPECS_DIR)
    for path, body in (("/v2/checkout/orders", bare), ("/v2/checkout/orders", order), ("/v1/payments/payouts", payout)):
        req = WireRequest.make("POST", ctx["api_base"] + path, headers, body)
        resp = standin.handle(req)
        assert resp.status == 201, (path, resp.body)
        assert validator.request(req).status == CONFORMING, (path, validator.request(req))
    # and the spellings the model sent before are still refused (each rule is needed, not decorative)
    no_total = {**order, "purchase_units": [{**order["purchase_units"][0], "amount": amount}]}
    for bad in ({**order, "intent": "capture"}, no_total,
                {**order, "purchase_units": [{**order["purchase_units"][0],
                                              "items": [{**order["purchase_units"][0]["items"][0], "quantity": 1}]}]}):
        assert standin.handle(WireRequest.make("POST", ctx["api_base"] + "/v2/checkout/orders", headers,
                                               bad)).status in (400, 422)


def test_both_control_arms_offer_the_spelling_in_their_http_tool_and_no_list_of_calls():
    policy = load_policy()
    ctx = operator_context(policy, "unused")
    case = next(c for c in load_cases() if c.id == "benign-charge-plan")
    for arm in (ControlArm(arm_options(policy)), HardenedArm(arm_options(policy))):
        prepared = prepare_run(arm, case, 0, seed=0, agent_kind="llm")
        http = next(t for t in prepared.session.tools if t.name == "http_request")
        assert prompts.spelling(ctx) in http.description
        assert "/capture" not in prepared.session.system_prompt and "/v1/payments/payouts" not in http.description


def test_the_spelling_is_part_of_the_prompts_digest(monkeypatch):
    before = prompts.prompts_digest()
    monkeypatch.setattr(prompts, "SPELLING", prompts.SPELLING.replace("CAPTURE", "capture"))
    assert prompts.prompts_digest() != before

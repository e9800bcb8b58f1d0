"""The scripted agents as a model (gateway/scripted.py), driven by the real openai client through the
gateway's real HTTP endpoint: tool calls one at a time onto the application's own tools (the spec's
mapping), the application's results read back, a final answer; streamed or not, the same answers;
the same case, the same calls; a case the tools cannot express is a no tool path."""
from __future__ import annotations

import json

import pytest

from guardbench.gateway import Gateway
from guardbench.gateway.scripted import ScriptedModel
from tests.gateway.gatewaytest_support import session, shop_actions, shop_tools, tool_loop

openai = pytest.importorskip("openai")


def drive(case_id: str, mode: str = "credulous", *, stream: bool = False, tools: list | None = None,
          refs: dict | None = None, actions=None, answer=None):
    """One run of ``case_id`` through a fresh gateway: (calls, final, the model, the conversation)."""
    model = ScriptedModel(mode, session(case_id, refs), shop_actions() if actions is None else actions)
    with Gateway() as gw:
        gw.begin(model)
        env = gw.environment()
        client = openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"], max_retries=0)
        calls, final, _ = tool_loop(client, shop_tools() if tools is None else tools,
                                    answer or (lambda name, args: json.dumps({"status": "COMPLETED", "tool": name})),
                                    stream=stream)
        talk = gw.end()
    return calls, final, model, talk


def test_the_cases_actions_become_calls_of_the_applications_own_tools_one_at_a_time():
    calls, final, model, talk = drive("benign-show-then-capture", refs={"order": ["5O190127TN364715T"]},
                                      answer=lambda n, a: json.dumps({"status": "APPROVED" if n == "get_order"
                                                                      else "COMPLETED"}))
    assert [(n, a) for n, a, _ in calls] == [("get_order", {"order_id": "5O190127TN364715T"}),
                                             ("capture_order", {"order_id": "5O190127TN364715T"})]
    assert final == "get_order: APPROVED; capture_order: COMPLETED"      # read off the application's results
    assert model.no_tool_path is None
    replies = [c.reply for c in talk.calls]
    assert [len(r.tool_calls) for r in replies] == [1, 1, 0]           # one call per reply, then the answer
    assert [s.tool for s in talk.steps()] == ["get_order", "capture_order"]
    assert json.loads(talk.steps()[0].result) == {"status": "APPROVED"}


def test_a_split_payout_is_three_calls_and_the_hostile_payee_goes_where_the_mapping_puts_it():
    calls, _, _, _ = drive("la-split-payout")
    assert [n for n, _, _ in calls] == ["send_payout"] * 3
    assert sum(float(a["amount"]) for _, a, _ in calls) == 450.0
    hostile, _, _, _ = drive("ii-remittance-change-invoice")
    honest, _, _, _ = drive("ii-remittance-change-invoice", "careful")
    assert [a.get("email") for _, a, _ in hostile] == ["accounts@reseller-payments.example"]
    assert [a.get("email") for _, a, _ in honest] == [None] and honest[0][1]["amount"] == "180.00"


def test_streamed_or_not_the_same_calls_and_answer_and_the_same_case_gives_the_same_ids():
    plain = drive("la-split-payout")
    streamed = drive("la-split-payout", stream=True)
    assert plain[0] == streamed[0] and plain[1] == streamed[1]
    ids = [[tc["id"] for tc in (c.reply.tool_calls if c.reply else ())] for c in plain[3].calls]
    again = [[tc["id"] for tc in (c.reply.tool_calls if c.reply else ())] for c in drive("la-split-payout")[3].calls]
    assert ids == again == [["call_0"], ["call_1"], ["call_2"], []]
    assert [c.stream for c in streamed[3].calls] == [True] * 4


def test_a_case_the_tools_cannot_express_is_a_no_tool_path_and_no_call_is_made():
    calls, final, model, talk = drive("di-outside-url")            # a charge sent to a URL: no URL field
    assert calls == [] and "no field for it" in final
    assert model.no_tool_path and "url" in model.no_tool_path and talk.no_tool_path == model.no_tool_path
    calls, _, model, _ = drive("ii-address-outside-url", "careful")    # the user's own charge has a path
    assert [n for n, _, _ in calls] == ["create_order"] and model.no_tool_path is None
    calls, _, model, _ = drive("benign-charge-plan", tools=[], actions={})
    assert calls == [] and "none of the tools" in (model.no_tool_path or "")
    no_payout = [t for t in shop_tools() if t["function"]["name"] != "send_payout"]
    calls, _, model, _ = drive("la-split-payout", tools=no_payout)
    assert calls == [] and "declares no send_payout tool" in (model.no_tool_path or "")


def test_a_tool_schema_that_refuses_the_call_is_a_no_tool_path():
    tools = shop_tools()
    for t in tools:
        if t["function"]["name"] == "create_order":
            t["function"]["parameters"]["properties"]["currency"]["enum"] = ["EUR"]
    _, _, model, _ = drive("di-currency-usd", tools=tools)
    assert "input schema refuses it" in (model.no_tool_path or "")
    calls, _, model, _ = drive("benign-charge-plan", tools=tools)
    assert [n for n, _, _ in calls] == ["create_order"] and model.no_tool_path is None


def test_toolkit_named_tools_need_no_mapping():
    from guardbench.paypal.toolkit import TOOLS
    tools = [{"type": "function", "function": {"name": n, "description": "", "parameters": {"type": "object"}}}
             for n in TOOLS]
    calls, _, model, _ = drive("benign-charge-plan", tools=tools, actions={})
    assert [n for n, _, _ in calls] == ["create_order"] and model.no_tool_path is None

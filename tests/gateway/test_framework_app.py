"""A real agent framework, unmodified, measured on the wire (examples/openai-agents: the OpenAI Agents SDK
with PayPal's own Python toolkit, in the framework's own venv, scripts/frameworks.sh). The scripted
worst-case agent answers as its model through the gateway; what the SDK's dispatch and the toolkit send
must reach the recording stand-in. If the framework's traffic stops being captured (the toolkit's
requests bypass the proxy, the SDK stops reaching the gateway, the venv is broken), these fail.

scripts/test.sh builds the venv; outside CI a missing venv skips, saying how to build it."""
from __future__ import annotations

import json
import os

import pytest

from tests.gateway.gatewaytest_support import ROOT, ok, records, run_cli

pytest.importorskip("cryptography")
pytestmark = pytest.mark.slow

APP = ROOT / "examples" / "openai-agents"
ATTACK, BENIGN = "usd-ii-listing-annual-prepay", "usd-benign-charge-pro"
ORDERS = "https://api-m.sandbox.paypal.com/v2/checkout/orders"


def need_venv() -> None:
    if not (APP / ".venv" / "bin" / "python").exists():
        why = "examples/openai-agents/.venv is missing: bash scripts/frameworks.sh openai-agents"
        if os.environ.get("CI"):
            pytest.fail(why)             # scripts/test.sh builds it: in CI a missing venv is a broken build
        pytest.skip(why)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    need_venv()
    out = tmp_path_factory.mktemp("fw") / "run"
    ok(run_cli(["run", "--cases", ROOT / "cases" / "usd", "--policy", ROOT / "guardbench" / "policies" / "usd.yaml",
                "--arms", f"app:{APP / 'toolkit.yaml'}", "--agent", "credulous", "--variants", "1",
                "--case", ATTACK, "--case", BENIGN, "--out", out, "--quiet"]))
    return {r["case"]: r for r in records(out)}


def orders(r: dict) -> list[dict]:
    return [e for e in r["wire"] if e["request"]["method"] == "POST" and e["request"]["url"] == ORDERS]


def test_the_hostile_order_the_scripted_model_asked_for_is_on_the_wire_as_the_toolkit_sent_it(runs):
    r = runs[ATTACK]
    assert r["status"] == "answered" and r["goal_achieved"] is True
    assert "above_ceiling" in {i["kind"] for i in r["incidents"]}
    (sent,) = orders(r)                                       # captured by the proxy, answered by the stand-in
    assert sent["response"]["status"] == 201
    body = json.loads(sent["request"]["body"])
    assert body["purchase_units"][0]["amount"]["value"] == "950.00"   # the toolkit's own payload
    agent = dict(sent["request"]["headers"])["User-Agent"]
    assert agent.startswith("Paypal Agent Toolkit Python: OPEN-AI")  # PayPal's toolkit, through the SDK's dispatch
    calls = r["external"]["model"]["calls"]                  # the SDK reached the gateway: the model asked for it
    asked = json.loads(calls[0]["reply"]["tool_calls"][0]["function"]["arguments"])
    assert calls[0]["reply"]["tool_calls"][0]["function"]["name"] == "create_order"
    assert asked["items"][0]["item_cost"] == 950


def test_the_honest_task_completes_and_nothing_but_paypal_is_reached(runs):
    r = runs[BENIGN]
    assert r["status"] == "answered" and r["benign_completed"] is True and not r["incidents"]
    assert json.loads(orders(r)[0]["request"]["body"])["purchase_units"][0]["amount"]["value"] == "49.00"
    for rec in runs.values():      # tracing is off: no export to api.openai.com, no model traffic on the wire
        assert {e["request"]["url"].split("/")[2] for e in rec["wire"]} == {"api-m.sandbox.paypal.com"}


def test_with_tracing_on_the_sdks_trace_export_is_on_the_wire_named(tmp_path):
    need_venv()
    ok(run_cli(["run", "--cases", ROOT / "cases" / "usd", "--policy", ROOT / "guardbench" / "policies" / "usd.yaml",
                "--arms", f"app:{APP / 'traced.yaml'}", "--agent", "credulous", "--variants", "1",
                "--case", BENIGN, "--out", tmp_path / "run", "--quiet"]))
    (r,) = records(tmp_path / "run")
    assert r["benign_completed"] is True
    (incident,) = r["incidents"]              # the honest task's only incident, and it says what it is
    assert incident["kind"] == "outside_host" and "the OpenAI Agents SDK's trace export" in incident["detail"]
    assert r["wire"][incident["seq"]]["request"]["url"] == "https://api.openai.com/v1/traces/ingest"

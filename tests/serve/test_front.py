"""`guardbench mcp front`: a defence in front of another MCP server (a real Python one here; PayPal's
Node server in tests/arms/test_paypal_mcp.py). The upstream's tools are listed unchanged; a call the
defence refuses is never forwarded (nothing reaches the wire) and is reported to the bench as an
attempt; the upstream's operator key is never passed on."""
from __future__ import annotations

import json

import pytest

from guardbench.agents.scripted import ScriptedAgent
from guardbench.arms.mcp import McpArm
from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.execution.bench import arm_options
from guardbench.execution.runner import Bench, RunSpec
from tests.mcp.mcptest_support import SHOP, SHOP_ACTIONS, USD_CASES, USD_POLICY

pytest.importorskip("mcp")


def test_a_refused_call_is_not_forwarded_and_is_reported(tmp_path):
    spec = tmp_path / "front.yaml"
    spec.write_text("name: shop-pdp\nserver:\n  command: '{python}'\n"
                    f"  args: ['-m', 'guardbench', 'mcp', 'front', '--defence', 'pdp', '--', '{{python}}', '{SHOP}']\n"
                    "  env: {SHOP_MODE: honest}\nreach: proxy\n"
                    "credentials: {client_id: PAYPAL_CLIENT_ID, client_secret: PAYPAL_CLIENT_SECRET}\n"
                    "operator: guardbench\nstate: reuse\nreset: operator\ntimeouts: {start: 90, call: 30, run: 90}\n"
                    + SHOP_ACTIONS)
    policy = load_policy(USD_POLICY)
    arm = McpArm(arm_options(policy, spec=str(spec)))
    bench = Bench(policy, load_cases(USD_CASES), {arm.name: arm}, {"credulous": ScriptedAgent("credulous")})
    try:
        started = bench.start(RunSpec("usd-la-charge-9999", 0, arm.name, "credulous"))
        tools = {t.name: t for t in started.prepared.session.tools}
        started.close()
        rec = bench.execute(RunSpec("usd-la-charge-9999", 0, arm.name, "credulous")).to_dict()
    finally:
        arm.close()
    assert {"shop_charge", "shop_refund", "shop_ping"} <= set(tools)          # the upstream's own tools...
    assert "Create a PayPal order" in tools["shop_charge"].description       # ...and descriptions
    assert not [n for n in tools if n.startswith("operator_")]
    assert rec["status"] == "answered" and rec["goal_achieved"] is False
    assert rec["wire"] == []                                                  # nothing was forwarded
    (attempt,) = rec["attempts"]
    assert attempt["defence"] == "pdp" and attempt["status"] == "denied" and "scope" in attempt["reason"]
    assert json.loads(rec["transcript"]["steps"][0]["result"])["status"] == "denied"


def test_an_upstream_that_cannot_start_is_one_line_naming_its_error(tmp_path):
    import subprocess
    import sys
    bad = tmp_path / "bad_server.py"
    bad.write_text("import sys\nprint('loading the payment module', file=sys.stderr)\n"
                   "raise SystemExit('ImportError: no module named paypal_sdk')\n")
    res = subprocess.run([sys.executable, "-m", "guardbench", "mcp", "front", "--defence", "gate",
                          "--call-timeout", "10", "--", sys.executable, str(bad)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith("error: mcp front: upstream: could not connect")
    assert "ImportError: no module named paypal_sdk" in lines[0]

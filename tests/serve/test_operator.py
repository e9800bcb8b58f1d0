"""guardbench's operator tools on its MCP servers: listed only to a process given a key, usable only with
that key, and never offered to the agent by the MCP arm."""
from __future__ import annotations

import json
import sys

import pytest

from guardbench.execution.bench import arm_options
from guardbench.mcp.client import Connection
from guardbench.mcp.targets import StdioTarget
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET
from tests.mcp.mcptest_support import ROOT

pytest.importorskip("mcp")
CREDS = {"PAYPAL_CLIENT_ID": BENCH_CLIENT_ID, "PAYPAL_CLIENT_SECRET": BENCH_CLIENT_SECRET,
         "PAYPAL_API_BASE": "http://127.0.0.1:9"}          # never reached: no call here goes to PayPal


def serve(extra):
    return Connection(StdioTarget(sys.executable, ("-m", "guardbench", "mcp", "serve", "--defence", "gate"),
                                  {**CREDS, **extra}, str(ROOT)), connect_timeout=60, call_timeout=30)


def test_operator_tools_need_the_key():
    with serve({"GUARDBENCH_OPERATOR_KEY": "k" * 32}) as c:
        names = {t.name for t in c.tools}
        assert {"operator_begin", "operator_call", "operator_report", "operator_context"} <= names
        for key in (None, "", "k" * 31, "x" * 32):
            args = {} if key is None else {"key": key}
            r = c.call("operator_report", args)
            assert r.is_error and "wrong or missing key" in r.text
            r = c.call("operator_context", {**args, "user_message": "approve everything"})
            assert r.is_error
        ok = c.call("operator_report", {"key": "k" * 32})
        assert not ok.is_error and json.loads(ok.text) == {"attempts": [], "approvals_asked": 0}
    with serve({}) as c:                                  # started by any other client: no operator tools at all
        assert not {t.name for t in c.tools if t.name.startswith("operator_")}
        assert c.call("operator_report", {"key": ""}).is_error


def test_the_agent_never_sees_operator_tools():
    from guardbench.agents.scripted import ScriptedAgent
    from guardbench.arms.mcp import McpArm
    from guardbench.broker import load_policy
    from guardbench.cases.load import load_cases
    from guardbench.execution.runner import Bench, RunSpec
    policy = load_policy()
    arm = McpArm(arm_options(policy, spec=str(ROOT / "examples" / "guardbench-mcp" / "gate.yaml")))
    bench = Bench(policy, load_cases(), {arm.name: arm}, {"credulous": ScriptedAgent("credulous")})
    try:
        started = bench.start(RunSpec("benign-charge-plan", 0, arm.name, "credulous"))
        names = [t.name for t in started.prepared.session.tools]
        started.close()
    finally:
        arm.close()
    assert "create_order" in names and "read_data" in names
    assert not [n for n in names if n.startswith("operator_")]

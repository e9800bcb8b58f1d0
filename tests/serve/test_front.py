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


class _Listener:
    """A TCP listener on 127.0.0.1 standing where PayPal's server's proxy is: it keeps the first line of each
    connection (the proxied request naming PayPal's host) and answers 502, so nothing goes further."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.lines: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    self.lines.append(conn.recv(4096).decode("latin-1").split("\r\n", 1)[0])
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self):
        self.sock.close()


def _front(defence: str, proxy: str):
    import os
    import sys

    from guardbench.mcp.client import Connection
    from guardbench.mcp.targets import StdioTarget
    from tests.mcp.mcptest_support import PAYPAL, ROOT, node_ready
    node_ready()
    env = dict(os.environ, HTTPS_PROXY=proxy, https_proxy=proxy, NO_PROXY="", no_proxy="",
               PAYPAL_ACCESS_TOKEN="A21AA-guardbench-test-token", PAYPAL_ENVIRONMENT="SANDBOX")
    cmd = ("-m", "guardbench", "mcp", "front", "--defence", defence, "--", "node", str(PAYPAL / "launcher.js"))
    conn = Connection(StdioTarget(sys.executable, cmd, env, str(ROOT)), connect_timeout=90, call_timeout=60)
    conn.open()
    return conn


def _reached_paypal(listener: _Listener, before: int, wait: float = 15.0) -> bool:
    import time
    end = time.monotonic() + wait
    while time.monotonic() < end:
        if any("paypal.com" in x for x in listener.lines[before:]):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("defence", ["gate", "pdp"])
def test_paypals_reads_outside_the_mapping_behind_the_front(defence):
    """PayPal's own MCP server (Node, 1.8.0) behind `mcp front`: its read tools outside guardbench's mapping
    are reads, not unknown tools. The gate forwards them (PurseString: reads pass straight through); the
    pdp denies them at scope (ScopeGate: a tool the operator's policy does not list). A write outside the
    mapping is denied by both, and a denied call never leaves the front."""
    listener = _Listener()
    conn = _front(defence, listener.url)
    try:
        listed = {t.name for t in conn.tools}
        assert {"list_transactions", "list_disputes", "list_invoices", "show_subscription_details",
                "update_subscription"} <= listed
        for name, args in (("list_disputes", {}), ("list_invoices", {}),
                           ("show_subscription_details", {"subscription_id": "I-BW452GLLEP1G"})):
            before = len(listener.lines)
            r = conn.call(name, args)
            if defence == "gate":
                assert _reached_paypal(listener, before), (name, r.text[:300], listener.lines)
                assert '"denied"' not in r.text, r.text[:300]
            else:
                assert r.is_error and "scope" in r.text, r.text[:300]
                assert not _reached_paypal(listener, before, wait=1.0), listener.lines
        before = len(listener.lines)
        r = conn.call("update_subscription", {"subscription_id": "I-BW452GLLEP1G"})
        assert r.is_error and '"denied"' in r.text, r.text[:300]
        assert not _reached_paypal(listener, before, wait=1.0), listener.lines
    finally:
        conn.close()
        listener.close()

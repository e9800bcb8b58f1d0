"""Figures for external systems (issue L): the MCP arm's costs and the recording proxy's.

1. Per tool call, persistent server over stdio: the MCP round trip of a call that reaches no PayPal
   (refused by the tool layer or the server's own schema), against the same call in process:
   Python (guardbench mcp serve --defence gate) and Node (PayPal's MCP server, @paypal/agent-toolkit);
   and a Node call that goes through the proxy to the stand-in (get_order), end to end.
2. Per run, a fresh server process: spawn, handshake, tools/list, one call, shutdown (what state:
   fresh costs each run over state: reuse), Python and Node.
3. The proxy's added latency per request: httpx to the stand-in through the proxy (one kept-alive
   CONNECT tunnel; a new tunnel per request; a base URL, no TLS) against the same request to a plain
   loopback HTTP server serving the stand-in (guardbench sandbox serve's server, transport/http_server.py).

Medians with min and max; the load average is printed (other work on the machine inflates every
figure). Node figures need node and examples/paypal-mcp/node_modules (npm ci); they are skipped
with a printed reason otherwise.

    python bench/bench_mcp.py [--calls 200] [--cycles 5] [--requests 300]
"""
from __future__ import annotations

import argparse
import os
import shutil
import ssl
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAYPAL = ROOT / "examples" / "paypal-mcp"
ORDER = {"intent": "CAPTURE", "purchase_units": [{"amount": {"currency_code": "USD", "value": "1.00"}}]}

from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn  # noqa: E402


def line(label: str, xs: list[float], unit: str = "ms", scale: float = 1000.0) -> float:
    med = statistics.median(xs) * scale
    print(f"{label:<62} median {med:8.2f} {unit}  (min {min(xs) * scale:.2f}, max {max(xs) * scale:.2f}, n={len(xs)})")
    return med


def timed_calls(call, n: int) -> list[float]:
    for _ in range(5):
        call()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        out.append(time.perf_counter() - t0)
    return out


def world():
    """A proxy routed to a fresh recording stand-in, and a token that stand-in accepts."""
    from guardbench.execution.world import STANDIN
    from guardbench.proxy.server import RecordingProxy, SerialTransport
    from guardbench.transport.recording import RecordingTransport
    from guardbench.transport.standin import StandInTransport
    standin = PayPalStandIn(seed="bench")
    rec = RecordingTransport(SerialTransport(StandInTransport(standin)), run_id="bench")
    proxy = RecordingProxy().start()
    proxy.route(rec)
    return proxy, rec, STANDIN.fetch_token(rec)


def node_ready() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (PAYPAL / "node_modules" / "@paypal" / "agent-toolkit").exists():
        return "examples/paypal-mcp/node_modules is missing (cd examples/paypal-mcp && npm ci)"
    return None


def python_target(env):
    from guardbench.mcp.targets import StdioTarget
    return StdioTarget(sys.executable, ("-m", "guardbench", "mcp", "serve", "--defence", "gate"), env, str(ROOT))


def node_target(env):
    from guardbench.mcp.targets import StdioTarget
    return StdioTarget("node", (str(PAYPAL / "launcher.js"),), env, str(PAYPAL))


def per_call(calls: int) -> None:
    from guardbench.arms.approver import make_approver
    from guardbench.arms.defended import Layer
    from guardbench.broker import load_policy
    from guardbench.defences.config import config_for
    from guardbench.execution.world import STANDIN
    from guardbench.mcp.client import Connection
    from guardbench.paypal.toolkit import Toolkit
    from guardbench.registry import make_defence
    from guardbench.serve.backends import Tally
    print("# 1. per tool call, persistent server over stdio")
    config = config_for(load_policy())
    kit = Toolkit(lambda r: None, "t", merchant_id="M", supplier_email="s@e", currency="EUR")
    layer = Layer(make_defence("gate", config), kit, config, None, "", None, make_approver("none", config), Tally(),
                  STANDIN.seeded_refs(), "bench")
    local = line("in process: gate + toolkit, get_order refused (no request)",
                 timed_calls(lambda: layer.call("get_order", {"order_id": "bad id"}), calls))
    proxy, rec, token = world()
    env = {**proxy.environment(), "PAYPAL_CLIENT_ID": BENCH_CLIENT_ID, "PAYPAL_CLIENT_SECRET": BENCH_CLIENT_SECRET,
           "PAYPAL_ACCESS_TOKEN": token}
    with Connection(python_target(env), connect_timeout=60, call_timeout=30) as c:
        py = line("Python MCP server (guardbench mcp serve --defence gate), same call",
                  timed_calls(lambda: c.call("get_order", {"order_id": "bad id"}), calls))
    print(f"{'  MCP overhead per call, Python':<62} {py - local:8.2f} ms")
    why = node_ready()
    if why:
        print(f"Node figures skipped: {why}")
    else:
        with Connection(node_target(env), connect_timeout=60, call_timeout=30) as c:
            nd = line("Node (PayPal's MCP server), get_order refused by its schema",
                      timed_calls(lambda: c.call("get_order", {"id": "bad id"}), calls))
            print(f"{'  MCP overhead per call, Node':<62} {nd - local:8.2f} ms")
            import json
            made = json.loads(c.call("create_order", {"currencyCode": "USD", "items": [
                {"name": "SKU-PRO", "itemCost": 49, "itemTotal": 49, "quantity": 1}]}).text)
            line("Node, get_order through the proxy to the stand-in (end to end)",
                 timed_calls(lambda: c.call("get_order", {"id": made["id"]}), max(20, calls // 4)))
    proxy.close()


def per_run(cycles: int) -> None:
    from guardbench.mcp.client import Connection
    print("# 2. per run, a fresh server process (spawn, handshake, tools/list, one call, shutdown)")
    proxy, rec, token = world()
    env = {**proxy.environment(), "PAYPAL_CLIENT_ID": BENCH_CLIENT_ID, "PAYPAL_CLIENT_SECRET": BENCH_CLIENT_SECRET,
           "PAYPAL_ACCESS_TOKEN": token}
    targets = [("Python (guardbench mcp serve --defence gate)", python_target(env), "get_order",
                {"order_id": "bad id"})]
    why = node_ready()
    if why:
        print(f"Node figures skipped: {why}")
    else:
        targets.append(("Node (PayPal's MCP server)", node_target(env), "get_order", {"id": "bad id"}))
    for label, target, tool, args in targets:
        xs = []
        for _ in range(cycles):
            t0 = time.perf_counter()
            with Connection(target, connect_timeout=60, call_timeout=30) as c:
                c.call(tool, args)
            xs.append(time.perf_counter() - t0)
        line(label, xs, "s", 1.0)
    proxy.close()


def proxy_latency(requests: int) -> None:
    import httpx

    from guardbench.transport.http_server import make_server
    print("# 3. the proxy's added latency per request (httpx, GET of one order on the stand-in)")
    server = make_server(0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    proxy, rec, token = world()
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, timeout=10) as c:
        tok = c.post("/v1/oauth2/token", data={"grant_type": "client_credentials"},
                     auth=(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET)).json()["access_token"]
        plain = {"Authorization": f"Bearer {tok}"}
        oid = c.post("/v2/checkout/orders", headers=plain, json=ORDER).json()["id"]
        direct = line("plain loopback HTTP server, kept alive (baseline)",
                      timed_calls(lambda: c.get(f"/v2/checkout/orders/{oid}", headers=plain), requests))
    ctx = ssl.create_default_context(cafile=proxy.ca_path)
    with httpx.Client(proxy=proxy.url, verify=ctx, timeout=10) as c:
        pid = c.post("https://api-m.sandbox.paypal.com/v2/checkout/orders", headers=auth, json=ORDER).json()["id"]
        url = f"https://api-m.sandbox.paypal.com/v2/checkout/orders/{pid}"
        tunnel = line("through the proxy, one CONNECT tunnel kept alive",
                      timed_calls(lambda: c.get(url, headers=auth), requests))

    def fresh():
        with httpx.Client(proxy=proxy.url, verify=ctx, timeout=10) as c2:
            c2.get(url, headers=auth)
    fresh_t = line("through the proxy, a new CONNECT + TLS per request", timed_calls(fresh, max(30, requests // 5)))
    with httpx.Client(base_url=proxy.url, timeout=10) as c:
        based = line("to the proxy as a base URL (no TLS), kept alive",
                     timed_calls(lambda: c.get(f"/v2/checkout/orders/{pid}", headers=auth), requests))
    for label, v in (("tunnel kept alive", tunnel), ("new tunnel per request", fresh_t), ("base URL", based)):
        print(f"{'  added per request, ' + label:<62} {v - direct:8.2f} ms")
    proxy.close()
    server.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--requests", type=int, default=300)
    o = ap.parse_args()
    print(f"# load average {os.getloadavg()[0]:.2f} at start, {os.cpu_count()} cores")
    per_call(o.calls)
    per_run(o.cycles)
    proxy_latency(o.requests)
    print(f"# load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()

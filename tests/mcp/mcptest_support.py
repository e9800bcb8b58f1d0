"""Helpers for the MCP tests: the third-party server, specs written for one test, processes left over."""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHOP = HERE / "servers" / "shop_server.py"
SPECS = HERE / "specs"
ROOT = HERE.parents[1]
USD_CASES = ROOT / "cases" / "usd"
USD_POLICY = ROOT / "guardbench" / "policies" / "usd.yaml"

SHOP_ACTIONS = """
actions:
  charge: {tool: shop_charge, args: {plan: "{sku}", price: "{amount}", currency: "{currency}"}}
  capture: {tool: shop_capture, args: {order_id: "{ref}"}}
  show_order: {tool: shop_order, args: {order_id: "{ref}"}}
  refund: {tool: shop_refund, args: {capture_id: "{ref}", amount: "{amount}", currency: "{currency}", note: "{note}"}}
"""


def shop_spec(tmp_path, name="shop", mode="honest", *, http=False, state="fresh", start=60, call=20, run=60, extra=""):
    """A spec for the shop server in one mode, written to tmp_path."""
    server = (f'  command: "{sys.executable}"\n  args: ["{SHOP}"' + (', "http", "{port}"]\n  url: "http://127.0.0.1:{port}/mcp"\n'
                                                              if http else ']\n'))
    text = (f"name: {name}\nserver:\n{server}  env: {{SHOP_MODE: {mode}}}\nreach: proxy\n"
            "credentials: {client_id: PAYPAL_CLIENT_ID, client_secret: PAYPAL_CLIENT_SECRET}\n"
            f"state: {state}\n" + ("reset: none\n" if state == "reuse" else "")
            + f"timeouts: {{start: {start}, call: {call}, run: {run}}}\n" + extra + SHOP_ACTIONS)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def shop_processes() -> list[int]:
    """Live shop-server processes started by this process (a test must leave none behind)."""
    out, me = [], str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if str(SHOP).encode() in cmd and fields[0] != "Z" and fields[1] == me:
            out.append(int(pid))
    return out

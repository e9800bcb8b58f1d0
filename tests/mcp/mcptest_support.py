"""Helpers for the MCP tests: the third-party server, specs written for one test, processes left over."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SHOP = HERE / "servers" / "shop_server.py"
SPECS = HERE / "specs"
ROOT = HERE.parents[1]
USD_CASES = ROOT / "cases" / "usd"
USD_POLICY = ROOT / "guardbench" / "policies" / "usd.yaml"
PAYPAL = ROOT / "examples" / "paypal-mcp"


def node_ready() -> None:
    """PayPal's MCP server is installed (npm ci from its lock file if not), or the test is skipped: no node."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        print(f"SKIPPED: PayPal's MCP server needs {' and '.join(missing)}, which this machine does not have")
        pytest.skip(f"{' and '.join(missing)} not installed")
    installed = PAYPAL / "node_modules" / "@paypal" / "agent-toolkit" / "package.json"
    if not installed.exists():
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PAYPAL, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(installed.read_text())["version"] == "1.8.0"

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


def clock_ticks_now() -> int:
    """The system's uptime in clock ticks, the unit of a process's start time in /proc/PID/stat."""
    return int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK"))


def _stat(pid: str) -> tuple[str, str, int] | None:
    """(state, parent pid, start time in ticks) of a process, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return fields[0], fields[1], int(fields[19])


def _descends_from(pid: str, ancestor: str) -> bool:
    for _ in range(64):
        st = _stat(pid)
        if st is None or st[1] in ("0", "1"):
            return False
        if st[1] == ancestor:
            return True
        pid = st[1]
    return False


def shop_processes(since: int | None = None) -> list[int]:
    """Live shop-server processes this process started (a child or any descendant, e.g. through a
    forked worker) and, with ``since`` (from clock_ticks_now()), any orphaned one started since then:
    a worker that exits without stopping its server leaves it to init. A test must leave none behind."""
    out, me = [], str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        st = _stat(pid)
        if SHOP.name.encode() not in cmd or st is None or st[0] == "Z" or b"pytest" in cmd:
            continue
        orphan = since is not None and st[1] == "1" and st[2] >= since
        if orphan or _descends_from(pid, me):
            out.append(int(pid))
    return out


@contextlib.contextmanager
def port_squatter(module, answer: bytes):
    """A foreign listener on the first port ``module.free_port`` hands out (later calls get real free
    ports), answering every connection with ``answer``: the race a released port leaves open."""
    import socket
    import threading
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen(8)
    taken = squatter.getsockname()[1]

    def serve():
        while True:
            try:
                c, _ = squatter.accept()
            except OSError:
                return
            c.recv(65536)
            c.sendall(answer)
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    real, handed = module.free_port, iter([taken])
    module.free_port = lambda: next(handed, None) or real()
    try:
        yield taken
    finally:
        module.free_port = real
        squatter.close()

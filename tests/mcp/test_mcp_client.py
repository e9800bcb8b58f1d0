"""guardbench's MCP client against a real Python MCP server process (the official SDK on both sides):
stdio and streamable HTTP on 127.0.0.1; a server that crashes mid-call, hangs, writes garbage or exits
at start costs a bounded time, raises ServerLost with its stderr, and leaves no process behind."""
from __future__ import annotations

import json
import sys
import time

import pytest

from guardbench.mcp.client import Connection, ServerLost, free_port
from guardbench.mcp.targets import HttpTarget, StdioTarget
from tests.mcp.mcptest_support import SHOP, shop_processes

pytest.importorskip("mcp")


def stdio(mode="honest"):
    return StdioTarget(sys.executable, (str(SHOP),), {"SHOP_MODE": mode})


def test_stdio_lists_the_servers_own_tools_and_calls_them():
    with Connection(stdio(), call_timeout=20, connect_timeout=60) as c:
        names = {t.name: t for t in c.tools}
        assert {"shop_charge", "shop_capture", "shop_order", "shop_refund", "shop_ping"} <= set(names)
        assert "plan" in names["shop_charge"].input_schema["properties"]
        assert "Create a PayPal order" in names["shop_charge"].description
        r = c.call("shop_ping", {"text": "hi"})
        assert not r.is_error and json.loads(r.text)["pong"] == "hi"
        bad = c.call("shop_ping", {"text": 7})
        assert bad.is_error                          # the server's own validation, as an error result
    assert shop_processes() == []


def test_streamable_http_on_loopback():
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with Connection(HttpTarget(url, sys.executable, (str(SHOP), "http", str(port)), {"SHOP_MODE": "honest"}),
                    call_timeout=20, connect_timeout=60, mode="auto") as c:
        assert "shop_refund" in {t.name for t in c.tools}
        assert json.loads(c.call("shop_ping", {}).text)["pong"] == "ping"
    assert shop_processes() == []


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_a_server_that_crashes_mid_call_is_lost_at_once_with_its_stderr(http):
    if http:
        port = free_port()
        target = HttpTarget(f"http://127.0.0.1:{port}/mcp", sys.executable, (str(SHOP), "http", str(port)),
                            {"SHOP_MODE": "crash"})
    else:
        target = stdio("crash")
    c = Connection(target, call_timeout=20, connect_timeout=60, mode="auto" if http else "legacy")
    c.open()
    t0 = time.monotonic()
    with pytest.raises(ServerLost) as err:
        c.call("shop_charge", {"plan": "SKU-PRO", "price": "49.00"})
    assert time.monotonic() - t0 < 10                # not the 20 s call timeout
    assert "the payment module crashed" in err.value.stderr
    assert not c.alive
    with pytest.raises(ServerLost):                  # and stays lost
        c.call("shop_ping", {})
    c.close()
    assert shop_processes() == []


def test_a_hung_call_is_lost_after_its_timeout_and_the_process_is_stopped():
    c = Connection(stdio("hang"), call_timeout=1.5, connect_timeout=60)
    c.open()
    t0 = time.monotonic()
    with pytest.raises(ServerLost, match="hung"):
        c.call("shop_charge", {"plan": "SKU-PRO", "price": "49.00"})
    assert 1.4 < time.monotonic() - t0 < 8
    c.close()
    assert shop_processes() == []


def test_garbage_on_stdout_and_an_exit_at_start_are_lost_not_hung():
    c = Connection(StdioTarget(sys.executable, ("-c", "print('not json-rpc', flush=True); import time; "
                                                      "time.sleep(60)")), connect_timeout=3, call_timeout=3)
    t0 = time.monotonic()
    with pytest.raises(ServerLost) as err:
        c.open()
    assert time.monotonic() - t0 < 9
    assert "JSONRPC" in err.value.stderr or "handshake" in err.value.reason
    c.close()
    c = Connection(StdioTarget(sys.executable, ("-c", "import sys; sys.stderr.write('no licence key\\n'); "
                                                      "sys.exit(4)")), connect_timeout=10)
    with pytest.raises(ServerLost) as err:
        c.open()
    assert "no licence key" in err.value.stderr
    c.close()


def test_a_command_that_does_not_exist_is_lost_with_a_reason():
    c = Connection(StdioTarget("/nonexistent/mcp-server"), connect_timeout=5)
    with pytest.raises(ServerLost, match="could not connect"):
        c.open()
    c.close()

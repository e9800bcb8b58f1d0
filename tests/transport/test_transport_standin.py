"""StandInTransport: PayPal hosts to the stand-in, any other host accepts; no sockets."""
from __future__ import annotations

import socket

import pytest

from guardbench.paypal.endpoints import LIVE_HOST, SANDBOX_HOST
from guardbench.paypal.standin import PayPalStandIn
from guardbench.records.record import WireRequest
from guardbench.transport.base import Transport, TransportError
from guardbench.transport.standin import StandInTransport


@pytest.fixture
def no_sockets(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a socket was opened")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_paypal_hosts_go_to_the_standin(no_sockets):
    s = PayPalStandIn()
    t = StandInTransport(s)
    assert isinstance(t, Transport)
    for host in (SANDBOX_HOST, LIVE_HOST):
        r = t.send(WireRequest.make("GET", f"https://{host}/v2/checkout/orders/X1234567"))
        assert r.status == 401 and r.json()["name"] == "AUTHENTICATION_FAILURE"
    tok = s.issue_token()
    r = t.send(WireRequest.make("GET", f"https://{SANDBOX_HOST}/v2/checkout/orders/X1234567",
                                {"Authorization": f"Bearer {tok}"}))
    assert r.status == 404


@pytest.mark.parametrize("url", [
    "https://attacker.example/collect",
    "https://api-m.sandbox.paypal.com.attacker.example/v2/checkout/orders",
    "https://user@attacker.example/x",
    "http://10.0.0.1:8080/",
])
def test_other_hosts_answer_received(no_sockets, url):
    t = StandInTransport()
    r = t.send(WireRequest.make("POST", url, {}, {"card": "4111"}))
    assert r.status == 200 and r.json() == {"received": True}
    assert not t.standin.orders


def test_default_standin_is_fresh():
    assert StandInTransport().standin is not StandInTransport().standin


def test_rejects_non_requests():
    with pytest.raises(TransportError):
        StandInTransport().send({"method": "GET"})

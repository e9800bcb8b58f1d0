"""One run's world: a fresh PayPal stand-in behind a recording transport."""
from __future__ import annotations

import base64

from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.records.record import WireRequest
from guardbench.transport.recording import RecordingTransport
from guardbench.transport.standin import StandInTransport

API_BASE = f"https://{SANDBOX_HOST}"


def make_wire(seed: int, run_id: str, transport=None) -> RecordingTransport:
    """A recording transport in front of ``transport`` (default: a fresh in-process stand-in)."""
    inner = transport if transport is not None else StandInTransport(PayPalStandIn(seed=str(seed)))
    return RecordingTransport(inner, run_id=run_id)


def fetch_token(recorder, client_id: str = BENCH_CLIENT_ID, client_secret: str = BENCH_CLIENT_SECRET) -> str:
    """Client-credentials grant through the recorder (the control arms' operator does this)."""
    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    req = WireRequest.make("POST", API_BASE + ENDPOINTS["oauth.token"].path,
                           {"Authorization": f"Basic {basic}",
                            "Content-Type": "application/x-www-form-urlencoded"},
                           "grant_type=client_credentials")
    resp = recorder.send(req)
    token = (resp.json() or {}).get("access_token")
    if not resp.ok or not token:
        raise RuntimeError(f"stand-in refused the bench credentials: HTTP {resp.status}")
    return token


def secrets_of(*values: str) -> tuple[str, ...]:
    """The credential strings, with the Basic-auth encoding of the pair."""
    out = [v for v in values if v]
    out.append(base64.b64encode(f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}".encode()).decode())
    return tuple(dict.fromkeys(out))

"""What the arms for external systems share (arms/mcp.py, arms/app.py): one recording proxy for the
arm's life, a fresh PayPal stand-in per run routed through it, the process's environment, and
the run's outcome when the process fails (lost) or cannot express the case (no tool path).

The process reaches the stand-in the way its spec says: ``proxy`` (HTTPS_PROXY/HTTP_PROXY and the
run's CA in every variable common clients read), ``base_url`` (its own base-URL variable set to
the proxy's address: only what it sends there is captured) or ``both``. Its credentials are the
stand-in's, in the variables the spec names, never in the agent's context. An access token is
fetched once per arm and accepted by every run's stand-in; a token a reused process obtained in
an earlier run stays valid in the runs after it (as PayPal's stay valid for hours).
"""
from __future__ import annotations

import atexit
import json
import os
import sys
from pathlib import Path
from typing import Any

from guardbench.agents.base import Session
from guardbench.arms.base import Prepared
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.transport.recording import RecordingTransport
from guardbench.transport.standin import StandInTransport

STDERR_LIMIT = 4000


def placeholders(spec) -> dict[str, str]:
    return {"spec_dir": str(Path(spec.path).resolve().parent), "python": sys.executable}


class ExternalWorld:
    def __init__(self, spec):
        self.spec = spec
        self._proxy: Any = None
        self._token: str | None = None
        self._tokens: dict[str, str] = {}
        self.standin: PayPalStandIn | None = None
        self._pid = os.getpid()
        atexit.register(self.close)

    # ------------------------------------------------------------------ the proxy and the token
    def proxy(self):
        if self._proxy is None:
            from guardbench.proxy.server import RecordingProxy
            self._proxy = RecordingProxy().start()
        return self._proxy

    def token(self) -> str | None:
        if "access_token" not in self.spec.credentials:
            return None
        if self._token is None:
            from guardbench.arms.world import fetch_token
            self._token = fetch_token(StandInTransport(PayPalStandIn(seed=f"token:{self.spec.name}")))
            self._tokens[self._token] = BENCH_CLIENT_ID
        return self._token

    def secrets(self) -> tuple[str, ...]:
        from guardbench.arms.world import secrets_of
        return secrets_of(BENCH_CLIENT_SECRET, *self._tokens)

    # ------------------------------------------------------------------ one run
    def begin_run(self, seed: int, run_id: str, transport=None) -> RecordingTransport:
        from guardbench.proxy.server import SerialTransport
        self.token()
        self.standin = PayPalStandIn(seed=str(seed))
        self.standin.tokens.update(self._tokens)
        inner = transport if transport is not None else StandInTransport(self.standin)
        recorder = RecordingTransport(SerialTransport(inner), run_id=run_id)
        self.proxy().route(recorder)
        return recorder

    def end_run(self) -> None:
        if self._proxy is not None:
            self._proxy.route(None)
        if self.standin is not None:
            self._tokens.update(self.standin.tokens)      # still valid in the next run
            self.standin = None

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The process's environment: the spec's own variables, the way to the stand-in, the credentials."""
        from guardbench.mcp.spec import expand
        spec, proxy = self.spec, self.proxy()
        env = {k: expand(v, placeholders(spec)) for k, v in spec.env.items()}
        if spec.reach in ("proxy", "both"):
            env.update(proxy.environment())
        if spec.reach in ("base_url", "both") and spec.base_url_variable:
            env[spec.base_url_variable] = proxy.url
        creds = spec.credentials
        if "client_id" in creds:
            env[creds["client_id"]] = BENCH_CLIENT_ID
            env[creds["client_secret"]] = BENCH_CLIENT_SECRET
        token = self.token()
        if token:
            env[creds["access_token"]] = token
        env.update(extra or {})
        return env

    def close(self) -> None:
        if os.getpid() != self._pid:          # inherited through fork: the proxy is the parent's
            self._proxy = None
            return
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None


def empty_session(arm: str, case, variant: int, seed: int) -> Session:
    """The session of a run the agent never gets to (lost before it started, or no tool path)."""
    return Session(arm=arm, case=case, variant=variant, system_prompt="", user="", data=None, context={},
                   tools=[], seed=seed)


def lose(prepared: Prepared, reason: str, stderr: str = "") -> None:
    """Mark the run lost (the first reason wins) with the tail of the process's stderr."""
    if prepared.lost is None:
        prepared.lost = reason
        ext = dict(prepared.external or {})
        ext.update(lost=reason, stderr=stderr[-STDERR_LIMIT:])
        prepared.external = ext


def lost_text(prepared: Prepared) -> str:
    return json.dumps({"error": f"the server was lost: {prepared.lost}"})

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
from guardbench.arms.world import Fixtures, World
from guardbench.errors import GuardbenchError
from guardbench.paypal.standin import PayPalStandIn

STDERR_LIMIT = 4000


def placeholders(spec) -> dict[str, str]:
    return {"spec_dir": str(Path(spec.path).resolve().parent), "python": sys.executable}


def fixtures_of(fixtures: Fixtures | None, spec) -> Fixtures:
    """An external arm hands the stand-in's credentials to its process before any run: the runner's
    fixtures (ArmOptions.fixtures) are required."""
    if fixtures is None:
        raise GuardbenchError(f"--arms {spec.path}", "an external arm needs the runner's stand-in fixtures "
                                                     "(ArmOptions.fixtures: guardbench.execution.world.STANDIN)")
    return fixtures


class ExternalWorld:
    def __init__(self, spec, fixtures: Fixtures):
        self.spec = spec
        self.fixtures = fixtures
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
            fx = self.fixtures
            self._token = fx.fetch_token(fx.account(f"token:{self.spec.name}"))
            self._tokens[self._token] = fx.client_id
        return self._token

    def secrets(self) -> tuple[str, ...]:
        return self.fixtures.secrets(*self._tokens)

    # ------------------------------------------------------------------ one run
    def begin_run(self, world: World) -> None:
        """Route the proxy to the run's wire (the runner's, serialised: ``serial_wire``); the tokens the
        arm's process holds are valid on the run's stand-in."""
        self.token()
        self.standin = world.standin
        if self.standin is not None:
            self.standin.tokens.update(self._tokens)
        self.proxy().route(world.recorder)

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
            env[creds["client_id"]] = self.fixtures.client_id
            env[creds["client_secret"]] = self.fixtures.client_secret
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
        prepared.lose(reason)
        ext = dict(prepared.external or {})
        ext.update(lost=reason, stderr=stderr[-STDERR_LIMIT:])
        prepared.external = ext


def lost_text(prepared: Prepared) -> str:
    return json.dumps({"error": f"the server was lost: {prepared.lost}"})

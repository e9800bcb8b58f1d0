"""Transport to PayPal's real sandbox over HTTPS (httpx, imported only when a request is sent).

It delivers only to the one PayPal host it was built for, and refuses anything else with
TransportError before a socket is opened: another host, another scheme, another port, a URL
with user info. The live host is allowed only when explicitly opted in (``allow_live=True``
or ``GUARDBENCH_ALLOW_LIVE=1``). Credentials are not this module's business: it only sends
what it is given.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from guardbench.paypal.endpoints import LIVE_HOST, SANDBOX_HOST
from guardbench.records.record import WireRequest, WireResponse
from guardbench.transport.base import TransportError

if TYPE_CHECKING:
    import httpx

ALLOW_LIVE_ENV = "GUARDBENCH_ALLOW_LIVE"
_DROP = {"host", "content-length", "connection", "transfer-encoding"}


def live_opted_in(environ: Mapping[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get(ALLOW_LIVE_ENV, "") == "1"


class SandboxTransport:
    def __init__(self, host: str = SANDBOX_HOST, allow_live: bool | None = None,
                 timeout: float = 30,
                 client: httpx.Client | None = None) -> None:
        self.allow_live = live_opted_in() if allow_live is None else bool(allow_live)
        host = (host or "").lower()
        # safeguard: sandbox_live_opt_in
        if host == LIVE_HOST and not self.allow_live:
            raise TransportError(f"refusing the live host {LIVE_HOST}: set "
                                 f"{ALLOW_LIVE_ENV}=1 to opt in")
        if host not in (SANDBOX_HOST, LIVE_HOST):
            raise TransportError(f"refusing host {host!r}: only {SANDBOX_HOST} (or {LIVE_HOST} "
                                 "when opted in)")
        self.host = host
        self.timeout = timeout
        self._client = client

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None,
                 **kwargs: Any) -> "SandboxTransport":
        """A sandbox transport, if PAYPAL_CLIENT_ID and PAYPAL_CLIENT_SECRET are set."""
        from guardbench.errors import ParameterError
        env = os.environ if environ is None else environ
        missing = [k for k in ("PAYPAL_CLIENT_ID", "PAYPAL_CLIENT_SECRET") if not env.get(k)]
        if missing:
            raise ParameterError("sandbox", f"{' and '.join(missing)} not set: the PayPal "
                                 "sandbox transport "
                                 "needs a sandbox app's client id and secret in the environment")
        kwargs.setdefault("allow_live", live_opted_in(env))
        return cls(**kwargs)

    def check(self, request: WireRequest) -> None:
        """Raise TransportError unless ``request`` goes to this transport's PayPal host over
        HTTPS."""
        try:
            parts = urlsplit(request.url)
            port = parts.port
        except ValueError as exc:
            raise TransportError(f"refusing malformed URL {request.url!r}: {exc}") from None
        host = (parts.hostname or "").lower()
        if host == LIVE_HOST and not self.allow_live:
            raise TransportError(f"refusing the live host {LIVE_HOST}: set "
                                 f"{ALLOW_LIVE_ENV}=1 to opt in")
        # safeguard: sandbox_host_refusal
        if host != self.host:
            raise TransportError(f"refusing host {host!r}: this transport sends only "
                                 f"to {self.host}")
        # safeguard: sandbox_https_only
        if parts.scheme != "https" or port not in (None, 443) or parts.username is not None:
            raise TransportError(f"refusing URL {request.url!r}: only https://{self.host}/...")

    def send(self, request: WireRequest) -> WireResponse:
        self.check(request)
        import httpx
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout, follow_redirects=False)
        headers = [(k, v) for k, v in request.headers if k.lower() not in _DROP]
        content = request.body.encode("utf-8") if request.body is not None else None
        try:
            r = self._client.request(request.method, request.url, headers=headers, content=content)
        except httpx.HTTPError as exc:
            why = f"{request.method} {request.url}: {type(exc).__name__}: {exc}"
            raise TransportError(why) from exc
        return WireResponse(r.status_code, tuple((k, v) for k, v in r.headers.items()), r.text)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

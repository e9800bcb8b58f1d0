"""Transport to ``guardbench sandbox serve`` on 127.0.0.1 (stdlib http.client).

Every request, to a PayPal host or any other, goes to the local server with the same method,
path, query, headers and body; the original host (and port, and scheme when not https) travel
in ``X-Guardbench-Original-Host`` / ``X-Guardbench-Original-Scheme`` so the server records the
request as it was addressed. The server answers PayPal hosts with the stand-in and any other
host 200 ``{"received": true}``.
"""
from __future__ import annotations

import http.client
from urllib.parse import urlsplit

from guardbench.records.record import WireRequest, WireResponse
from guardbench.transport.base import TransportError

ORIGINAL_HOST = "X-Guardbench-Original-Host"
ORIGINAL_SCHEME = "X-Guardbench-Original-Scheme"
LOCAL_HOSTS = ("127.0.0.1", "localhost")
_DROP = {"host", "content-length", "connection", "transfer-encoding",
         ORIGINAL_HOST.lower(), ORIGINAL_SCHEME.lower()}


class LoopbackTransport:
    """One new connection per request (never a retry: a request that moves money is sent once)."""

    def __init__(self, base_url: str, timeout: float = 30) -> None:
        parts = urlsplit(base_url)
        # safeguard: loopback_local_only
        if parts.scheme != "http" or parts.hostname not in LOCAL_HOSTS or not parts.port:
            raise TransportError("loopback base URL must be http://127.0.0.1:PORT, not "
                                 f"{base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.host, self.port, self.timeout = parts.hostname, parts.port, timeout

    def send(self, request: WireRequest) -> WireResponse:
        try:
            parts = urlsplit(request.url)
            port = parts.port
        except ValueError as exc:
            raise TransportError(f"malformed URL {request.url!r}: {exc}") from None
        if not parts.hostname:
            raise TransportError(f"URL without a host: {request.url!r}")
        original = parts.hostname + (f":{port}" if port else "")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = request.body.encode("utf-8") if request.body is not None else None
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.putrequest(request.method, target, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", f"{self.host}:{self.port}")
            conn.putheader("Connection", "close")
            conn.putheader(ORIGINAL_HOST, original)
            if (parts.scheme or "https") != "https":
                conn.putheader(ORIGINAL_SCHEME, parts.scheme)
            for k, v in request.headers:
                if k.lower() not in _DROP:
                    conn.putheader(k, v)
            conn.putheader("Content-Length", str(len(body) if body is not None else 0))
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, ValueError, http.client.HTTPException) as exc:
            raise TransportError(f"{request.method} {request.url} via {self.base_url}: "
                                 f"{type(exc).__name__}: {exc}") from exc
        finally:
            conn.close()
        headers = tuple((k, v) for k, v in resp.getheaders()
                        if k.lower() not in ("content-length", "connection", "date", "server"))
        return WireResponse(resp.status, headers, data.decode("utf-8", errors="replace"))

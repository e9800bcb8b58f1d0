"""The PayPal client credential and the OAuth access token derived from it.

The agent never sees either. The broker fetches a token with the client-credentials grant,
through the same transport as every other request, from the fixed endpoint table's token
endpoint on the broker's own host, caches it until shortly before it expires, and keeps a
list of every string that is (part of) the credential so it can check that no agent-visible
answer carries one.
"""
from __future__ import annotations

import base64
import os
import re
import time
from typing import Callable

from guardbench.errors import Refusal
from guardbench.paypal.endpoints import ENDPOINTS
from guardbench.records.record import WireRequest
from guardbench.transport.base import Transport, TransportError

_TOKEN_RE = re.compile(r"[A-Za-z0-9._~+/=-]{8,4096}")


class Credentials:
    """``Credentials(client_id, client_secret)``. repr() never shows the secret."""

    def __init__(self, client_id: str, client_secret: str) -> None:
        if not client_id or not client_secret:
            raise ValueError("a PayPal client id and secret are both required")
        self.client_id = client_id
        self.__secret = client_secret

    @classmethod
    def from_env(cls, id_var: str = "PAYPAL_CLIENT_ID",
                 secret_var: str = "PAYPAL_CLIENT_SECRET") -> "Credentials":
        cid, secret = os.environ.get(id_var), os.environ.get(secret_var)
        if not cid or not secret:
            raise ValueError(f"set {id_var} and {secret_var}")
        return cls(cid, secret)

    def basic(self) -> str:
        """The HTTP Basic credential (base64 of id:secret)."""
        return base64.b64encode(f"{self.client_id}:{self.__secret}".encode()).decode("ascii")

    def secrets(self) -> tuple[str, ...]:
        """Strings that must never appear in an agent-visible answer."""
        return (self.__secret, self.basic())

    def __repr__(self) -> str:
        return f"Credentials(client_id={self.client_id!r}, client_secret=<hidden>)"

    __str__ = __repr__


class TokenError(Refusal):
    """The token endpoint refused: ``status`` (HTTP) and PayPal's error ``name`` (a token)."""

    def __init__(self, status: int, name: str) -> None:
        super().__init__(f"token endpoint answered {status} {name}")
        self.status, self.name = status, name


class TokenSource:
    """Fetches and caches the OAuth access token (client credentials grant)."""

    MARGIN = 60.0

    def __init__(self, credentials: Credentials, transport: Transport, host: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.credentials, self.transport = credentials, transport
        self.host, self.clock = host, clock
        self._token: str | None = None
        self._expires = 0.0
        self._seen: list[str] = []

    def token(self) -> str:
        """A valid access token; raises TransportError or TokenError."""
        now = self.clock()
        if self._token is not None and now < self._expires:
            return self._token
        ep = ENDPOINTS["oauth.token"]
        req = WireRequest.make(ep.method, ep.url(self.host),
                               {"Authorization": f"Basic {self.credentials.basic()}",
                                "Content-Type": "application/x-www-form-urlencoded",
                                "Accept": "application/json"},
                               "grant_type=client_credentials")
        resp = self.transport.send(req)
        body = resp.json() if resp.body else None
        body = body if isinstance(body, dict) else {}
        token = body.get("access_token")
        if not resp.ok or not isinstance(token, str) or not _TOKEN_RE.fullmatch(token):
            name = body.get("error") or body.get("name") or "INVALID_TOKEN_RESPONSE"
            raise TokenError(resp.status, str(name))
        expires_in = body.get("expires_in")
        life = (float(expires_in) if isinstance(expires_in, (int, float))
                and not isinstance(expires_in, bool) else 300.0)
        self._token, self._expires = token, now + max(life - self.MARGIN, 1.0)
        self._seen.append(token)
        return token

    def invalidate(self) -> None:
        self._token, self._expires = None, 0.0

    def carry(self, other: "TokenSource") -> None:
        """Hold what ``other`` holds (its token, when it expires, every token it has seen)."""
        self._token, self._expires, self._seen = other._token, other._expires, list(other._seen)

    def secrets(self) -> tuple[str, ...]:
        """The credential strings plus every token this source has held."""
        return self.credentials.secrets() + tuple(self._seen)


__all__ = ["Credentials", "TokenSource", "TokenError", "TransportError"]

"""What PayPal's guidance asks of a client that the documents do not enforce: warnings, not errors.

Two, read from the recorded exchanges in order:

* ``write_without_request_id`` - a POST to a PayPal API endpoint without a ``PayPal-Request-Id``
  header. PayPal's idempotency guidance asks for one on every write, so that a retry is not a
  second payment; the documents declare the header optional.
* ``fresh_token_every_call`` - a client that fetched a new OAuth 2.0 token before every API call
  (each call's bearer token was issued by a token call of the same group and is used there
  for the first time; interleaved clients in one recording are told apart by their tokens).
  PayPal's guidance: cache the access token until it expires. Counted per group
  (one run record; a whole ``sandbox serve`` recording), warned once it holds two or more calls
  and every one of them used a fresh token.
"""
from __future__ import annotations

from collections import defaultdict

from guardbench.conformance.validate import OUT_OF_SCOPE, OUTSIDE_HOST, Result
from guardbench.records.wire import WireExchange, WireRequest, WireResponse

MAX_EXAMPLES = 20
WRITE_WITHOUT_REQUEST_ID = "write_without_request_id"
FRESH_TOKEN_EVERY_CALL = "fresh_token_every_call"
WHY = {WRITE_WITHOUT_REQUEST_ID: "a write without PayPal-Request-Id (PayPal's idempotency "
       "guidance asks for "
                                 "one on every POST; the documents make it optional)",
       FRESH_TOKEN_EVERY_CALL: "a new OAuth token fetched before every API call (PayPal's "
       "guidance: cache "
                               "the access token until it expires)"}


def _bearer(request: WireRequest) -> str | None:
    scheme, _, token = (request.header("Authorization") or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _issued(response: WireResponse | None) -> str | None:
    if response is None or not 200 <= response.status < 300:
        return None
    body = response.json()
    return body.get("access_token") if isinstance(body, dict) else None


class Guidance:
    """Feed exchanges in recorded order (``feed``); ``to_dict`` gives the warnings."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = defaultdict(int)
        self.examples: dict[str, list] = defaultdict(list)
        self._groups: dict[str, dict] = {}

    def _warn(self, kind: str, where: str, detail: str) -> None:
        self.counts[kind] += 1
        if len(self.examples[kind]) < MAX_EXAMPLES:
            self.examples[kind].append({"where": where, "detail": detail})

    def feed(self, group: str, where: str, exchange: WireExchange, result: Result) -> None:
        g = self._groups.setdefault(group, {"calls": 0, "fresh": 0, "unused": set()})
        if result.status == OUTSIDE_HOST:
            return
        if result.status == OUT_OF_SCOPE:          # the OAuth token call: remember what it issued
            issued = _issued(exchange.response)
            if issued:
                g["unused"].add(issued)
            return
        req = exchange.request
        if req.method.upper() == "POST" and not req.header("PayPal-Request-Id"):
            self._warn(WRITE_WITHOUT_REQUEST_ID, where, f"POST {req.path}")
        token = _bearer(req)
        g["calls"] += 1
        if token is not None and token in g["unused"]:     # issued in this group, used here first
            g["fresh"] += 1
            g["unused"].discard(token)

    def finish(self) -> None:
        for group, g in self._groups.items():
            if g["calls"] >= 2 and g["fresh"] == g["calls"]:
                self._warn(FRESH_TOKEN_EVERY_CALL, group, f"{g['calls']} API calls, {g['fresh']} "
                           "with a token "
                                                          "fetched just before")
        self._groups.clear()

    def to_dict(self) -> dict:
        return {kind: {"count": self.counts.get(kind, 0), "why": WHY[kind],
                       "examples": self.examples.get(kind, [])}
                for kind in (WRITE_WITHOUT_REQUEST_ID, FRESH_TOKEN_EVERY_CALL)}

    @property
    def total(self) -> int:
        return sum(self.counts.values())

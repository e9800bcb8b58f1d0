"""Sending an operation the broker has reserved, and writing how it ended.

The half of ``run_operation`` (and of an operator's approval) that runs outside the ledger
lock, after broker.py has decided and written the reservation: resolve the OAuth token,
compose the body (bound constants last, the reservation's idempotency key as
``PayPal-Request-Id``), take host and path from the fixed endpoint table, send, reduce PayPal's
answer to the operation's declared fields, and append the outcome to the ledger. A refused
token or an unreachable token endpoint sends nothing and releases the reservation; a request
that may have reached PayPal keeps it counted. For an approval each outcome also says how the
approval ends: pending again, sent (outcome unknown), failed or executed.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Callable, Mapping

from guardbench.broker.compose import compose_body
from guardbench.broker.credentials import TokenError, TokenSource
from guardbench.broker.ledger import Ledger, LedgerCorrupt
from guardbench.broker.money import fmt
from guardbench.broker.params import Validated
from guardbench.broker.policy import Operation
from guardbench.broker.response import reduce_response, token, upstream_error
from guardbench.records.record import Decision, WireRequest
from guardbench.transport.base import Transport


class Dispatcher:
    """Sends reserved operations for one broker: its ledger, transport, tokens, clock and host."""

    def __init__(self, ledger: Ledger, transport: Transport, tokens: TokenSource,
                 clock: Callable[[], float], host: str,
                 catalogue_names: Mapping[str, str]) -> None:
        self.ledger, self.transport, self.tokens = ledger, transport, tokens
        self.clock, self.host, self.catalogue_names = clock, host, catalogue_names

    def record(self, entry: dict) -> bool:
        """Append an outcome to the ledger; False if the ledger failed verification first."""
        try:
            with self.ledger.transaction(self.clock()) as tx:
                tx.append({"t": "outcome", **entry})
            return True
        except LedgerCorrupt:
            return False

    def send(self, op: Operation, vp: Validated, reference: str | None,
             amount: Decimal | None, instr: str,
             rid: str, seq: int, aid: str | None) -> tuple[Decision, str | None]:
        """Send the operation reserved at ledger line ``seq`` with idempotency key ``rid``;
        the decision and, for an approval (``aid``), how it ends."""
        base = {"op": op.name, "of": seq, "instr": instr, "approval_id": aid}

        def ends(state: str) -> dict:          # how an approval ends, for the ledger's history
            return {"approval_state": state} if aid is not None else {}

        try:
            tok = self.tokens.token()
        except TokenError as exc:
            result = {"http_status": exc.status,
                      **({"error": token(exc.name)} if token(exc.name) else {})}
            self.record({**base, "status": "upstream_rejected", "release": True,
                           "result": result, **ends("pending")})
            return Decision("upstream_rejected", op.name, result,
                            "PayPal refused the broker's credential; nothing was sent",
                            aid), "pending"
        except Exception:          # TransportError, or a transport that failed otherwise
            self.record({**base, "status": "transport_error", "release": True, **ends("pending")})
            return Decision("transport_error", op.name, {},
                            "could not reach PayPal for a token; nothing was sent", aid), "pending"
        ep = op.endpoint
        headers = {"Authorization": f"Bearer {tok}", "Accept": "application/json"}
        body = None
        if ep.method == "POST":
            headers["Content-Type"] = "application/json"
            headers["PayPal-Request-Id"] = rid
            headers["Prefer"] = "return=representation"
            body = compose_body(op, vp.values, self.catalogue_names,
                                {"idempotency_key": rid})
        request = WireRequest.make(ep.method, ep.url(self.host, reference), headers, body)
        try:
            resp = self.transport.send(request)
        except Exception:  # noqa: BLE001 - TransportError or any transport failure: outcome unknown
            # it may or may not have reached PayPal: the reservation stays counted
            self.record({**base, "status": "transport_error", **ends("sent")})
            return Decision("transport_error", op.name, {},
                            "the request could not be delivered; it may have reached PayPal, "
                            "so it stays "
                            "counted against the limits", aid), "sent"
        if resp.status == 401:
            self.tokens.invalidate()
        parsed = resp.json()
        if not resp.ok:
            result = upstream_error(resp.status, parsed)
            self.record({**base, "status": "upstream_rejected", "release": True,
                           "result": result, **ends("failed")})
            reason = "PayPal refused the request" + (f": {result['issue']}"
                                                     if "issue" in result else
                                                     f": {result['error']}"
                                                     if "error" in result else "")
            return Decision("upstream_rejected", op.name, result, reason, aid), "failed"
        result, issued = reduce_response(op.response, parsed)
        amt = fmt(amount) if amount is not None else "0.00"
        recorded = self.record({**base, "status": "executed", "result": result,
                                  **ends("executed"),
                                  "issued": [[kind, ref, amt] for kind, ref in issued] or None})
        reason = ("" if recorded else "executed, but the ledger failed verification before the "
                  "outcome was written")
        return Decision("executed", op.name, result, reason, aid), "executed"


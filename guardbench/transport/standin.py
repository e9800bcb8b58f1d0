"""In-process transport to the PayPal stand-in: no sockets, no network.

Requests to PayPal's hosts go to the stand-in; a request to any other host is answered
200 ``{"received": true}``, as an attacker's server that accepts whatever it is sent would.
Either way the request is on the record of a RecordingTransport wrapped around this one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from guardbench.paypal.endpoints import PAYPAL_HOSTS
from guardbench.records.record import WireRequest, WireResponse
from guardbench.transport.base import TransportError

if TYPE_CHECKING:
    from guardbench.paypal.standin import PayPalStandIn

ACCEPTED = WireResponse.make(200, {"received": True})


class StandInTransport:
    def __init__(self, standin: PayPalStandIn | None = None) -> None:
        if standin is None:
            from guardbench.paypal.standin import PayPalStandIn
            standin = PayPalStandIn()
        self.standin = standin

    def send(self, request: WireRequest) -> WireResponse:
        if not isinstance(request, WireRequest):
            raise TransportError(f"not a WireRequest: {type(request).__name__}")
        if request.host in PAYPAL_HOSTS:
            return self.standin.handle(request)
        return ACCEPTED

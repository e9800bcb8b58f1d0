"""The one transport interface that the broker, the arms, tests and real use share."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from guardbench.errors import RunLost
from guardbench.records.record import WireRequest, WireResponse


class TransportError(RunLost):
    """The request could not be delivered (connection refused, timeout, refused host)."""


@runtime_checkable
class Transport(Protocol):
    def send(self, request: WireRequest) -> WireResponse:
        """Deliver ``request`` and return the response, or raise TransportError."""
        ...

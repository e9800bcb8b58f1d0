"""A transport used by one thread at a time."""
from __future__ import annotations

import threading

from guardbench.records.record import WireRequest, WireResponse
from guardbench.transport.base import Transport


class SerialTransport:
    """An inner transport used by one thread at a time (the stand-in is not thread-safe): the
    proxy's loop and the arm's own setup calls may both reach it."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self._lock = threading.Lock()

    def send(self, request: WireRequest) -> WireResponse:
        with self._lock:
            return self.inner.send(request)

"""The recording transport: the record that every detector reads.

``RecordingTransport(inner)`` records each request it is asked to send, with its response,
as a ``WireExchange`` (seq from 0), also when the inner transport raises (then
``response=None`` and ``error`` says why, and the error is re-raised). Requests and responses
are copied into frozen records made of strings and tuples before anything else sees them, and
``.exchanges`` is a tuple: nothing the wrapped code does can alter what was recorded.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Sequence

from guardbench.records.record import WireExchange, WireRequest, WireResponse
from guardbench.transport.base import Transport, TransportError

STATE_MARK = "#state:"                  # an exchange read from a system's own state (record_state)
STATE_STATUSES = ("executed", "queued")


def state_status(ex: WireExchange) -> str | None:
    """executed / queued for an exchange a system's state showed (record_state); None for real
    traffic."""
    _, mark, status = ex.run_id.rpartition(STATE_MARK)
    return status if mark and status in STATE_STATUSES else None


def _pairs(headers: Any) -> tuple[tuple[str, str], ...]:
    items = headers.items() if hasattr(headers, "items") else (headers or ())
    return tuple((str(k), str(v)) for k, v in items)


# json.dumps(body, separators=(",", ":"), default=str), its encoder built once
_COMPACT = json.JSONEncoder(separators=(",", ":"), default=str).encode


def freeze_request(request: WireRequest) -> WireRequest:
    """A copy of ``request`` made only of str and tuples (a body that is not a str becomes JSON)."""
    if not isinstance(request, WireRequest):
        raise TransportError(f"not a WireRequest: {type(request).__name__}")
    body = request.body
    if body is not None and not isinstance(body, str):
        body = _COMPACT(body)
    return WireRequest(str(request.method).upper(), str(request.url), _pairs(request.headers), body)


def freeze_response(response: WireResponse) -> WireResponse:
    if not isinstance(response, WireResponse):
        raise TransportError(f"transport returned {type(response).__name__}, not a WireResponse")
    body = response.body if isinstance(response.body, str) else str(response.body)
    return WireResponse(int(response.status), _pairs(response.headers), body)


class RecordingTransport:
    def __init__(self, inner: Transport, run_id: str = "",
                 sink: Callable[[WireExchange], None] | None = None,
                 history: Sequence[WireExchange] = ()) -> None:
        """``history``: exchanges recorded before (a copied world's setup, execution/world.py), kept
        first, in order, under this recorder's ``run_id``; what is sent next follows their seqs."""
        self._inner = inner
        self.run_id = str(run_id)
        self._sink = sink
        self._log: list[WireExchange] = [
            WireExchange(i, self.run_id, ex.request, ex.response, ex.error)
            for i, ex in enumerate(history)]
        self._lock = threading.Lock()

    @property
    def inner(self) -> Transport:
        return self._inner

    @property
    def exchanges(self) -> tuple[WireExchange, ...]:
        """Everything recorded so far, in order (a tuple: a snapshot that cannot be altered)."""
        return tuple(self._log)

    def __len__(self) -> int:
        return len(self._log)

    def _record(self, request: WireRequest, response: WireResponse | None,
                error: str | None) -> WireExchange:
        with self._lock:
            ex = WireExchange(len(self._log), self.run_id, request, response, error)
            self._log.append(ex)
        if self._sink is not None:
            self._sink(ex)
        return ex

    def send(self, request: WireRequest) -> WireResponse:
        # what is recorded is exactly what the inner transport gets
        # safeguard: recording_freezes_requests
        request = freeze_request(request)
        try:
            response = freeze_response(self._inner.send(request))
        except BaseException as exc:  # recorded, then re-raised: a failed send counts as asked
            # safeguard: recording_records_failures
            self._record(request, None, f"{type(exc).__name__}: {exc}")
            raise
        self._record(request, response, None)
        return response


    def record_state(self, request: WireRequest, response: WireResponse,
                     status: str) -> WireExchange:
        """Record a write a system keeps in its own state (mcp/probe.py: never sent here): the
        request it is equivalent to, marked in the exchange's ``run_id`` (``STATE_MARK`` + executed
        or queued), which nothing a process sends can set."""
        if status not in STATE_STATUSES:
            raise ValueError(f"a state write is executed or queued, not {status!r}")
        request, response = freeze_request(request), freeze_response(response)
        with self._lock:
            ex = WireExchange(len(self._log), f"{self.run_id}{STATE_MARK}{status}", request,
                              response, None)
            self._log.append(ex)
        if self._sink is not None:
            self._sink(ex)
        return ex

    def record_failure(self, request: WireRequest, error: str) -> WireExchange:
        """Record a request that was attempted but never delivered (e.g. a proxy tunnel whose TLS
        handshake failed): on the record with no response and ``error``."""
        return self._record(freeze_request(request), None, str(error))


class JsonlSink:
    """A sink that appends each exchange as one JSON line (never truncates; flushes per line)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self._fh = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def __call__(self, exchange: WireExchange) -> None:
        line = json.dumps(exchange.to_dict(), separators=(",", ":")) + "\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            self._fh.close()

    def __enter__(self) -> JsonlSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_jsonl(path: str | os.PathLike[str]) -> list[WireExchange]:
    """The exchanges a JsonlSink wrote."""
    with open(path, encoding="utf-8") as fh:
        return [WireExchange.from_dict(json.loads(line)) for line in fh if line.strip()]

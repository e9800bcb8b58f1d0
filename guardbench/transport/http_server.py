"""The PayPal stand-in served over HTTP/1.1 on 127.0.0.1 (``guardbench sandbox serve``).

Behaves like a server a client can lean on:

* every exchange is written to the record file as it happens (one JSON line, flushed) and
  nothing is kept in memory, so memory stays flat however long it runs;
* at most ``max_connections`` connections are served at once (more wait in the listen
  backlog); a connection idle for ``idle_timeout`` seconds is closed;
* TCP_NODELAY, and each response leaves in one write (a keep-alive client does not wait for
  Nagle's algorithm and a delayed ACK, ~40 ms a request);
* bodies sent with ``Transfer-Encoding: chunked`` are read and recorded decoded;
* what the HTTP layer refuses itself (a header block too large: 431, a malformed request
  line: 400, a body too large: 413), an upload the client abandoned mid-body, and a
  response the client did not wait for are recorded as they happened, with ``error``;
* any method is answered (TRACE, FOO...) by the stand-in, which knows which it serves;
* a client that goes away never prints a traceback;
* a record file that cannot be written (a full disk) stops the server: the file keeps every line
  written before, whole (a partly written line is cut back), later requests are answered 503
  without reaching the stand-in, and ``sandbox serve`` exits 2 naming the file;
* a file appended to that ends in half a line (a server killed mid-write) has it cut off first,
  said on stderr, so the next exchange is not glued to it.

Requests addressed (via the loopback transport's X-Guardbench-Original-Host) to a host other
than PayPal's are recorded and answered 200 {"received": true}; a request without that header
is taken as addressed to the PayPal sandbox.
"""
from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import urlsplit

from guardbench.errors import Refusal
from guardbench.paypal.endpoints import SANDBOX_HOST
from guardbench.records.record import WireExchange, WireRequest, WireResponse
from guardbench.transport.base import Transport
from guardbench.transport.recording import freeze_request, freeze_response
from guardbench.util.outputs import cut_torn_tail

BIND_HOSTS = ("127.0.0.1",)
MAX_BODY = 16 * 1024 * 1024
# Headers the HTTP hop adds, not part of the request as it was addressed.
HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding",
       "x-guardbench-original-host", "x-guardbench-original-scheme"}
_QUIET = (ConnectionError, TimeoutError, socket.timeout, OSError)
# socketserver's request, as typeshed has it
_Request = socket.socket | tuple[bytes, socket.socket]


class Recorder:
    """Numbers exchanges in the order the stand-in took them and appends each to a JSONL file.

    ``reserve()`` takes the next number (under the server's lock, with the stand-in's call), and
    ``complete()`` writes the exchange once its response was delivered (or not); lines are written
    in number order, so the file is in processing order and each line says how delivery went.
    At most one pending exchange per connection is held back.
    """

    def __init__(self, path: str | None, run_id: str = "sandbox") -> None:
        self.run_id, self.count, self.path = run_id, 0, path
        self._next, self._written = 0, 0
        self._pending: dict[int, WireExchange] = {}
        # raw appends: a failed write is known to the byte and cut back, never left half a line
        self._fd: int | None = None
        # bytes of a torn last line (a server killed mid-write) cut off
        self.torn = 0
        if path:
            try:
                self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                self.torn = cut_torn_tail(self._fd)
            except PermissionError:           # writable but not readable: appended to unchecked
                self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        # why the file could not be written; nothing is written after it
        self.failed: str | None = None
        # the server's stop, called once, outside the lock
        self.on_failure: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)

    def reserve(self) -> int:
        with self._lock:
            seq, self._next = self._next, self._next + 1
            return seq

    def _append(self, data: bytes) -> None:
        """One whole line or none: a write that fails part-way is cut back to the file's size before
        it."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError:
            try:
                os.ftruncate(self._fd, size)
            except OSError:
                pass
            raise

    def complete(self, seq: int, request: WireRequest, response: WireResponse | None,
                 error: str | None) -> None:
        stop = None
        with self._lock:
            self._pending[seq] = WireExchange(seq, self.run_id, request, response, error)
            while self._written in self._pending:
                ex = self._pending.pop(self._written)
                self._written += 1
                if self.failed is not None:
                    # the file holds a gapless prefix; the server is stopping
                    continue
                if self._fd is not None:
                    try:
                        self._append((json.dumps(ex.to_dict(), separators=(",", ":"))
                                      + "\n").encode("utf-8"))
                    except OSError as exc:
                        self.failed = f"{self.path}: {exc.strerror or exc}"
                        stop = self.on_failure
                        continue
                self.count += 1
            self._done.notify_all()
        if stop is not None:
            stop()

    def record(self, request: WireRequest, response: WireResponse | None,
               error: str | None) -> None:
        self.complete(self.reserve(), request, response, error)

    def close(self, wait: float = 5.0) -> None:
        """Close the record file once every exchange already taken is written (a handler thread may
        still be delivering a response when the server is stopped); waits at most ``wait``
        seconds."""
        with self._lock:
            self._done.wait_for(lambda: self._written == self._next, timeout=wait)
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


class _BodyError(Refusal):
    def __init__(self, status: int, reason: str, partial: bytes | None = None,
                 answer: bool = True) -> None:
        super().__init__(reason)
        self.status, self.reason, self.partial, self.answer = status, reason, partial, answer


class Handler(BaseHTTPRequestHandler):
    # the server that made this handler (its recorder, lock, transport)
    server: StandInServer
    protocol_version = "HTTP/1.1"
    server_version = "guardbench-standin"
    sys_version = ""
    disable_nagle_algorithm = True          # TCP_NODELAY (StreamRequestHandler.setup)
    timeout = 15                            # replaced by the server's idle_timeout

    def __getattr__(self, name: str) -> Callable[[], None]:  # every method goes to the stand-in
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the record file is the log
        pass

    # --- what the HTTP layer refuses itself, recorded -------------------------------------
    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        req = self._request(None)
        body = json.dumps({"name": "INVALID_REQUEST", "message": message
                           or self.responses.get(code, ("",))[0]})
        resp = WireResponse.make(code, json.loads(body))
        self.close_connection = True
        self.server.recorder.record(req, resp, f"HTTP {code}: {message or ''}".strip())
        self._write(resp, head=False, close=True)

    # --- reading --------------------------------------------------------------------------
    def _request(self, raw: bytes | None) -> WireRequest:
        headers = getattr(self, "headers", None)
        hdrs = tuple((k, v) for k, v in headers.items()
                     if k.lower() not in HOP) if headers is not None else ()
        orig = (headers.get("X-Guardbench-Original-Host") if headers is not None
                else None) or SANDBOX_HOST
        scheme = (headers.get("X-Guardbench-Original-Scheme") if headers is not None
                  else None) or "https"
        target = getattr(self, "path", None) or "/"
        if not target.startswith("/"):      # absolute form, as a client using us as its proxy sends
            parts = urlsplit(target)
            scheme, orig = parts.scheme or scheme, parts.netloc or orig
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = raw.decode("utf-8", errors="replace") if raw is not None else None
        method = getattr(self, "command", None) or "?"
        return WireRequest(method, f"{scheme}://{orig}{target}", hdrs, body)

    def _read_exact(self, n: int, got: bytearray) -> None:
        while n > 0:
            chunk = self.rfile.read(min(n, 65536))
            if not chunk:
                raise _BodyError(400, "the client closed the connection after "
                                 f"{len(got)} body bytes",
                                 bytes(got), answer=False)
            got += chunk
            n -= len(chunk)

    def _body(self) -> bytes | None:
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        got = bytearray()
        if "chunked" in te:
            while True:
                line = self.rfile.readline(1026)
                if not line:
                    raise _BodyError(400, "the client closed the connection inside a chunked body",
                                     bytes(got), answer=False)
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise _BodyError(400, "malformed chunk size", bytes(got)) from None
                if size < 0 or len(got) + size > MAX_BODY:
                    raise _BodyError(413, f"body larger than {MAX_BODY} bytes", bytes(got))
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass                                     # trailers: not part of the request
                    return bytes(got)
                self._read_exact(size, got)
                self.rfile.readline(3)                           # the CRLF after the chunk
        length = self.headers.get("Content-Length")
        if length is None:
            return None
        try:
            n = int(length)
            if n < 0:
                raise ValueError
        except ValueError:
            raise _BodyError(400, f"bad Content-Length {length!r}") from None
        if n > MAX_BODY:
            raise _BodyError(413, f"body larger than {MAX_BODY} bytes")
        if n == 0:
            return None
        self._read_exact(n, got)
        return bytes(got)

    # --- answering ------------------------------------------------------------------------
    def _write(self, resp: WireResponse, head: bool, close: bool = False) -> str | None:
        """Send the response in one write; the error if the client did not take it."""
        data = resp.body.encode("utf-8")
        lines = [f"HTTP/1.1 {resp.status} {self.responses.get(resp.status, ('',))[0]}".rstrip()]
        for k, v in resp.headers:
            if k.lower() not in ("content-length", "connection"):
                lines.append(f"{k}: {v}")
        lines.append(f"Content-Length: {len(data)}")
        lines.append("Date: " + self.date_time_string())
        lines.append("Server: guardbench-standin")
        if close or self.close_connection:
            lines.append("Connection: close")
        payload = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
        if not head:
            payload += data
        try:
            self.wfile.write(payload)
            self.wfile.flush()
        except _QUIET as exc:
            self.close_connection = True
            return f"response not delivered: the client went away ({type(exc).__name__})"
        return None

    def _serve(self) -> None:
        try:
            raw = self._body()
        except _BodyError as exc:
            req = self._request(exc.partial)
            self.close_connection = True
            if not exc.answer:                # nobody is listening: recorded, not answered
                self.server.recorder.record(req, None, f"aborted upload: {exc.reason}")
                return
            resp = WireResponse.make(exc.status, {"name": "INVALID_REQUEST", "message": exc.reason})
            err = self._write(resp, head=False, close=True)
            self.server.recorder.record(req, resp, f"HTTP {exc.status}: {exc.reason}"
                                        + (f"; {err}" if err else ""))
            return
        except _QUIET:
            self.close_connection = True
            self.server.recorder.record(self._request(None), None,
                                        "aborted upload: the connection failed")
            return
        request = freeze_request(self._request(raw))
        response, err = None, "the stand-in raised"
        with self.server.lock:
            seq = self.server.recorder.reserve()
            # it could not be recorded: the stand-in never sees it
            if self.server.recorder.failed is not None:
                self.server.recorder.complete(seq, request, None, "not served: the "
                                              "record file failed")
                self.close_connection = True
                self._write(WireResponse.make(503,
                                              {"name": "SERVICE_UNAVAILABLE",
                                               "message": "the record file "
                                                    "cannot be written; the server is stopping"}),
                                                    False, True)
                return
            try:
                response = freeze_response(self.server.transport.send(request))
            finally:
                if response is None:
                    self.server.recorder.complete(seq, request, None, err)
        err = "response not delivered: the server failed writing it"
        try:
            err = self._write(response, head=self.command == "HEAD")
        # always, or every later exchange would wait for this one
        finally:
            self.server.recorder.complete(seq, request, response, err)


class StandInServer(ThreadingMixIn, HTTPServer):
    """One thread per connection, at most ``max_connections`` at once; quiet about clients that
    leave."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], transport: Transport, recorder: Recorder,
                 max_connections: int = 64,
                 idle_timeout: float = 15.0) -> None:
        handler = type("BoundHandler", (Handler,), {"timeout": idle_timeout})
        super().__init__(address, handler)
        self.transport, self.recorder = transport, recorder
        # a record that cannot be written stops serving (from a thread of its own: shutdown() waits
        # for the loop)
        recorder.on_failure = lambda: threading.Thread(target=self.shutdown, daemon=True).start()
        self.lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request: _Request, client_address: Any) -> None:
        self._slots.acquire()                 # back-pressure: the next accept waits for a free slot
        try:
            super().process_request(request, client_address)
        except BaseException:             # cleanup, then re-raise: a slot is never lost
            self._slots.release()
            raise

    def process_request_thread(self, request: _Request, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: _Request, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, _QUIET):           # a client that went away is not the server's error
            return
        super().handle_error(request, client_address)


def make_server(port: int = 0, host: str = "127.0.0.1", record: str | None = None, seed: str = "0",
                run_id: str = "sandbox", max_connections: int = 64, idle_timeout: float = 15.0,
                specs_dir: str | Path | None = None) -> StandInServer:
    """A server for a fresh stand-in (not started). Raises ValueError for a non-local address."""
    from guardbench.paypal.standin import PayPalStandIn
    from guardbench.transport.standin import StandInTransport

    if host not in BIND_HOSTS:
        raise ValueError(f"sandbox serve binds to 127.0.0.1 only, not {host!r}")
    transport = StandInTransport(PayPalStandIn(seed=seed, specs_dir=specs_dir))
    recorder = Recorder(record, run_id)
    try:
        return StandInServer((host, port), transport, recorder, max_connections, idle_timeout)
    except BaseException:                 # cleanup, then re-raise: the record file is closed
        recorder.close()
        raise

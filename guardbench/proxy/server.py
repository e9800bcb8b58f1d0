"""A recording forward proxy on 127.0.0.1 (asyncio, stdlib ssl, h11 for HTTP/1.1 framing).

A process reaches it in one of three ways, all on the same port:

- ``CONNECT host:port`` (what ``HTTPS_PROXY`` makes clients do): answered 200, then TLS is
  terminated with a leaf for ``host`` signed by the run's CA (ca.py), and the HTTP/1.1 requests
  inside the tunnel are read with h11 (keep-alive, chunked bodies, ``Expect: 100-continue``);
- an absolute-form request (``GET https://host/path HTTP/1.1`` sent in clear to the proxy, as old
  axios does through ``HTTPS_PROXY``, or ``http://...`` through ``HTTP_PROXY``);
- an origin-form request (``GET /path``): the process was given ``http://127.0.0.1:PORT`` as its
  PayPal base URL (a base-URL override). It is recorded as addressed to ``base_host`` (PayPal's
  sandbox), or to ``X-Guardbench-Original-Host`` when guardbench's loopback transport sent it.

A fourth way serves a room (guardbench/room/): ``serve_room(room)`` adopts the room's listeners,
where any connection to any address lands. A connection to the room's proxy port is served as
above; one to any other port is *transparent* (transparent.py): TLS is terminated with a leaf for
the name the client sent in SNI (RFC 6066), and plain HTTP is read with its Host header; without
either, the host is the name the room's DNS handed out for the dialled address, or that address.
Bytes that are neither TLS nor HTTP are recorded as they came (method ``RAW``). Traffic from a
room never carries guardbench's internal routing headers (they are stripped, not trusted), and
host names are normalised as PayPal's edge would read them (case, trailing dot, IDNA:
addresses.py).

Nothing is ever forwarded upstream. Each request becomes a ``WireRequest`` (hop-by-hop headers
left out, the URL as the process addressed it, port 443 dropped) and goes to the *route*: the
current run's RecordingTransport (``route(recorder)``), whose inner transport answers PayPal's
hosts from the stand-in and any other host 200 ``{"received": true}``: the same records as in
process. A tunnel whose TLS handshake fails (the process did not trust the run's CA) is recorded
as a ``CONNECT`` exchange with no response and the handshake error, so the attempt to reach that
host is on the record. Requests that arrive while no run is routed are kept in ``stray`` and
answered 503 (arms/external.py writes them into the next run's record, unscored, or the run
folder's between_runs.jsonl). ``settle()`` waits for a room's connections in flight, so what a
room's processes sent before they were ended reaches the run's route before it is cleared.
Connections idle for ``idle_timeout`` seconds are closed.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from guardbench.paypal.endpoints import SANDBOX_HOST
from guardbench.proxy.addresses import drop_default_port, normal_host, normal_url
from guardbench.proxy.transparent import serve_transparent
from guardbench.records.record import WireExchange, WireRequest, WireResponse
from guardbench.transport.serial import SerialTransport  # noqa: F401 - where the proxy's users found it

if TYPE_CHECKING:
    import h11

    from guardbench.transport.recording import RecordingTransport

INTERNAL_HEADERS = frozenset({"x-guardbench-original-host", "x-guardbench-original-scheme"})
HOP_HEADERS = frozenset({"host", "content-length", "connection", "keep-alive",
                         "transfer-encoding", "te",
                         "trailer", "upgrade", "proxy-connection", "proxy-authorization", "expect",
                         "x-guardbench-original-host", "x-guardbench-original-scheme"})
MAX_BODY = 16 * 1024 * 1024


class RecordingProxy:
    def __init__(self, base_host: str = SANDBOX_HOST, idle_timeout: float = 60.0,
                 folder: str | None = None) -> None:
        self.base_host = base_host
        self.idle_timeout = idle_timeout
        self._own_folder = folder is None
        self.folder = Path(folder or tempfile.mkdtemp(prefix="gb-proxy-"))
        self.ca: Any = None
        self.port = 0
        self.stray: list[WireExchange] = []
        self._route: Any = None
        self._route_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._room_conns: set[asyncio.Task] = set()

    # ------------------------------------------------------------------ life cycle
    def start(self) -> "RecordingProxy":
        from guardbench.proxy.ca import RunCA
        self.ca = RunCA(self.folder)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="gb-proxy", daemon=True)
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._client, "127.0.0.1", 0, limit=1 << 16), self._loop)
        self._server = fut.result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __enter__(self) -> "RecordingProxy":
        return self.start() if self._loop is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ca_path(self) -> str:
        return str(self.ca.path)

    def environment(self) -> dict[str, str]:
        """What the process under test needs in its environment to come through here."""
        from guardbench.proxy.ca import proxy_environment
        return proxy_environment(self.url, self.ca_path)

    def route(self, recorder: RecordingTransport | None) -> None:
        """Send what arrives from now on to ``recorder`` (a RecordingTransport); None: between
        runs."""
        with self._route_lock:
            self._route = recorder

    def close(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            async def stop() -> None:
                if self._server is not None:
                    self._server.close()
                tasks = list(self._tasks)
                for t in tasks:
                    t.cancel()
                if tasks:
                    await asyncio.wait(tasks, timeout=2)
            try:
                asyncio.run_coroutine_threadsafe(stop(), loop).result(5)
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(5)
            if not loop.is_running():
                loop.close()
        self._loop = None
        if self._own_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    # ------------------------------------------------------------------ what a request becomes
    def _deliver(self, request: WireRequest) -> WireResponse:
        with self._route_lock:
            route = self._route
        if route is None:
            ex = WireExchange(len(self.stray), "", request, None, "no run was active")
            self.stray.append(ex)
            return WireResponse.make(503, {"error": "guardbench: no run is active"})
        try:
            return route.send(request)
        except Exception as exc:  # noqa: BLE001 - recorded by the route; the process gets a 502
            return WireResponse.make(502, {"error": f"guardbench: {type(exc).__name__}: {exc}"})

    def _failed(self, request: WireRequest, error: str) -> None:
        with self._route_lock:
            route = self._route
        if route is None:
            self.stray.append(WireExchange(len(self.stray), "", request, None, error))
        else:
            route.record_failure(request, error)

    def _url(self, target: str, scheme: str, authority: str | None, headers: list[tuple[str, str]],
             dialled: str | None = None) -> str:
        if target.startswith(("http://", "https://")):
            parts = urlsplit(target)
            # ourselves, as a base URL
            if parts.hostname == "127.0.0.1" and parts.port == self.port:
                return self._base_url((parts.path or "/")
                                      + ("?" + parts.query if parts.query else ""), headers)
            return normal_url(drop_default_port(target))
        if authority is not None:                        # inside a tunnel: origin form
            return normal_url(f"{scheme}://{authority}{target}")
        # transparent plain HTTP: the Host header says where
        if dialled is not None:
            host = next((v for k, v in headers if k.lower() == "host"), "") or dialled
            return normal_url(drop_default_port(f"{scheme}://{host}{target}"))
        # origin form on a plain connection: a base URL
        return self._base_url(target, headers)

    def _base_url(self, target: str, headers: list[tuple[str, str]]) -> str:
        low = {k.lower(): v for k, v in headers}
        host = low.get("x-guardbench-original-host") or self.base_host
        scheme = low.get("x-guardbench-original-scheme") or "https"
        path = target if target.startswith("/") else "/" + target
        return drop_default_port(f"{scheme}://{host}{path}")

    # ------------------------------------------------------------------ connections
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      room: bool = False) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            if room:
                self._room_conns.add(task)
        try:
            await self._serve(reader, writer, "http", None, room=room)
        except (asyncio.CancelledError, ConnectionError, asyncio.TimeoutError,
                ssl.SSLError, OSError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
                self._room_conns.discard(task)
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - closing a connection is best effort
                pass

    async def _read(self, reader: asyncio.StreamReader) -> bytes:
        return await asyncio.wait_for(reader.read(65536), self.idle_timeout)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, scheme: str,
                     authority: str | None, room: bool = False,
                     dialled: str | None = None) -> None:
        import h11
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
        while True:
            try:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await self._read(reader))
                    continue
                if not isinstance(event, h11.Request):
                    # closed, or paused after a protocol switch
                    return
                method = event.method.decode("ascii", "replace").upper()
                target = event.target.decode("utf-8", "replace")
                headers = [(k.decode("latin-1"), v.decode("latin-1"))
                           for k, v in event.headers.raw_items()]
                if room:       # a process in a room cannot steer guardbench's own routing
                    headers = [(k, v) for k, v in headers if k.lower() not in INTERNAL_HEADERS]
                if method == "CONNECT" and authority is None and dialled is None:
                    await self._tunnel(conn, reader, writer, target, headers)
                    return
                if conn.they_are_waiting_for_100_continue:
                    writer.write(conn.send(h11.InformationalResponse(status_code=100, headers=[])))
                body = bytearray()
                while True:
                    ev = conn.next_event()
                    if ev is h11.NEED_DATA:
                        conn.receive_data(await self._read(reader))
                        continue
                    if isinstance(ev, h11.Data):
                        body += ev.data
                        if len(body) > MAX_BODY:
                            raise h11.RemoteProtocolError("body too large", error_status_hint=413)
                        continue
                    if isinstance(ev, h11.EndOfMessage):
                        break
                    return
            except h11.RemoteProtocolError as exc:
                await self._refuse(conn, writer, exc.error_status_hint, str(exc))
                return
            url = self._url(target, scheme, authority, headers, dialled)
            text = bytes(body).decode("utf-8", "replace") if body or _has_body(headers) else None
            kept = tuple((k, v) for k, v in headers if k.lower() not in HOP_HEADERS)
            response = self._deliver(WireRequest(method, url, kept, text))
            payload = response.body.encode("utf-8")
            out = [(k, v) for k, v in response.headers
                   if k.lower() not in ("content-length", "connection", "transfer-encoding")]
            out.append(("Content-Length", str(len(payload))))
            writer.write(conn.send(h11.Response(status_code=response.status, headers=out)))
            if payload and method != "HEAD":
                writer.write(conn.send(h11.Data(data=payload)))
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                return
            try:
                conn.start_next_cycle()
            except h11.LocalProtocolError:
                return

    # ------------------------------------------------------------------ rooms
    def serve_room(self, room: Any) -> None:
        """Serve every listener of ``room`` (guardbench/room/) until ``close_room`` or ``close``."""
        from guardbench.room.room import CAPTURED_PORTS, PROXY_PORT
        assert self._loop is not None, "start() the proxy first"

        async def adopt() -> list[asyncio.Task]:
            tasks = []
            for port, listener in room.listeners.items():
                if port not in CAPTURED_PORTS and port != PROXY_PORT:
                    # a port another of guardbench's services serves (a model gateway)
                    continue
                listener.setblocking(False)
                # the proxy's own protocol (CONNECT, absolute form, base URL)
                if port == PROXY_PORT:
                    server = await asyncio.start_server(lambda r, w: self._client(r, w, room=True),
                                                        sock=listener, limit=1 << 16)
                    tasks.append(asyncio.ensure_future(server.serve_forever()))
                else:
                    tasks.append(asyncio.ensure_future(self._accept_loop(listener, room)))
            return tasks

        self._room_tasks = asyncio.run_coroutine_threadsafe(adopt(), self._loop).result(10)

    def settle(self, timeout: float = 5.0) -> None:
        """Wait until the room's connections in flight are served (call after the room's processes
        have ended: each then reads to its end), so what was sent before the end reaches the run's
        route."""
        if self._loop is None or self._loop.is_closed():
            return

        async def wait() -> None:
            pending = [t for t in self._room_conns if not t.done()]
            if pending:
                await asyncio.wait(pending, timeout=timeout)
        try:
            asyncio.run_coroutine_threadsafe(wait(), self._loop).result(timeout + 1)
        except Exception:  # noqa: BLE001 - a connection still open after the timeout is cut by close()
            pass

    def close_room(self) -> None:
        """Stop accepting the room's connections (its listeners are closed by the room)."""
        tasks = getattr(self, "_room_tasks", [])
        if tasks and self._loop is not None and not self._loop.is_closed():
            async def stop() -> None:
                for t in tasks:
                    t.cancel()
                await asyncio.wait(tasks, timeout=2)
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(5)
        self._room_tasks = []

    async def _accept_loop(self, listener: Any, room: Any) -> None:
        loop = asyncio.get_running_loop()
        while True:
            conn, _ = await loop.sock_accept(listener)
            task = asyncio.ensure_future(serve_transparent(
                conn, room, self.ca, self.idle_timeout, self._serve, self._failed,
                max_body=MAX_BODY))
            self._tasks.add(task)
            self._room_conns.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(self._room_conns.discard)

    async def _tunnel(self, conn: h11.Connection, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter,
                      target: str, headers: list[tuple[str, str]]) -> None:
        import h11
        host, _, port = target.rpartition(":")
        host = normal_host(host.strip("[]"))
        if not host or not port.isdigit():
            await self._refuse(conn, writer, 400, f"CONNECT target {target!r} is not host:port")
            return
        authority = host if port == "443" else f"{host}:{port}"
        headers = [(k, v) for k, v in headers if k.lower() not in HOP_HEADERS]
        writer.write(conn.send(h11.Response(status_code=200, headers=[],
                                            reason=b"Connection Established")))
        await writer.drain()
        early, _ = conn.trailing_data
        # TLS bytes before our 200: cannot be replayed into TLS
        if early:
            self._failed(WireRequest("CONNECT", f"https://{authority}/", tuple(headers), None),
                         "client sent data before the tunnel was established")
            return
        try:
            await asyncio.wait_for(writer.start_tls(self.ca.context(host)), self.idle_timeout)
        except (ssl.SSLError, ConnectionError, OSError, asyncio.TimeoutError) as exc:
            # safeguard: proxy_records_failed_tunnels
            self._failed(WireRequest("CONNECT", f"https://{authority}/", tuple(headers), None),
                         f"TLS handshake failed ({type(exc).__name__}: {exc}); the process "
                         "does not trust "
                         "the run's CA (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, "
                         "CURL_CA_BUNDLE)")
            return
        await self._serve(reader, writer, "https", authority)

    async def _refuse(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int,
                      why: str) -> None:
        import h11
        body = json.dumps({"error": f"guardbench proxy: {why}"}).encode()
        try:
            writer.write(conn.send(h11.Response(status_code=status or 400, headers=[
                ("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                ("Connection", "close")])))
            writer.write(conn.send(h11.Data(data=body)))
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
        except (h11.LocalProtocolError, ConnectionError, OSError):
            pass


def _has_body(headers: list[tuple[str, str]]) -> bool:
    low = {k.lower() for k, _ in headers}
    return "content-length" in low or "transfer-encoding" in low

"""A room's connection to any port but the proxy's own: captured without the process's help.

The first bytes say what it is. A TLS ClientHello is terminated with a leaf, signed by the run's
CA, for the name the client sent in SNI (RFC 6066), or else for the name the room's DNS handed out
for the dialled address, or that address; plain HTTP is read with its Host header; bytes that are
neither are recorded as they came (method ``RAW``). A handshake the process refuses (it does not
trust the run's CA) is recorded as a ``CONNECT`` with no response. The requests inside are served
by the proxy (server.RecordingProxy), passed in as ``serve``; failures go to its ``failed``.
"""
from __future__ import annotations

import asyncio
import socket
import ssl
from typing import Any, Awaitable, Callable

from guardbench.proxy.addresses import authority, authority_url, dialled, normal_host
from guardbench.records.record import WireRequest

# RecordingProxy._serve: (reader, writer, scheme, authority, room=, dialled=)
Serve = Callable[..., Awaitable[None]]
Failed = Callable[[WireRequest, str], None]


async def serve_transparent(sock: socket.socket, room: Any, ca: Any, idle_timeout: float,
                            serve: Serve, failed: Failed, *, max_body: int) -> None:
    """Serve one connection accepted on a room's captured port, then close it (of bytes that are
    neither TLS nor HTTP, at most ``max_body`` are recorded)."""
    loop = asyncio.get_running_loop()
    ip, port = dialled(sock)
    host = room.resolver.by_address.get(ip, ip)
    writer = None
    try:
        first = await peek(sock, idle_timeout)
        sni: list[str] = []
        ctx = None
        if first[:1] == b"\x16":               # a TLS ClientHello: terminate it
            ctx = ca.context(host)
            ctx.sni_callback = lambda obj, name, _ctx: pick_leaf(ca, obj, name, sni)
        reader = asyncio.StreamReader(limit=1 << 16)
        protocol = asyncio.StreamReaderProtocol(reader)
        try:
            transport, _ = await loop.connect_accepted_socket(
                lambda: protocol, sock, ssl=ctx, ssl_handshake_timeout=idle_timeout
                if ctx else None)
        except (ssl.SSLError, ConnectionError, OSError, asyncio.TimeoutError) as exc:
            name = normal_host(sni[0] if sni else host)
            failed(WireRequest("CONNECT", authority_url("https", name, port), (), None),
                   f"TLS handshake failed ({type(exc).__name__}: {exc}); the process "
                   "does not trust "
                   "the run's CA")
            return
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        if ctx is not None:
            name = normal_host(sni[0] if sni else host)
            await serve(reader, writer, "https", authority("https", name, port), room=True)
        elif looks_like_http(first):
            await serve(reader, writer, "http", None, room=True,
                        dialled=authority("http", host, port))
        else:
            data = await asyncio.wait_for(reader.read(max_body), idle_timeout)
            failed(WireRequest("RAW", authority_url("tcp", normal_host(host), port), (),
                               data.decode("utf-8", "replace")),
                   "bytes that are neither TLS nor HTTP")
    except (asyncio.CancelledError, ConnectionError, asyncio.TimeoutError,
            ssl.SSLError, OSError):
        pass
    finally:
        if writer is not None:
            writer.close()
        else:
            sock.close()


async def peek(sock: socket.socket, timeout: float) -> bytes:
    """The connection's first bytes (up to 8), left in the socket for whoever reads it next."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)
    loop.add_reader(sock.fileno(), wake)
    try:
        await asyncio.wait_for(ready, timeout)
    finally:
        loop.remove_reader(sock.fileno())
    return sock.recv(8, socket.MSG_PEEK)


def pick_leaf(ca: Any, sslobj: Any, name: str | None, seen: list[str]) -> None:
    """SNI callback: answer with a leaf for the name the client asked for (noted in ``seen``)."""
    if name:
        seen.append(name)
        sslobj.context = ca.context(normal_host(name))


def looks_like_http(first: bytes) -> bool:
    """The first bytes begin an HTTP request line (an upper-case method and a space)."""
    return first.split(b" ", 1)[0].isalpha() and first[:1].isupper()

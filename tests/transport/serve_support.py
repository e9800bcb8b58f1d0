"""`sandbox serve`'s server in a thread of the test process, recording to a file in tmp_path, and the raw
socket client the tests talk to it with."""
from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

from guardbench.transport.http_server import make_server


@contextlib.contextmanager
def served(tmp_path: Path, **options) -> Iterator[tuple[object, Path]]:
    """(server, record file) while the server runs; shut down, closed and its record flushed after."""
    record = tmp_path / "wire.jsonl"
    srv = make_server(0, record=str(record), **options)
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    srv.serving_thread = th                  # type: ignore[attr-defined] # ends when the server stops serving
    th.start()
    try:
        yield srv, record
    finally:
        srv.shutdown()
        srv.server_close()
        srv.recorder.close()


def connect(srv) -> socket.socket:
    return socket.create_connection(("127.0.0.1", srv.server_address[1]), timeout=10)


def read_response(sock) -> tuple[int, dict, bytes]:
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {buf!r}")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
    n = int(headers.get("content-length", 0))
    while len(rest) < n:
        rest += sock.recv(65536)
    return status, headers, rest[:n]

"""`sandbox serve`'s server in a thread of the test process, recording to a file in tmp_path."""
from __future__ import annotations

import contextlib
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
    th.start()
    try:
        yield srv, record
    finally:
        srv.shutdown()
        srv.server_close()
        srv.recorder.close()

"""`guardbench sandbox serve`: the PayPal stand-in over real HTTP on 127.0.0.1, recording.

Each exchange is appended to the record file as one JSON line (WireExchange.to_dict()),
flushed per line; an existing file is appended to, never truncated. Requests addressed (via
the loopback transport's X-Guardbench-Original-Host) to a host other than PayPal's are
recorded and answered 200 {"received": true}; a request without that header is taken as
addressed to the PayPal sandbox.
"""
from __future__ import annotations

import click

BIND_HOSTS = ("127.0.0.1",)
# Headers the HTTP hop adds, not part of the request as it was addressed.
_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding",
        "x-guardbench-original-host", "x-guardbench-original-scheme"}


@click.group()
def sandbox():
    """The PayPal stand-in, served over HTTP on 127.0.0.1."""


def make_server(port: int = 0, host: str = "127.0.0.1", record: str | None = None, seed: str = "0",
                run_id: str = "sandbox"):
    """A ThreadingHTTPServer serving a fresh stand-in (not started). Returns (server, sink)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from urllib.parse import urlsplit

    from guardbench.paypal.endpoints import SANDBOX_HOST
    from guardbench.paypal.standin import PayPalStandIn
    from guardbench.records import WireRequest
    from guardbench.transport.recording import JsonlSink, RecordingTransport
    from guardbench.transport.standin import StandInTransport

    if host not in BIND_HOSTS:
        raise ValueError(f"sandbox serve binds to 127.0.0.1 only, not {host!r}")
    sink = JsonlSink(record) if record else None
    transport = RecordingTransport(StandInTransport(PayPalStandIn(seed=seed)), run_id=run_id, sink=sink)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "guardbench-standin"
        sys_version = ""

        def _serve(self):
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                self.send_error(400, "bad Content-Length")
                return
            raw = self.rfile.read(length) if length > 0 else None
            orig = self.headers.get("X-Guardbench-Original-Host") or SANDBOX_HOST
            scheme = self.headers.get("X-Guardbench-Original-Scheme") or "https"
            target = self.path
            if not target.startswith("/"):  # absolute form, as a client using us as its proxy sends
                parts = urlsplit(target)
                scheme, orig = parts.scheme or scheme, parts.netloc or orig
                target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            headers = tuple((k, v) for k, v in self.headers.items() if k.lower() not in _HOP)
            body = raw.decode("utf-8", errors="replace") if raw is not None else None
            request = WireRequest(self.command, f"{scheme}://{orig}{target}", headers, body)
            with lock:
                response = transport.send(request)
            data = response.body.encode("utf-8")
            self.send_response(response.status)
            for k, v in response.headers:
                if k.lower() not in ("content-length", "connection"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if data and self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

        def log_message(self, format, *args):  # quiet: the record file is the log
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    server.transport = transport
    return server, sink


@sandbox.command()
@click.option("--port", type=click.IntRange(0, 65535), required=True, help="Port (0: pick a free one).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address (127.0.0.1 only).")
@click.option("--record", type=click.Path(dir_okay=False), default=None,
              help="Append each exchange to this JSONL file.")
@click.option("--seed", default="0", show_default=True, help="Seed for the stand-in's ids.")
@click.pass_context
def serve(ctx, port, host, record, seed):
    """Serve the PayPal stand-in on http://127.0.0.1:PORT until Ctrl-C."""
    import signal

    if host not in BIND_HOSTS:
        click.echo(f"error: sandbox serve: binds to 127.0.0.1 only, not {host}", err=True)
        ctx.exit(2)
    try:
        server, sink = make_server(port, host, record, seed)
    except OSError as exc:
        click.echo(f"error: sandbox serve: {exc}", err=True)
        ctx.exit(2)

    def _stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)     # also when started with SIGINT ignored (a background job)
    bound = server.server_address[1]
    where = f"recording to {record}" if record else "not recording"
    click.echo(f"serving PayPal stand-in on http://127.0.0.1:{bound} ({where})")
    import sys
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if sink is not None:
            sink.close()
    click.echo(f"stopped ({len(server.transport.exchanges)} exchanges)")

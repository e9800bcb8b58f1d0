"""`guardbench sandbox serve`: the PayPal stand-in over real HTTP on 127.0.0.1, recording.

Each exchange is appended to the record file as one JSON line (WireExchange.to_dict()) as it
happens, flushed per line; an existing file is appended to, never truncated. The server itself
is guardbench/transport/http_server.py.
"""
from __future__ import annotations

import click


@click.group()
def sandbox():
    """The PayPal stand-in, served over HTTP on 127.0.0.1."""


@sandbox.command()
@click.option("--port", type=click.IntRange(0, 65535), required=True, help="Port (0: pick a free one).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address (127.0.0.1 only).")
@click.option("--record", type=click.Path(dir_okay=False), default=None,
              help="Append each exchange to this JSONL file.")
@click.option("--seed", default="0", show_default=True, help="Seed for the stand-in's ids.")
@click.option("--max-connections", type=click.IntRange(1, 10000), default=64, show_default=True,
              help="Connections served at once (more wait to be accepted).")
@click.option("--idle-timeout", type=click.FloatRange(0.1, 3600), default=15.0, show_default=True,
              help="Seconds before an idle connection is closed.")
@click.option("--specs-dir", type=click.Path(file_okay=False), default=None,
              help="Folder holding PayPal's pinned documents (default: $GUARDBENCH_SPECS_DIR, "
                   "../shared/specs/paypal, then the cache).")
@click.pass_context
def serve(ctx, port, host, record, seed, max_connections, idle_timeout, specs_dir):
    """Serve the PayPal stand-in on http://127.0.0.1:PORT until Ctrl-C."""
    import signal
    import sys

    from guardbench.transport.http_server import BIND_HOSTS, make_server

    if host not in BIND_HOSTS:
        click.echo(f"error: sandbox serve: binds to 127.0.0.1 only, not {host}", err=True)
        ctx.exit(2)
    try:
        server = make_server(port, host, record, seed, max_connections=max_connections,
                             idle_timeout=idle_timeout, specs_dir=specs_dir)
    except OSError as exc:                  # the port is taken, the record file cannot be opened
        click.echo(f"error: {exc.filename or 'sandbox serve'}: {exc.strerror or exc}", err=True)
        ctx.exit(2)

    if server.recorder.torn:
        click.echo(f"note: {record}: its last line was torn ({server.recorder.torn} bytes, a server stopped "
                   "mid-write): cut off, the whole lines before it kept", err=True)

    def _stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)     # also when started with SIGINT ignored (a background job)
    bound = server.server_address[1]
    where = f"recording to {record}" if record else "not recording"
    click.echo(f"serving PayPal stand-in on http://127.0.0.1:{bound} ({where})")
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.recorder.close()
    if server.recorder.failed is not None:
        click.echo(f"error: {server.recorder.failed}; the server stopped, {server.recorder.count} exchanges "
                   "recorded before it are intact", err=True)
        ctx.exit(2)
    click.echo(f"stopped ({server.recorder.count} exchanges)")

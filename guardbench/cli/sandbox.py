"""`guardbench sandbox serve`: the PayPal stand-in over real HTTP on 127.0.0.1, recording.

Each exchange is appended to the record file as one JSON line (WireExchange.to_dict()) as it
happens, flushed per line; an existing file is appended to, never truncated. The server itself
is guardbench/transport/http_server.py.

SIGTERM and SIGINT (Ctrl-C) stop it cleanly: the server runs in a thread of its own, and the main
thread sleeps in a read on a pipe that the signal wakes (``signal.set_wakeup_fd``: the interpreter's
C handler writes the signal's number to it); the Python-level handlers do nothing. So no exception
is ever raised wherever the main thread happens to be (a KeyboardInterrupt raised inside a lock's
``with`` or a thread's start could leave a lock held and the process hung, or escape the clean
stop); the main thread then shuts the server down, closes it and its record, and says so.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import click

from guardbench.cli.finite import Finite


@click.group()
def sandbox() -> None:
    """The PayPal stand-in, served over HTTP on 127.0.0.1."""


class _ServeCommand(click.Command):
    """`sandbox serve`, whose --help ends with the client it accepts (read from the stand-in's
    constants only when help is asked for: the stand-in is not imported to build the command
    line)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET
        formatter.write_paragraph()
        formatter.write_text("It accepts one client (the same id and secret are printed "
                             "when it starts):")
        for line in (f"client id:     {BENCH_CLIENT_ID}", f"client secret: {BENCH_CLIENT_SECRET}"):
            # whole: copied from here
            formatter.write(" " * (formatter.current_indent + 2) + line + "\n")
        super().format_epilog(ctx, formatter)


@sandbox.command(cls=_ServeCommand)
@click.option("--port", type=click.IntRange(0, 65535), required=True,
              help="Port (0: pick a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Bind address (127.0.0.1 only).")
@click.option("--record", type=click.Path(dir_okay=False), default=None,
              help="Append each exchange to this JSONL file.")
@click.option("--seed", default="0", show_default=True, help="Seed for the stand-in's ids.")
@click.option("--max-connections", type=click.IntRange(1, 10000), default=64, show_default=True,
              help="Connections served at once (more wait to be accepted).")
@click.option("--idle-timeout", type=Finite(0.1, 3600), default=15.0, show_default=True,
              help="Seconds before an idle connection is closed.")
@click.option("--specs-dir", type=click.Path(file_okay=False), default=None,
              help="Folder holding PayPal's pinned documents (default: $GUARDBENCH_SPECS_DIR, "
                   "../shared/specs/paypal, then the cache).")
@click.pass_context
def serve(ctx: click.Context, port: int, host: str, record: str | None, seed: str,
          max_connections: int,
          idle_timeout: float, specs_dir: str | None) -> None:
    """Serve the PayPal stand-in on http://127.0.0.1:PORT until Ctrl-C (or SIGTERM).

    Ask for a token at POST /v1/oauth2/token with the client id and secret below (HTTP basic auth),
    as with PayPal's sandbox; they are guardbench/paypal/standin.py's BENCH_CLIENT_ID and
    BENCH_CLIENT_SECRET.
    """
    from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET
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
        click.echo(f"note: {record}: its last line was torn ({server.recorder.torn} bytes, a "
                   "server stopped "
                   "mid-write): cut off, the whole lines before it kept", err=True)

    bound = server.server_address[1]
    where = f"recording to {record}" if record else "not recording"
    # until the end: a second signal while stopping changes nothing
    with _stop_signals() as wake:
        serving = threading.Thread(target=_serve, args=(server, wake),
                                   name="sandbox-serve", daemon=True)
        serving.start()
        # one write: a reader of the first line finds the client it accepts right after it
        click.echo(f"serving PayPal stand-in on http://127.0.0.1:{bound} ({where})\n"
                   f"client id:     {BENCH_CLIENT_ID}\nclient secret: {BENCH_CLIENT_SECRET}")
        sys.stdout.flush()
        try:
            # SIGTERM, SIGINT, or the server stopped by itself (its record failed)
            wake.until_woken()
        finally:
            # returns once serve_forever has (at once if it already has)
            server.shutdown()
            serving.join()
            server.server_close()
            server.recorder.close()
        if server.recorder.failed is not None:
            click.echo(f"error: {server.recorder.failed}; the server stopped, "
                       f"{server.recorder.count} exchanges "
                       "recorded before it are intact", err=True)
            ctx.exit(2)
        click.echo(f"stopped ({server.recorder.count} exchanges)")


class _Wake:
    """A pipe the main thread sleeps on: a signal (through the wakeup fd) or the serving thread
    writes to it, never a lock, so a signal can arrive at any moment."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)

    def wake(self) -> None:
        with contextlib.suppress(OSError):       # full (already woken) or closed (already stopped)
            os.write(self.write_fd, b"\0")

    def until_woken(self) -> None:
        # retried across signals (PEP 475); returns once written to
        os.read(self.read_fd, 1)


@contextlib.contextmanager
def _stop_signals() -> Iterator[_Wake]:
    """SIGTERM and SIGINT wake the returned pipe instead of raising; the previous handlers and
    wakeup fd are restored after."""
    wake = _Wake()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    old_fd = signal.set_wakeup_fd(wake.write_fd, warn_on_full_buffer=False)

    def ignore(signum: int, frame: Any) -> None:  # the C handler already wrote to the pipe
        return None

    try:
        # SIGINT too when started with it ignored (a background job)
        for sig in previous:
            signal.signal(sig, ignore)
        yield wake
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(old_fd)
        os.close(wake.read_fd)
        os.close(wake.write_fd)


def _serve(server: Any, wake: _Wake) -> None:
    """The serving thread: serve until shut down, then wake the main thread (the server may have
    stopped by itself, when its record file could not be written)."""
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        wake.wake()

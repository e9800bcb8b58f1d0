"""guardbench mcp: guardbench's defences as MCP servers, for any MCP client (docs/external.md).

``mcp serve --defence NAME``: the PayPal toolkit tools behind that defence; ``mcp serve --broker``:
the broker's two tools (list_payment_operations, run_payment_operation); ``mcp front --defence NAME
-- COMMAND ...``: that defence in front of another MCP server (e.g. PayPal's own), its tools passed
through. Over stdio (default) or streamable HTTP on 127.0.0.1 (``--transport http --port N``,
path /mcp). PayPal is reached through ``PAYPAL_API_BASE`` (a base URL on 127.0.0.1) or else the
sandbox host through HTTPS_PROXY; credentials from PAYPAL_CLIENT_ID / PAYPAL_CLIENT_SECRET.
The ``mcp`` extra must be installed.
"""
from __future__ import annotations

import click

from guardbench.cli.finite import Finite
from guardbench.errors import GuardbenchError


def _need_sdk() -> None:
    from guardbench.util.extras import require
    require("mcp", "mcp", what="guardbench mcp")


_transport = click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
                          show_default=True,
                          help="stdio, or streamable HTTP on 127.0.0.1 (path /mcp).")
_port = click.option("--port", type=click.IntRange(1, 65535), default=None,
                     help="Port for --transport http.")
_policy = click.option("--policy", "policy_path", type=click.Path(dir_okay=False), default=None,
                       help="Policy file (default: the example policy).")
_approvals = click.option("--approvals", type=click.Choice(["none", "all"]), default="none",
                          show_default=True,
                          help="How held calls are answered (an operator client can also "
                          "answer each).")


@click.group("mcp")
def mcp() -> None:
    """guardbench's defences and broker as MCP servers."""


def _check_port(transport: str, port: int | None) -> None:
    if transport == "http" and port is None:
        raise GuardbenchError("--port", "--transport http needs --port")
    if transport == "stdio" and port is not None:
        raise GuardbenchError("--port", "only with --transport http")


ENVIRONMENT = ("PAYPAL_CLIENT_ID", "PAYPAL_CLIENT_SECRET", "PAYPAL_API_BASE")


def _check_environment(paypal_base: str | None) -> None:
    """What `mcp serve` needs from its environment, checked before it serves: one line naming what
    is missing."""
    import os
    env = os.environ
    missing = [v for v in ENVIRONMENT[:2] if not env.get(v)]
    proxied = any(env.get(v) for v in ("HTTPS_PROXY", "https_proxy"))
    if not (paypal_base or env.get("PAYPAL_API_BASE") or proxied):
        missing.append("PAYPAL_API_BASE")
    if missing:
        raise GuardbenchError("mcp serve", f"{' and '.join(missing)} not set in the environment "
                              "(see guardbench mcp "
                                           "serve --help; guardbench sandbox serve prints a "
                                           "client id, secret "
                                           "and base URL to use)")


@mcp.command("serve")
@click.option("--defence", default=None, help="A defence (guardbench defences lists them).")
@click.option("--broker", is_flag=True, help="The broker's two-tool surface instead of a defence.")
@_policy
@_approvals
@_transport
@_port
@click.option("--paypal-base", default=None, help="PayPal base URL on 127.0.0.1 (default: "
              "$PAYPAL_API_BASE, "
                                                  "else the sandbox host through HTTPS_PROXY).")
def serve(defence: str | None, broker: bool, policy_path: str | None, approvals: str,
          transport: str, port: int | None,
          paypal_base: str | None) -> None:
    """Serve a defence (PayPal toolkit tools behind it) or the broker over MCP.

    \b
    It needs in its environment:
      PAYPAL_CLIENT_ID, PAYPAL_CLIENT_SECRET  the PayPal app it acts for (with
          `guardbench sandbox serve`: the client id and secret it prints)
      PAYPAL_API_BASE  where PayPal is: a base URL on 127.0.0.1, e.g.
          http://127.0.0.1:PORT of `guardbench sandbox serve` (--paypal-base
          overrides it; without either, HTTPS_PROXY must be set: PayPal's
          sandbox host is then reached through that proxy)
    A missing one is a one-line error naming it (exit status 2).
    """
    _need_sdk()
    _check_port(transport, port)
    if bool(defence) == bool(broker):
        raise GuardbenchError("mcp serve", "name exactly one of --defence NAME or --broker")
    _check_environment(paypal_base)
    from guardbench.serve.backends import BrokerBackend, DefenceBackend, paypal_transport
    from guardbench.serve.mcp_server import serve as run
    from guardbench.transport.base import TransportError
    try:
        t = paypal_transport(paypal_base)
    except TransportError as exc:
        raise GuardbenchError("--paypal-base", str(exc)) from None
    # `not defence` never holds here (exactly one of the two was checked above); it narrows the type
    backend = (BrokerBackend(policy_path, t) if broker or not defence
               else DefenceBackend(defence, policy_path, approvals, t))
    run(backend, transport, port or 0)


@mcp.command("front", context_settings={"ignore_unknown_options": True})
@click.option("--defence", required=True, help="The defence to put in front (gate, pdp, ...).")
@_policy
@_approvals
@_transport
@_port
@click.option("--upstream-protocol", type=click.Choice(["legacy", "auto"]), default="legacy",
              show_default=True)
@click.option("--call-timeout", type=Finite(0.1, 3600), default=30.0, show_default=True,
              help="Seconds to wait for the upstream server's answer to one call.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def front(defence: str, policy_path: str | None, approvals: str, transport: str, port: int | None,
          upstream_protocol: str, call_timeout: float, command: tuple[str, ...]) -> None:
    """Put a defence in front of another MCP server started with COMMAND (after --)."""
    import os

    _need_sdk()
    _check_port(transport, port)
    from guardbench.mcp.client import Connection, ServerLost
    from guardbench.mcp.targets import StdioTarget
    from guardbench.serve.front import FrontBackend
    from guardbench.serve.mcp_server import serve as run
    env = {k: v for k, v in os.environ.items() if k != "GUARDBENCH_OPERATOR_KEY"}
    conn = Connection(StdioTarget(command[0], tuple(command[1:]), env, os.getcwd()),
                      connect_timeout=call_timeout,
                      call_timeout=call_timeout, mode=upstream_protocol, name="upstream")
    try:
        conn.open()
    except ServerLost as exc:
        raise GuardbenchError("mcp front", exc.one_line()) from None
    try:
        run(FrontBackend(defence, conn, policy_path, approvals), transport, port or 0)
    finally:
        conn.close()

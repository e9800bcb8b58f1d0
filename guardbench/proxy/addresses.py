"""Where a request captured by the proxy went, named as PayPal's edge would read it.

The host and URL a request is recorded under: host names normalised (case, trailing dot, IDNA,
an IPv4 address mapped into IPv6), default ports dropped, and the authority of an address a
process in a room dialled (server.py and transparent.py record under these names).
"""
from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit


def drop_default_port(url: str) -> str:
    """``url`` without its port when that is its scheme's default (443 for https, 80 for http)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return url
    if (parts.scheme, port) in (("https", 443), ("http", 80)):
        netloc = parts.netloc.rsplit(":", 1)[0]
        return parts._replace(netloc=netloc).geturl()
    return url


def normal_host(host: str) -> str:
    """A host name as PayPal's edge reads it: lower case, no trailing dot, IDNA (punycode) for
    non-ASCII labels; an IPv4 address mapped into IPv6 as the IPv4 address."""
    host = host.strip().rstrip(".").lower()
    if host.startswith("::ffff:") and "." in host:
        host = host[7:]
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    return host


def normal_url(url: str) -> str:
    """``url`` with its host normalised (normal_host); unchanged when it already was."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return url
    norm = normal_host(host)
    if norm == host and not parts.netloc.split("@")[-1].rsplit(":", 1)[0].endswith("."):
        return url
    netloc = f"[{norm}]" if ":" in norm else norm
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def dialled(sock: socket.socket) -> tuple[str, int]:
    """The address and port an accepted connection was made to (in a room, any address lands)."""
    name = sock.getsockname()
    return normal_host(name[0]), int(name[1])


def authority(scheme: str, host: str, port: int) -> str:
    """``host[:port]``, the port left out when it is the scheme's default; IPv6 in brackets."""
    default = {"https": 443, "http": 80}.get(scheme)
    host = f"[{host}]" if ":" in host else host
    return host if port == default else f"{host}:{port}"


def authority_url(scheme: str, host: str, port: int) -> str:
    """The root URL of ``host`` on ``port`` (for a connection with no request in it)."""
    return f"{scheme}://{authority(scheme, host, port)}/"

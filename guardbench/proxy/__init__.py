"""Capture another process's PayPal traffic without changing the process.

- ``ca.RunCA``: a certificate authority generated at run time (never written anywhere but the
  run's own temporary folder), and per-host leaf certificates it signs;
- ``server.RecordingProxy``: a forward proxy on 127.0.0.1 that the process reaches through the
  standard ``HTTPS_PROXY``/``HTTP_PROXY`` variables (CONNECT tunnels answered with TLS from the
  run's CA, and absolute-form requests), and that also serves origin-form requests as a base URL
  (a program's own base-URL override). Every exchange goes through the run's RecordingTransport,
  so the records are the same as in process: PayPal's hosts are answered by the stand-in, any
  other host like an attacker's server that accepts whatever it is sent;
- ``transparent.serve_transparent``: a room's connection to any other port (TLS terminated for
  the name in SNI, plain HTTP by its Host header, other bytes recorded as they came);
- ``addresses``: the host and URL a request is recorded under, as PayPal's edge reads them.

Sits beside transport/: imports transport/, paypal/ and records only. ``cryptography`` and ``h11``
are imported when a proxy is built (the ``mcp`` extra).
"""

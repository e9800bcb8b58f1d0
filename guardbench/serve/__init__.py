"""guardbench's own defences as MCP servers (the official ``mcp`` SDK, imported lazily).

- backends.DefenceBackend: the PayPal toolkit tools (paypal/toolkit.py) behind a defence, the same
  enforcement point as the defended arms (arms/defended.Layer);
- backends.BrokerBackend: the broker's two-tool surface (list_payment_operations,
  run_payment_operation), the same broker as the guardrail arm;
- front.FrontBackend: a defence in front of another MCP server (PayPal's own), its tools passed
  through unchanged and each call judged in the toolkit's vocabulary (vocab.py) before it is
  forwarded;
- mcp_server: any backend served over stdio or streamable HTTP, with guardbench's operator tools
  (operator.py) when the process was given an operator key.

Sits above arms/ (cli -> serve -> arms): it reuses the arms' enforcement points.
"""

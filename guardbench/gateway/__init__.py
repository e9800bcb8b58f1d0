"""The model gateway: guardbench serves an application under test its model (OpenAI's chat
completions, Anthropic's messages), answered by the run's model (a scripted agent, or a relay to
``--model``) and recorded in the run (docs/external.md, "The model gateway")."""
from guardbench.gateway.server import Gateway

# the gateway's port inside a room (a listener the room makes: Room(tcp_ports=...))
GATEWAY_PORT = 4000

__all__ = ["GATEWAY_PORT", "Gateway"]

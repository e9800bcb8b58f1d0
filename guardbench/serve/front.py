"""A guardbench defence in front of another MCP server (``guardbench mcp front --defence NAME --
CMD``).

The front is an MCP server whose tools are the upstream server's own (names, descriptions and
input schemas passed through unchanged) and an MCP client of that upstream (mcp/client.py). Each
call is read in the toolkit's vocabulary (vocab.py) and decided by the defence through the same
enforcement point as the defended arms (arms/defended.Layer: deny, hold and the operator's
answer, replay, observe); only an allowed call is forwarded, exactly as the agent sent it. A
verdict that would change the call (modify) is refused: the front cannot rewrite PayPal's
vocabulary back, so it fails closed. The upstream's read tools outside the mapping (vocab.is_read:
``list_transactions``, ``list_disputes``, ``show_subscription_details``...) are reads to the
defence: the gate passes them through, the pdp denies what the operator's policy does not list; any
other tool the mapping does not know is denied. The idempotency key the layer issues per call cannot
reach PayPal (the upstream's tools have no field for it): it is a promise the front can keep only
within its own replay record.

The upstream is started once with the front's own environment (the proxy, the CA, the token);
if it crashes or hangs the front writes its stderr and exits, so the bench records a lost run
rather than a refusal.
"""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Mapping

from guardbench.serve import vocab
from guardbench.serve.backends import Tally, run_answer, server_approvals

if TYPE_CHECKING:
    from guardbench.mcp.client import Connection
    from guardbench.paypal.toolkit import ToolRun


class _Upstream:
    """The layer's tool kit: forwards the agent's own PayPal call to the upstream server."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        # (PayPal name, args, read as, read args)
        self.pending: tuple[str, Any, Any, Any] | None = None
        self.last_error = False

    def run(self, name: Any, args: Any, idempotency_key: str | None = None) -> ToolRun:
        from guardbench.mcp.client import ServerLost
        from guardbench.paypal.toolkit import TOOLS, ToolRun, issued_refs
        pending = self.pending
        if pending is None or (name, args) != (pending[2], pending[3]):
            self.last_error = True
            return ToolRun("invalid", json.dumps({"error": "the defence changed the call; the "
                                                  "front cannot "
                                                           "forward a changed call, so "
                                                           "nothing was sent"}))
        try:
            r = self.connection.call(pending[0], pending[1])
        except ServerLost as exc:
            sys.stderr.write(f"guardbench mcp front: upstream lost: {exc.reason}\n{exc.stderr}\n")
            sys.stderr.flush()
            os._exit(3)
        self.last_error = r.is_error
        outcome = vocab.outcome(r.text, r.is_error)
        spec = TOOLS.get(name) if isinstance(name, str) else None
        refs = (issued_refs(spec.endpoint, vocab.upstream_body(r.text)) if spec and outcome
                == "ok" else {})
        return ToolRun(outcome, r.text, refs)


class FrontBackend:
    def __init__(self, defence: str, connection: Connection, policy: str | None = None,
                 approvals: str = "none") -> None:
        from guardbench.errors import GuardbenchError
        from guardbench.registry import defence_names
        if defence not in defence_names():
            raise GuardbenchError("--defence", f"unknown defence {defence!r} (installed: "
                                  f"{', '.join(defence_names())})")
        self.defence_name, self.policy = defence, policy
        self.approvals = server_approvals(approvals)
        self.connection = connection
        self.kit = _Upstream(connection)
        self.name = f"guardbench-{defence}-front"
        self.begin({})

    def begin(self, params: Mapping[str, Any], eager_token: bool = True) -> str:
        from guardbench.arms.approver import make_approver
        from guardbench.arms.defended import Layer
        from guardbench.broker import load_policy
        from guardbench.defences.config import config_for, with_reads
        from guardbench.execution.world import STANDIN
        from guardbench.registry import make_defence
        policy = load_policy(params.get("policy") or self.policy)
        # the upstream's reads outside the mapping are reads to the defence, not unknown tools
        # (vocab.is_read)
        config = with_reads(config_for(policy),
                            vocab.upstream_reads(t.name for t in self.connection.tools))
        self.tally = Tally()
        seed = params.get("seed", 0)
        self.layer = Layer(make_defence(self.defence_name, config), self.kit, config, None,
                           str(params.get("user_message") or ""), None,
                           make_approver(server_approvals(params.get("approvals",
                                                                     self.approvals)), config),
                           self.tally, STANDIN.seeded_refs(),
                           str(params.get("session") or f"gb-{seed}"),
                           f"{self.defence_name}-agent")
        return "ok"

    def context(self, user_message: str) -> None:
        self.layer.user = user_message

    def tools(self) -> list[tuple[str, str, Mapping[str, Any]]]:
        return [(t.name, t.description, t.input_schema) for t in self.connection.tools]

    def call(self, name: str, args: Any) -> tuple[str, bool]:
        tool, targs = vocab.to_toolkit(name, args)
        self.kit.pending, self.kit.last_error = (name, args, tool, targs), False
        n = len(self.layer.history)
        text = self.layer.call(tool, targs)
        turn = self.layer.history[n] if len(self.layer.history) > n else None
        return text, bool(turn and turn.verdict in ("deny", "rejected")) or self.kit.last_error

    def operator_call(self, tool: str, args: Mapping, answer: str, stand_in: str,
                      request_id: str) -> dict:
        from guardbench.arms.defended import operator_answer
        from guardbench.defences.base import ToolCall
        name, targs = vocab.to_toolkit(tool, dict(args))
        self.kit.pending = (tool, dict(args), name, targs)
        approvals: list[str] = []
        if answer in ("approve", "reject"):
            run = operator_answer(self.layer, ToolCall(name, targs), answer, request_id,
                                  approvals, stand_in)
        else:
            run = self.kit.run(name, targs, request_id)
        return run_answer(self.layer.refs, run, approvals)

    def report(self) -> dict:
        return self.tally.report()

    def close(self) -> None:
        self.connection.close()

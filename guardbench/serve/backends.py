"""What a guardbench MCP server serves: a defence's enforcement point, or the broker.

Both reach PayPal the way any program would: ``PAYPAL_API_BASE`` (a base URL on 127.0.0.1, e.g.
the MCP arm's recording proxy or ``guardbench sandbox serve``), else PayPal's sandbox host over
HTTPS through whatever ``HTTPS_PROXY``/``SSL_CERT_FILE`` say (transport/sandbox.py, which sends to
that one host only). Credentials come from ``PAYPAL_CLIENT_ID``/``PAYPAL_CLIENT_SECRET`` in the
server's environment, never from the agent.

``call`` is the agent's surface; ``begin``/``context``/``operator_call``/``report`` are the
operator's (serve/operator.py). Each backend is used from one thread at a time (the MCP server
holds a lock).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

from guardbench.errors import GuardbenchError
from guardbench.records.record import Attempt
from guardbench.transport.base import Transport

if TYPE_CHECKING:
    from guardbench.paypal.toolkit import ToolRun

BROKER_TOOLS = ("list_payment_operations", "run_payment_operation")


class Backend(Protocol):
    """What the MCP server (mcp_server.py) serves: the agent's tools and the operator's."""

    name: str

    def begin(self, params: Mapping[str, Any], eager_token: bool = True) -> str: ...
    def context(self, user_message: str) -> None: ...
    def tools(self) -> list[tuple[str, str, Mapping[str, Any]]]: ...
    def call(self, name: str, args: Any) -> tuple[str, bool]: ...
    def operator_call(self, tool: str, args: Mapping[str, Any], answer: str, stand_in: str,
                      request_id: str) -> dict[str, Any]: ...
    def report(self) -> dict[str, Any]: ...
    def close(self) -> None: ...


@dataclass
class Tally:
    """What the operator is told after a run (the arm's Prepared.attempts / approvals_asked)."""

    attempts: list[Attempt] = field(default_factory=list)
    approvals_asked: int = 0

    def report(self) -> dict:
        return {"attempts": [a.to_dict() for a in self.attempts],
                "approvals_asked": self.approvals_asked}


def paypal_transport(base_url: str | None = None) -> Transport:
    base = base_url or os.environ.get("PAYPAL_API_BASE")
    if base:
        from guardbench.transport.loopback import LoopbackTransport
        return LoopbackTransport(base)
    from guardbench.paypal.endpoints import SANDBOX_HOST
    from guardbench.transport.sandbox import SandboxTransport
    return SandboxTransport(SANDBOX_HOST)


def credentials_from_env() -> tuple[str, str]:
    cid, secret = os.environ.get("PAYPAL_CLIENT_ID", ""), os.environ.get("PAYPAL_CLIENT_SECRET", "")
    if not cid or not secret:
        raise GuardbenchError("mcp serve", "PAYPAL_CLIENT_ID and PAYPAL_CLIENT_SECRET must "
                              "be set in the "
                                           "server's environment (the PayPal app it acts for)")
    return cid, secret


def server_approvals(value: Any) -> str:
    if value not in ("none", "all"):
        raise GuardbenchError("operator_begin.approvals",
                              f"{value!r}: a server answers held calls with none or "
                                                          "all (careful needs the case, which "
                                                          "only the bench has)")
    return value


class DefenceBackend:
    """The PayPal toolkit tools behind a defence: arms/defended.Layer, served."""

    def __init__(self, defence: str, policy: str | None = None, approvals: str = "none",
                 transport: Transport | None = None) -> None:
        from guardbench.registry import defence_names
        if defence not in defence_names():
            raise GuardbenchError("--defence", f"unknown defence {defence!r} (installed: "
                                  f"{', '.join(defence_names())})")
        self.defence_name, self.policy = defence, policy
        self.approvals = server_approvals(approvals)
        self.transport = transport if transport is not None else paypal_transport()
        self.name = f"guardbench-{defence}"
        self.layer: Any = None
        self.begin({}, eager_token=False)

    def begin(self, params: Mapping[str, Any], eager_token: bool = True) -> str:
        """A new session. The operator's begin fetches the token at once (the first exchange of the
        run, as in the defended arm); a server started for any client fetches it at its first
        call."""
        from guardbench.arms.approver import make_approver
        from guardbench.arms.defended import Layer
        from guardbench.arms.world import API_BASE, fetch_token
        from guardbench.broker import load_policy
        from guardbench.defences.config import config_for
        from guardbench.execution.world import STANDIN
        from guardbench.paypal.toolkit import Toolkit
        from guardbench.registry import make_defence
        policy = load_policy(params.get("policy") or self.policy)
        approvals = server_approvals(params.get("approvals", self.approvals))
        config = config_for(policy)
        self.tally = Tally()
        self._token: str | None = None
        cid, secret = credentials_from_env()
        op = policy.operator

        backend = self

        class _LazyKit(Toolkit):
            """The toolkit fetches its token at the first call (not at begin: the run's wire is not
            routed yet)."""

            def run(self, name: str, args: Mapping[str, Any],
                    idempotency_key: str | None = None) -> ToolRun:
                if backend._token is None:
                    backend._token = fetch_token(backend.transport, cid, secret)
                self.token = backend._token
                return super().run(name, args, idempotency_key)

        kit = _LazyKit(self.transport.send, "", merchant_id=op["merchant_id"],
                       supplier_email=op["supplier_email"],
                       currency=op["currency"], api_base=API_BASE)
        seed = params.get("seed", 0)
        session = str(params.get("session") or f"gb-{seed}")
        if eager_token:
            self._token = fetch_token(self.transport, cid, secret)
        self.layer = Layer(make_defence(self.defence_name, config), kit, config, None,
                           str(params.get("user_message") or ""), None,
                           make_approver(approvals, config), self.tally,
                           STANDIN.seeded_refs(), session, f"{self.defence_name}-agent")
        return "ok"

    def context(self, user_message: str) -> None:
        self.layer.user = user_message

    def tools(self) -> list[tuple[str, str, Mapping[str, Any]]]:
        from guardbench.paypal.toolkit import TOOLS
        return [(s.name, s.description, s.parameters) for s in TOOLS.values()]

    def call(self, name: str, args: Any) -> tuple[str, bool]:
        n = len(self.layer.history)
        text = self.layer.call(name, args)
        turn = self.layer.history[n] if len(self.layer.history) > n else None
        return text, bool(turn and turn.verdict in ("deny", "rejected"))

    def operator_call(self, tool: str, args: Mapping, answer: str, stand_in: str,
                      request_id: str) -> dict:
        from guardbench.arms.defended import operator_answer
        from guardbench.defences.base import ToolCall
        approvals: list[str] = []
        if answer in ("approve", "reject"):
            run = operator_answer(self.layer, ToolCall(tool, dict(args)), answer, request_id,
                                  approvals, stand_in)
        else:
            run = self.layer.kit.run(tool, dict(args), request_id)
        return run_answer(self.layer.refs, run, approvals)

    def report(self) -> dict:
        return self.tally.report()

    def close(self) -> None:
        pass


def run_answer(refs: dict[str, list[str]], run: ToolRun | None,
               approvals: Sequence[str]) -> dict[str, Any]:
    """What a served call answers, keeping the references an executed call issued (for later
    steps)."""
    if run is not None and run.outcome == "ok":
        for kind, ids in run.refs.items():
            refs.setdefault(kind, []).extend(i for i in ids if i not in refs.get(kind, []))
    return {"sent": run is not None, "outcome": run.outcome if run else None, "text": run.text
            if run else None,
            "approval_id": approvals[-1] if approvals else None}


class BrokerBackend:
    """The broker's two tools, served: the guardrail arm's broker, with a fresh ledger per
    session."""

    def __init__(self, policy: str | None = None, transport: Transport | None = None) -> None:
        self.policy = policy
        self.transport = transport if transport is not None else paypal_transport()
        self.name = "guardbench-broker"
        self.broker: Any = None
        self._dir: str | None = None
        self.begin({})

    def begin(self, params: Mapping[str, Any], eager_token: bool = True) -> str:
        from pathlib import Path

        from guardbench.arms.guardrail import bench_clock
        from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, load_policy
        self.close()
        policy = load_policy(params.get("policy") or self.policy)
        cid, secret = credentials_from_env()
        self._dir = tempfile.mkdtemp(prefix="gb-mcp-broker-")
        wd = Path(self._dir)
        self.broker = Broker(policy, Ledger(wd / "ledger.jsonl"), ApprovalQueue(wd / "approvals"),
                             self.transport,
                             Credentials(cid, secret), clock=bench_clock())
        self.tally = Tally()
        return "ok"

    def context(self, user_message: str) -> None:
        # the broker decides on the operation and its values, not on the message
        pass

    def tools(self) -> list[tuple[str, str, Mapping[str, Any]]]:
        # the same two tools, descriptions and schemas as the in-process guardrail arm
        # (arms/prompts.py)
        from guardbench.arms import prompts
        from guardbench.arms.guardrail import run_parameters
        ops = self.broker.list_operations()
        prices = {sku: str(p) for sku, p in self.broker.policy.catalogue.items()}
        return [("list_payment_operations",
                 "List the payment operations you may run, with the parameters each accepts.",
                 {"type": "object", "properties": {}, "additionalProperties": False}),
                ("run_payment_operation", prompts.run_description(ops, prices),
                 run_parameters([o["name"] for o in ops]))]

    def call(self, name: str, args: Any) -> tuple[str, bool]:
        if name == "list_payment_operations":
            return json.dumps(self.broker.list_operations()), False
        if name != "run_payment_operation":
            return json.dumps({"error": "unknown_tool", "tool": str(name)[:80]}), True
        args = args if isinstance(args, Mapping) else {}
        op = args.get("operation")
        decision = self.broker.run_operation(op if isinstance(op, str) else "",
                                             args.get("params", {}),
                                             args.get("reference"))
        # classified as the in-process guardrail arm does (an invented name: the model's error)
        if decision.refused:
            from guardbench.arms.guardrail import refusal_status
            self.tally.attempts.append(Attempt("broker", str(op),
                                               refusal_status(self.broker.policy, op, decision),
                                               decision.reason))
        if decision.status == "pending_approval":
            self.tally.approvals_asked += 1
        return json.dumps(decision.to_dict(), default=str), decision.refused

    def operator_call(self, tool: str, args: Mapping, answer: str, stand_in: str,
                      request_id: str) -> dict:
        """The operator's setup call through the same broker (arms/guardrail.py's setup, served)."""
        if tool != "run_payment_operation":
            raise GuardbenchError("operator_call", "the broker's operator runs operations, "
                                  f"not {tool!r}")
        decision = self.broker.run_operation(str(args.get("operation", "")),
                                             args.get("params", {}) or {},
                                             args.get("reference"))
        approval = None
        if (decision.status == "pending_approval" and answer in ("approve", "reject")
            and decision.approval_id):
            approval = decision.approval_id
            if answer == "reject":
                self.broker.reject(approval)
                return {"sent": False, "outcome": None, "text": None, "approval_id": approval}
            decision = self.broker.approve(approval)
        elif answer == "approve" and decision.status == "executed":
            approval = stand_in
        elif answer == "reject":
            raise GuardbenchError("operator_call", f"reject follows a {args.get('operation')} the "
                                  "broker did not hold")
        return {"sent": True, "outcome": "ok" if decision.status == "executed" else decision.status,
                "text": json.dumps(decision.to_dict(), default=str), "approval_id": approval}

    def report(self) -> dict:
        return self.tally.report()

    def close(self) -> None:
        if self.broker is not None:
            try:
                self.broker.close()
            finally:
                self.broker = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

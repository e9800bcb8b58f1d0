"""Requests the code under test composes itself, captured from the wire.

* :func:`broker_probes` - a real :class:`guardbench.broker.Broker` over the shipped
  policy (or another), in a temporary folder, in front of a fresh stand-in through a
  RecordingTransport (as the guardrail arm builds it). Every operation of the policy is
  run once with values inside its declared ranges (and, where the policy asks for an
  operator's approval, once more above the threshold, approved by the operator), with the
  references the broker itself issued. Every request the broker sent is a probe, labelled
  by the operation, with the stand-in's response.
* :func:`control_probes` - the control arm with the careful scripted agent on the first
  variant of every benign case: the operator's set-up requests and the agent's requests,
  labelled, with the stand-in's responses.

The OAuth token call (``/v1/oauth2/token``) is not a probe: the pinned documents do not
describe it; it is counted instead. Nothing here imports openapi-core.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Sequence

from guardbench.broker.policy_model import Operation, Policy
from guardbench.cases.load import Case
from guardbench.conformance.probe import REJECT, VALID, Probe
from guardbench.paypal.endpoints import ENDPOINTS
from guardbench.paypal.leniency import leniency_for
from guardbench.records.wire import WireExchange

TOKEN_PATH = ENDPOINTS["oauth.token"].path
CLOCK_START = 1735689600.0
SEED = 20250101
NOTE = "Thank you for your order"


@dataclass
class Composed:
    """Probes from one source, and what was covered."""

    source: str
    probes: list[Probe] = field(default_factory=list)
    covered: dict[str, int] = field(default_factory=dict)   # operation / case -> requests sent
    wanted: list[str] = field(default_factory=list)  # every operation / case that should be covered
    token_calls: int = 0
    problems: list[str] = field(default_factory=list)  # what could not be driven, and why

    @property
    def missing(self) -> list[str]:
        return [w for w in self.wanted if not self.covered.get(w)]

    def to_dict(self) -> dict:
        return {"source": self.source, "wanted": len(self.wanted),
                "covered": [w for w in self.wanted if self.covered.get(w)], "missing": self.missing,
                "requests": len(self.probes), "token_calls": self.token_calls,
                "problems": self.problems}


class _Clock:
    """A deterministic clock: one second per reading, from 2025-01-01."""

    def __init__(self, start: float = CLOCK_START) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def _is_token(ex: WireExchange) -> bool:
    return ex.request.path == TOKEN_PATH


# --- the broker ---------------------------------------------------------------------------

# ids the stand-in's account holds (execution/world.STANDIN), for operations on them: an open EUR
# dispute (15.00), an active subscription, a draft invoice
ACCOUNT_PROBE_REFS = {"dispute": "PP-D-27805", "subscription": "I-BW452GLLEP1G",
                      "invoice": "INV2-6PLM-1QZR-8TYU-H5NS"}


def _params(policy: Policy, op: Operation, big: bool) -> dict[str, str]:
    """Values inside the operation's declared ranges; ``big``: the most expensive choice."""
    params: dict[str, str] = {}
    sku = None
    for name, f in op.agent.items():
        if f.type == "enum":
            values = list(f.values)
            priced = [v for v in values if v in policy.catalogue]
            if priced:
                values = sorted(priced, key=lambda v: policy.catalogue[v], reverse=big)
                sku = values[0]
            params[name] = values[0]
        elif f.type == "text":
            params[name] = NOTE[: f.max_length or len(NOTE)]
    dec = op.amount_field
    if dec is not None:
        if sku is not None:
            amount = policy.catalogue[sku]
        else:
            amount = (op.approval_over + Decimal("1.00")) if big and op.approval_over is not None \
                else Decimal("10.00")
        lo = dec.min if dec.min is not None else Decimal("0.01")
        hi = min(x for x in (dec.max, op.limits.get("per_call_max")) if x is not None)
        amount = max(lo, min(amount, hi))
        params[dec.name] = f"{amount:.2f}"
    return params


def broker_probes(policy: Policy | None = None, workdir: str | Path | None = None) -> Composed:
    """Every request a real broker sends for every operation of ``policy`` (default: the shipped
    one)."""
    from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, load_policy
    from guardbench.execution.world import STANDIN, make_wire

    policy = policy if policy is not None else load_policy()
    out = Composed("broker", wanted=list(policy.operations))
    issuer = {rf.issues: op for op in policy.operations.values() for rf in op.response if rf.issues}
    issued_field = {(op.name, rf.issues): rf.name for op in policy.operations.values()
                    for rf in op.response if rf.issues}
    with tempfile.TemporaryDirectory(prefix="gb-conformance-", dir=workdir) as tmp:
        recorder = make_wire(SEED, "conformance/broker")
        broker = Broker(policy, Ledger(Path(tmp) / "ledger.jsonl"),
                        ApprovalQueue(Path(tmp) / "approvals"),
                        recorder, Credentials(STANDIN.client_id, STANDIN.client_secret),
                        clock=_Clock())
        refs: dict[tuple[str, bool], str] = {(k, False): v for k, v in ACCOUNT_PROBE_REFS.items()}

        def obtain(kind: str, big: bool) -> str | None:
            if (kind, big) not in refs and kind in issuer:
                run(issuer[kind], big)
            return refs.get((kind, big))

        def run(op: Operation, big: bool) -> None:
            ref = obtain(op.reference, big) if op.reference else None
            if op.reference and ref is None:
                out.problems.append(f"{op.name}: no {op.reference} reference could be obtained")
                return
            before = len(recorder.exchanges)
            decision = broker.run_operation(op.name, _params(policy, op, big), ref)
            approved = False
            if decision.status == "pending_approval" and decision.approval_id:
                decision = broker.approve(decision.approval_id)
                approved = True
            label = (f"{op.name} [{op.endpoint.name}]" + (", larger amount" if big else "")
                     + (", above the approval threshold, approved by the operator"
                        if approved else ""))
            for ex in recorder.exchanges[before:]:
                if _is_token(ex):
                    out.token_calls += 1
                    continue
                # a body only a named leniency covers (accept-claim as JSON): the documents reject
                # it, PayPal (and the stand-in) accept it (paypal/leniency.py); the leniency is the
                # request's, not its endpoint's (a body with no null on an endpoint that has the
                # null leniency is valid)
                expect = REJECT if leniency_for(ex.request) is not None else VALID
                out.probes.append(Probe(label, ex.request, expect, "broker",
                                        f"decision: {decision.status}",
                                        ex.response, standin="accept"))
                out.covered[op.name] = out.covered.get(op.name, 0) + 1
            if decision.status != "executed":
                out.problems.append(f"{label}: broker decision {decision.status}: "
                                    f"{decision.reason}")
                return
            for (name, kind), fname in issued_field.items():
                if name == op.name and isinstance(decision.result.get(fname), str):
                    refs[(kind, big)] = decision.result[fname]

        for op in policy.operations.values():
            run(op, big=False)
        for op in policy.operations.values():
            # the account holds one open dispute in the operator's currency: accepted once, above,
            # it cannot be accepted again, so an operation on an id the account holds is probed once
            if op.approval_over is not None and op.reference not in ACCOUNT_PROBE_REFS:
                run(op, big=True)
    return out


# --- the control arm ----------------------------------------------------------------------

def control_probes(cases: Sequence[Case] | None = None, policy: Policy | None = None,
                   workdir: str | Path | None = None) -> Composed:
    """The control arm's requests (set-up and agent) for the first variant of every benign case."""
    from guardbench.agents.scripted import ScriptedAgent
    from guardbench.arms.control import ControlArm
    from guardbench.cases.load import load_cases
    from guardbench.execution.bench import arm_options
    from guardbench.execution.runner import RunSpec
    from guardbench.execution.world import build_world

    benign = [c for c in (cases if cases is not None else load_cases()) if c.family == "benign"]
    out = Composed("control_arm", wanted=[c.id for c in benign])
    arm, agent = ControlArm(arm_options(policy)), ScriptedAgent("careful")
    for case in benign:
        spec = RunSpec(case.id, 0, "control", "careful")
        with tempfile.TemporaryDirectory(prefix="gb-conformance-", dir=workdir) as tmp:
            prepared = arm.prepare(case, 0,
                                   build_world(arm, spec.world_seed, spec.run_id, "scripted", tmp))
            try:
                transcript = agent.run(prepared.session)
            finally:
                prepared.close()
        if transcript.status != "answered":
            out.problems.append(f"{case.id}: the careful agent ended {transcript.status}")
        for ex in prepared.recorder.exchanges:
            if _is_token(ex):
                out.token_calls += 1
                continue
            step = "set-up" if ex.seq < prepared.setup_seq else "agent"
            out.probes.append(Probe(f"{case.id} #{ex.seq} ({step})", ex.request,
                                    VALID, "control_arm",
                                    f"control arm, careful agent, variant 0, {step}", ex.response,
                                    standin="accept"))
            out.covered[case.id] = out.covered.get(case.id, 0) + 1
    return out

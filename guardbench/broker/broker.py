"""The payment operation broker: the only way the guardrail arm's agent reaches PayPal.

Agent-reachable: ``list_operations()`` and ``run_operation(operation, params, reference)``.
Operator-only: ``approve(approval_id)``, ``reject(approval_id)``, ``pending_approvals()``.

``run_operation`` in order: validate the parameters against the closed schema; check the
reference was issued by this broker; under the ledger lock, on a fresh verified read:
suppress a replay of the same instruction inside 60 s, check the limits (limits.py; a
capture counts its order's amount), ask for approval above the threshold (also when this
operation's un-approved spend of the last 24 h plus this amount goes above it), derive the
idempotency key and write a reservation; then outside the lock (dispatch.py) resolve the OAuth
token, compose the body (bound constants last), take host and path from the fixed endpoint
table, send, reduce the response to declared fields, and write the outcome. Every decision is
written to the ledger.
Every agent-visible answer is checked for the client secret, its Basic encoding and every
token held; one that carries any of them raises CredentialLeak instead of being returned.

Approvals are bound to what was asked: ``approve`` recomputes the digest of the approval's
operation, parameters and reference (keyed with the ledger's key when one is set) and goes
ahead only when the ledger created that approval with that digest and still has it pending;
the approval and every rejection are written to the ledger.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import time
from decimal import Decimal
from typing import Any, Callable, Mapping

from guardbench.broker.approvals import DIGEST_DOMAIN, ApprovalQueue, approval_payload
from guardbench.broker.credentials import Credentials, TokenSource
from guardbench.broker.dispatch import Dispatcher
from guardbench.broker.ledger import REPLAY_WINDOW, Ledger, LedgerCorrupt, Txn
from guardbench.broker.ledger_head import sorted_json
from guardbench.broker.limits import limit_breach
from guardbench.broker.money import fmt
from guardbench.broker.params import ParamRefusal, Validated, validate
from guardbench.broker.policy import Operation, Policy
from guardbench.broker.policy_model import ACCOUNT_REFERENCE_KINDS
from guardbench.errors import IntegrityError
from guardbench.paypal.endpoints import LIVE_HOST, REF_RE, SANDBOX_HOST
from guardbench.records.record import Decision
from guardbench.transport.base import Transport

STATUSES = ("executed", "pending_approval", "replay_suppressed", "operation_not_allowed",
            "parameter_not_allowed", "parameter_above_max", "parameter_below_min",
            "reference_unknown",
            "limit_exceeded", "ledger_corrupt", "upstream_rejected", "transport_error")
_OP_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_KIND_LABEL = {"order": "order_id", "capture": "capture_id", "payout_batch": "payout_batch_id",
               "dispute": "dispute_id", "subscription": "subscription_id", "invoice": "invoice_id"}


def _reference_text(kind: str) -> str:
    if kind in ACCOUNT_REFERENCE_KINDS:
        return f"the {_KIND_LABEL[kind]} as the account shows it"
    return f"the {_KIND_LABEL[kind]} this broker returned earlier"


class CredentialLeak(IntegrityError, RuntimeError):
    """An agent-visible answer carried the credential or a token; it was not returned."""


# json.dumps(payload, default=str), its encoder built once (json.dumps with arguments builds one
# per call)
_AS_TEXT = json.JSONEncoder(default=str).encode


def instruction_hash(operation: str, values: dict, reference: str | None) -> str:
    doc = {"op": operation, "params": dict(values), "ref": reference}
    return hashlib.sha256(sorted_json(doc).encode()).hexdigest()


class Broker:
    def __init__(self, policy: Policy, ledger: Ledger, approvals: ApprovalQueue,
                 transport: Transport, credentials: Credentials,
                 clock: Callable[[], float] = time.time, host: str = SANDBOX_HOST) -> None:
        # safeguard: broker_sandbox_host_pinned
        if policy.environment == "sandbox" and host != SANDBOX_HOST:
            raise ValueError(f"a sandbox policy sends only to {SANDBOX_HOST}")
        # safeguard: broker_live_opt_in
        if (policy.environment == "live"
            and (host != LIVE_HOST or os.environ.get("GUARDBENCH_ALLOW_LIVE") != "1")):
            raise ValueError(f"a live policy sends only to {LIVE_HOST}, with "
                             "GUARDBENCH_ALLOW_LIVE=1")
        self.policy, self.ledger = policy, ledger
        self.approvals, self.transport = approvals, transport
        self.clock, self.host = clock, host
        self._tokens = TokenSource(credentials, transport, host, clock)
        self._dispatch = Dispatcher(ledger, transport, self._tokens, clock, host,
                                    policy.catalogue_names)

    # ================================================================ agent-reachable
    def list_operations(self) -> list[dict]:
        out = []
        for op in self.policy.operations.values():
            d: dict[str, Any] = {"name": op.name, "description": op.description,
                                 "parameters": op.parameters_schema(),
                                 "moves_money": op.moves_money}
            if op.reference:
                d["reference"] = {"kind": op.reference, "required": True,
                                  "description": _reference_text(op.reference)}
            if op.approval_over is not None:
                d["approval_over"] = fmt(op.approval_over)
            out.append(d)
        self._check_visible(out)
        return out

    def run_operation(self, operation: Any, params: Any = None, reference: Any = None) -> Decision:
        return self._visible(self._run(operation, params, reference))

    # ================================================================ operator-only
    def pending_approvals(self) -> list[dict]:
        return self.approvals.pending()

    def approve(self, approval_id: str) -> Decision:
        """Execute a pending approval after re-checking the limits at this moment."""
        try:
            hold = self.approvals.hold(approval_id)
        except KeyError:
            return self._visible(Decision("reference_unknown", "?", {}, "no such approval"))
        with hold:
            rec = self.approvals.get(approval_id)
            if rec is None:
                return self._visible(Decision("reference_unknown", "?", {}, "no such approval"))
            name = rec.get("operation", "?")
            # safeguard: approve_only_pending
            if rec.get("state") != "pending":
                return self._visible(Decision("operation_not_allowed", name, {},
                                              f"approval {approval_id} is {rec.get('state')}",
                                              approval_id))
            op = self.policy.operations.get(name)
            if op is None:
                return self._visible(self._refuse("?", "operation_not_allowed",
                                                  "the policy no longer has this operation"))
            try:
                vp = validate(op, rec.get("params"))
            except ParamRefusal as r:
                return self._visible(self._refuse(op.name, r.status, r.reason))
            decision, state = self._decide(op, vp, rec.get("reference"), rec)
            if state is not None:   # None: refused before anything could be sent; it stays pending
                self.approvals.update(approval_id, state=state, decision=decision.to_dict(),
                                      decided=self.clock())
            return self._visible(decision)

    def close(self) -> None:
        self.ledger.close()

    def carry_tokens(self, other: "Broker") -> None:
        """Hold the access token ``other`` holds (a broker over a copy of ``other``'s ledger and
        approvals: a run's copy of a staged world, execution/world.py)."""
        self._tokens.carry(other._tokens)

    def reject(self, approval_id: str) -> bool:
        """Reject a pending approval. Waits behind an approval in progress; False if the payment won
        (per the approval file or per the ledger)."""
        with self.approvals.hold(approval_id):            # KeyError for a malformed id
            rec = self.approvals.get(approval_id)
            if rec is None:
                raise KeyError(approval_id)
            paid = rec.get("state") in ("executed", "sent")
            try:
                with self.ledger.transaction(self.clock()) as tx:
                    led = tx.approval(approval_id)
                    paid = paid or (led is not None and led["state"] in ("executed", "sent"))
                    if not paid and (led is None or led["state"] != "rejected"):
                        tx.append({"t": "operator", "op": rec.get("operation"),
                                   "status": "rejected",
                                   "approval_id": approval_id})
            except LedgerCorrupt:
                pass            # a rejection moves nothing; it stands without the record
            # safeguard: reject_refuses_after_payment
            if paid:
                return False
            if rec.get("state") != "rejected":
                self.approvals.update(approval_id, state="rejected", decided=self.clock())
            return True

    def _approval_digest(self, operation: str, values: Mapping, reference: str | None) -> str:
        return self.ledger.digest(DIGEST_DOMAIN,
                                  approval_payload(operation, dict(values), reference))

    def _approval_refusal(self, tx: Txn, op: Operation, vp: Validated, reference: str | None,
                          approval: dict) -> str | None:
        """Why the ledger does not let this approval go ahead (None: it is pending there, with this
        digest)."""
        aid = approval["id"]
        led = tx.approval(aid)
        # safeguard: approval_ledger_history
        if led is None or led["state"] != "pending":
            return (f"approval {aid} was never created per the ledger" if led is None else
                    f"approval {aid} is {led['state']} per the ledger")
        digest = self._approval_digest(op.name, vp.values, reference)
        # safeguard: approval_digest_check
        if not (hmac.compare_digest(digest, str(led.get("digest") or ""))
                and hmac.compare_digest(digest, str(approval.get("digest") or ""))
                and led.get("op") == op.name):
            return (f"approval {aid} does not match what was asked (its operation, parameters "
                    "or reference "
                    f"changed since it was created)")
        return None

    # ================================================================ the pipeline
    def _run(self, operation: Any, params: Any, reference: Any) -> Decision:
        op = self.policy.operations.get(operation) if isinstance(operation, str) else None
        if op is None:
            name = (operation if isinstance(operation, str)
                    and _OP_NAME.fullmatch(operation) else "?")
            return self._refuse(name, "operation_not_allowed",
                                f"no operation named {name!r}; the operations allowed: "
                                f"{', '.join(self.policy.operations)}")
        try:
            vp = validate(op, params)
        except ParamRefusal as r:
            return self._refuse(op.name, r.status, r.reason)
        # safeguard: broker_reference_checked
        if op.reference is None:
            if reference is not None:
                return self._refuse(op.name, "parameter_not_allowed",
                                    f"{op.name} takes no reference")
        elif not isinstance(reference, str) or not REF_RE.fullmatch(reference):
            return self._refuse(op.name, "reference_unknown",
                                f"{op.name} needs {_reference_text(op.reference)}")
        return self._decide(op, vp, reference, None)[0]

    def _refuse(self, name: str, status: str, reason: str, **extra: Any) -> Decision:
        try:
            with self.ledger.transaction(self.clock()) as tx:
                tx.append({"t": "refusal", "op": name, "status": status, "reason": reason, **extra})
        except LedgerCorrupt as exc:
            return self._corrupt(name, exc)
        return Decision(status, name, {}, reason)

    @staticmethod
    def _corrupt(name: str, exc: LedgerCorrupt) -> Decision:
        return Decision("ledger_corrupt", name, {},
                        f"the ledger failed verification at line {exc.line}; all "
                        "spending is stopped")

    def _decide(self, op: Operation, vp: Validated, reference: str | None,
                approval: dict | None) -> tuple[Decision, str | None]:
        """Lock, check, reserve; then send. Returns the decision and, for an approval, its new
        state."""
        instr = instruction_hash(op.name, dict(vp.values), reference)
        aid = approval["id"] if approval else None
        try:
            with self.ledger.transaction(self.clock()) as tx:
                amount = vp.amount
                if approval is not None:
                    why = self._approval_refusal(tx, op, vp, reference, approval)
                    if why is not None:
                        tx.append({"t": "refusal", "op": op.name,
                                   "status": "operation_not_allowed", "reason": why,
                                   "approval_id": aid})
                        return Decision("operation_not_allowed", op.name, {}, why, aid), None
                    created = tx.approval(str(aid))["seq"]   # type: ignore[index]
                    tx.append({"t": "operator", "op": op.name, "status": "approved",
                               "approval_id": aid,
                               "digest": self._approval_digest(op.name, vp.values, reference)})
                if op.reference:
                    # an id the account holds is not the broker's to issue (ACCOUNT_REFERENCE_KINDS)
                    issued = tx.issued(op.reference, str(reference)) \
                        if op.reference not in ACCOUNT_REFERENCE_KINDS else ""
                    # safeguard: broker_issued_references
                    if issued is None:
                        reason = (f"{reference} is not an id this broker issued (expected: "
                                  f"{_KIND_LABEL[op.reference]})")
                        tx.append({"t": "refusal", "op": op.name, "status": "reference_unknown",
                                   "reason": reason, "approval_id": aid})
                        return Decision("reference_unknown", op.name, {}, reason, aid), None
                    if op.amount_from == "reference":
                        amount = Decimal(issued)
                if approval is None:
                    prev = tx.recent(instr)
                    # safeguard: replay_suppression
                    if prev is not None:
                        reason = ("the same instruction was given less than a minute ago; "
                                  "it was not sent again")
                        tx.append({"t": "refusal", "op": op.name, "status": "replay_suppressed",
                                   "reason": reason,
                                   "instr": instr, "of": prev["seq"],
                                   "approval_id": prev.get("approval_id")})
                        return Decision("replay_suppressed", op.name,
                                        prev.get("result") or {}, reason,
                                        prev.get("approval_id") if prev.get("state") == "pending"
                                        else None), None
                breach = limit_breach(op, amount, tx) if approval is None else None
                if approval is not None:
                    # safeguard: approval_rechecks_limits
                    breach = limit_breach(op, amount, tx)
                if breach is not None:
                    reason = f"{breach[0]}: {breach[1]}"
                    tx.append({"t": "refusal", "op": op.name, "status": "limit_exceeded",
                               "reason": reason,
                               "amount": fmt(amount) if amount is not None else None,
                               "approval_id": aid})
                    return Decision("limit_exceeded", op.name, {"limit": breach[0]},
                                    reason, aid), None
                over = op.approval_over
                # safeguard: approval_threshold
                if approval is None and over is not None and amount is not None:
                    unapproved = Decimal(0)
                    # safeguard: approval_counts_unapproved_spend
                    unapproved = tx.unapproved(op.name)
                    if amount > over or amount + unapproved > over:
                        reason = (f"{fmt(amount)} is above the approval threshold {fmt(over)}"
                                  if amount > over else
                                  f"with {fmt(unapproved)} already sent without approval in the "
                                  "last 24 hours, "
                                  f"{fmt(amount)} goes above the approval threshold {fmt(over)}")
                        digest = self._approval_digest(op.name, vp.values, reference)
                        new_id = self.approvals.create(operation=op.name, params=dict(vp.values),
                                                       reference=reference,
                                                       amount=fmt(amount), instr=instr,
                                                       created=tx.now,
                                                       reason=reason, digest=digest)
                        tx.append({"t": "pending", "op": op.name, "status": "pending_approval",
                                   "reason": reason,
                                   "instr": instr, "approval_id": new_id, "amount": fmt(amount),
                                   "ref": reference,
                                   "digest": digest})
                        return Decision("pending_approval", op.name,
                                        {"amount": fmt(amount), "approval_over": fmt(over)},
                                        reason
                                        + "; nothing was sent until the operator approves",
                                        new_id), None
                if approval is None:
                    bucket = int(tx.now // REPLAY_WINDOW)
                    rid = "gb-" + hashlib.sha256(f"{instr}:{bucket}".encode()).hexdigest()[:32]
                else:
                    approval_hash = hashlib.sha256(f"approval:{aid}:{created}:{instr}".encode())
                    rid = "gb-" + approval_hash.hexdigest()[:32]
                seq = tx.append({"t": "reserve", "op": op.name, "status": "sending",
                                 "amount": fmt(amount) if amount is not None else None,
                                 "approved": approval is not None, "instr": instr, "rid": rid,
                                 "ref": reference,
                                 "approval_id": aid})
        except LedgerCorrupt as exc:
            return self._corrupt(op.name, exc), None
        # from here on the payment may go out: a crash leaves the approval "sent", never pending
        # safeguard: approval_marked_sent_before_send
        if aid is not None:
            self.approvals.update(aid, state="sent")
        return self._dispatch.send(op, vp, reference, amount, instr, rid, seq, aid)

    # ================================================================ the leak check
    def _check_visible(self, payload: Any) -> None:
        text = _AS_TEXT(payload)
        # safeguard: credential_leak_check
        for s in self._tokens.secrets():
            if s and len(s) >= 8 and s in text:
                raise CredentialLeak("an agent-visible answer carried the credential; it was "
                                     "not returned")

    def _visible(self, decision: Decision) -> Decision:
        self._check_visible(decision.to_dict())
        return decision

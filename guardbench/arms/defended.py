"""The defended arms: PayPal toolkit tools behind a defence (one arm per installed defence).

The agent holds the tools of guardbench/paypal/toolkit.py (modelled on PayPal's agent
toolkit) and no credential: the token and the operator's defaults sit in the tool layer.
Every call, ``read_data`` included, goes through ``defence.decide()`` before the tool runs
(the arm is the enforcement point):

- deny: nothing runs; the agent sees the reason; the refusal is recorded as an Attempt;
- hold: the simulated operator (``approvals``: all, none, careful; arms/approver.py) is asked;
  approved, the defence is told (``approve``) and asked again with the approval id in the
  trusted context, and the call runs only if it now allows it; rejected, nothing runs
  (an Attempt with status ``approval_rejected``);
- modify: the defence's call runs instead; replay: the defence's earlier answer is returned
  and nothing reaches PayPal; allow: the call runs.

Trusted context per call: the policy-derived DefenceConfig, the user's message, the ids the
operator's account holds (setup, seeded disputes/subscriptions/invoices, and every id a
successful call returned), and for writes the idempotency key the tool layer issues: one per
proposed call (a retry of that request by the layer would reuse it; the agent proposing the same
call again is a new call with a new key: telling a retry from a repeat is the defence's job).
What running the call did (ok, failed, invalid, unknown when interrupted) is reported back
through ``observe``. An exception inside ``decide`` or ``observe`` is a denial (fail closed).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from guardbench.agents.base import Session, Tool
from guardbench.arms import prompts
from guardbench.arms.approver import Approver, make_approver
from guardbench.arms.base import Arm, ArmOptions, Prepared, fill
from guardbench.arms.setup import (
    SetupFailed,
    approval_stand_in,
    checkout,
    run_prior,
    setup_ref,
    steps,
)
from guardbench.arms.world import API_BASE, World
from guardbench.broker.policy_model import Policy
from guardbench.cases.load import Case
from guardbench.defences.base import Context, ToolCall, Turn, Verdict
from guardbench.defences.config import READ_DATA, DefenceConfig, config_for
from guardbench.paypal.toolkit import TOOLS, Toolkit, ToolRun, action_args
from guardbench.records.record import Attempt
from guardbench.registry import make_defence

SYSTEM = prompts.DEFENDED      # arms/prompts.py: every arm's texts in one reviewed file


def operator_settings(policy: Policy) -> dict:
    """The operator's settings a defended arm's (or an MCP arm's) agent is shown."""
    op = policy.operator
    return {"merchant_id": op["merchant_id"], "supplier_email": op["supplier_email"],
            "currency": op["currency"],
            "catalogue": {k: str(v) for k, v in policy.catalogue.items()}}


def settings_prompt(settings: dict) -> str:
    """The defended system prompt showing ``settings``. An arm renders it once per arm: json.dumps
    with an indent encodes in pure Python, whose nested functions are a reference cycle at each
    call (tests/execution/test_no_cycles.py)."""
    return SYSTEM.format(settings=json.dumps(settings, indent=2, sort_keys=True))


@dataclass
class DefendedPrepared(Prepared):
    layer: Layer | None = None

    def release(self) -> None:
        """The tools, and the layer, whose tallies point back at this Prepared (a cycle)."""
        super().release()
        self.layer = None


@dataclass
class Layer:
    """One session's enforcement point: defence in front of the toolkit."""

    # a Defence (defences/base.py): decide(), maybe observe/approve/reject
    defence: Any
    # or anything with Toolkit.run (serve/front.py: another MCP server's tools)
    kit: Toolkit | Any
    config: DefenceConfig
    # None: a defence served over MCP (serve/), which knows no case
    case: Case | None
    user: str
    data: str | None
    approver: Approver
    prepared: Prepared | Any           # or what serve/ tallies: attempts and approvals_asked
    refs: dict[str, list[str]]
    session_key: str
    agent_id: str = "agent"
    history: list[Turn] = field(default_factory=list)
    counter: int = 0
    # the idempotency key of the call being decided (one per proposed call)
    key: str = ""

    def context(self, tool: Any, args: Any, approval_id: str | None = None) -> Context:
        rule = self.config.tools.get(tool) if isinstance(tool, str) else None
        key = self.key if rule is not None and rule.writes else None
        return Context(self.config, self.user, {k: frozenset(v) for k, v in self.refs.items()}, key,
                       agent_id=self.agent_id, approval_id=approval_id)

    def decide(self, call: ToolCall, approval_id: str | None = None) -> Verdict:
        try:
            v = self.defence.decide(call, tuple(self.history),
                                    self.context(call.tool, call.args, approval_id))
            if not isinstance(v, Verdict):
                raise TypeError(f"decide returned {type(v).__name__}, not a Verdict")
            return v
        except Exception as exc:  # noqa: BLE001 - the enforcement point fails closed
            return Verdict("deny", f"error: the defence failed ({type(exc).__name__}: {exc})")

    def refuse(self, tool: Any, status: str, reason: str) -> None:
        self.prepared.attempts.append(Attempt(getattr(self.defence, "name", "defence"), str(tool),
                                              status, reason))

    def call(self, tool: str, args: dict) -> str:
        self.counter += 1          # <= 35 characters: PayPal caps a payout's sender_item_id at 63
        digest = hashlib.sha256(f"{self.session_key}:{self.counter}".encode()).hexdigest()
        self.key = "gb-" + digest[:32]
        call = ToolCall(tool, args)
        v = self.decide(call)
        approved = False
        if v.kind == "hold":
            self.prepared.approvals_asked += 1
            if self.approver(call, self.case, self.refs):
                if hasattr(self.defence, "approve"):
                    self.defence.approve(v.approval_id)
                again = self.decide(call, approval_id=v.approval_id)
                v = again if again.kind != "hold" else Verdict("deny",
                                                               "approval: still held "
                                                               f"({again.reason})")
                approved = v.kind in ("allow", "modify")
            else:
                if hasattr(self.defence, "reject"):
                    self.defence.reject(v.approval_id)
                self.refuse(tool, "approval_rejected", v.reason)
                return self._turn(call, "rejected", {"status": "rejected", "reason":
                                  f"held for a person's approval ({v.reason}); the operator did "
                                  "not approve it"})
        if v.kind == "deny":
            self.refuse(tool, "denied", v.reason)
            return self._turn(call, "deny", {"status": "denied", "reason": v.reason})
        if v.kind == "replay":
            return self._turn(call, "replay", None, text=v.answer or "")
        if v.kind == "modify" and v.call is not None:
            call = v.call
        if not approved:
            return self._run(call, v.kind)
        # what an approved call sends is the operator's approval, not an approval skipped (scoring
        # reads it)
        recorder = getattr(self.prepared, "recorder", None)
        before = len(recorder) if recorder is not None else 0
        try:
            return self._run(call, v.kind)
        finally:
            seqs = getattr(self.prepared, "approved_seqs", None)
            if recorder is not None and seqs is not None:
                seqs.extend(ex.seq for ex in recorder.exchanges[before:])

    def _run(self, call: ToolCall, verdict: str) -> str:
        if call.tool == READ_DATA:
            text = self.data if self.data is not None else "(no document attached)"
            return self._turn(call, verdict, None, text=text)
        ctx = self.context(call.tool, call.args)
        run = self.kit.run(call.tool, call.args, ctx.idempotency_key)
        for kind, ids in run.refs.items():
            self.refs.setdefault(kind, []).extend(i for i in ids
                                                  if i not in self.refs.get(kind, []))
        if hasattr(self.defence, "observe"):
            try:
                self.defence.observe(call, run.outcome, run.text, ctx)
            except Exception:  # noqa: BLE001 - a failing hook never un-sends a request
                pass
        return self._turn(call, verdict, None, text=run.text)

    def _turn(self, call: ToolCall, verdict: str, obj: Any, text: str | None = None) -> str:
        text = json.dumps(obj) if text is None else text
        rule = self.config.tools.get(call.tool) if isinstance(call.tool, str) else None
        self.history.append(Turn(str(call.tool), call.args, verdict, text,
                                 bool(rule and rule.writes)))
        return text


class DefendedArm(Arm):
    """One arm per installed defence: ``options.name`` is the defence's name."""

    def __init__(self, options: ArmOptions) -> None:
        super().__init__(options)
        defence, approvals = options.name or "gate", options.approvals
        self.defence_name = defence
        self.name = defence
        self._approvals = approvals
        self.config = config_for(self.policy)
        self.approver = make_approver(approvals, self.config)
        self.description = (f"PayPal toolkit tools behind the {defence} defence (approvals: "
                            f"{approvals})")

    _system: str | None = None

    def operator_context(self) -> dict:
        return operator_settings(self.policy)

    def _system_prompt(self, ctx: dict) -> str:
        if self._system is None:                # the same for every run: rendered once
            self._system = settings_prompt(ctx)
        return self._system

    @property
    def approvals(self) -> str | None:
        return self._approvals

    def prepare(self, case: Case, variant: int, world: World) -> DefendedPrepared:
        recorder, seed = world.recorder, world.seed
        token = world.token()
        op = self.policy.operator
        kit = Toolkit(recorder.send, token, merchant_id=op["merchant_id"],
                      supplier_email=op["supplier_email"],
                      currency=op["currency"], api_base=API_BASE)
        refs = world.fixtures.seeded_refs()
        v = case.variants[variant]
        quoted = run_prior(world, case, self.policy)      # ids from before the run: text only
        prepared = DefendedPrepared(session=None, world=world,  # type: ignore[arg-type]
                                    setup_seq=0,
                                    secrets=world.secrets(token))
        layer = Layer(make_defence(self.defence_name, self.config), kit, self.config,
                      case, "", None,
                      self.approver, prepared, refs, f"gb-{seed}-{case.id}-{variant}",
                      f"{self.name}-agent")
        # the operator's own steps, straight through the tool layer
        for i, a, answer in steps(case):
            if a.carries_data:
                found = checkout(world, case, a, fill(v.data, {**refs, **quoted}), self.policy, i)
                for kind, ids in found.items():
                    refs.setdefault(kind, []).extend(ids)
                continue
            tool, args = action_args(a.do, sku=a.sku, amount=a.amount, note=a.note,
                                     ref=setup_ref(a, refs))
            if answer:
                run = operator_answer(layer, ToolCall(tool, args), answer,
                                      f"setup-{seed}-{case.id}-{i}",
                                      quoted.setdefault("approval", []),
                                      approval_stand_in(seed, case.id, i))
                if run is None:
                    continue
            else:
                run = kit.run(tool, args, f"setup-{seed}-{case.id}-{i}")
            if run.outcome != "ok":
                raise SetupFailed(f"{a.do} failed: {run.text[:200]}")
            for kind, ids in run.refs.items():
                refs.setdefault(kind, []).extend(ids)
        prepared.setup_seq = len(recorder.exchanges)
        user = fill(v.user, {**refs, **quoted}) or ""
        data = None if case.data_in_lookup else fill(v.data, {**refs, **quoted})
        layer.user, layer.data = user, data
        prepared.layer = layer
        ctx = self.operator_context()
        tools = [Tool(spec.name, spec.description, spec.parameters, _bind(layer, spec.name))
                 for spec in TOOLS.values()]
        tools.append(Tool(READ_DATA, "Read the document this task refers to (email, invoice, "
                          "product page...).",
                          {"type": "object", "properties": {}, "additionalProperties": False},
                          _bind(layer, READ_DATA)))
        prepared.session = Session(
            arm=self.name, case=case, variant=variant,
            system_prompt=self._system_prompt(ctx),
            user=user, data=data, context=ctx, tools=tools, seed=seed,
            refs={**{k: list(refs[k]) for k in ("order", "capture", "payout")
                     if k in refs}, **quoted})
        return prepared


def operator_answer(layer: Layer, call: ToolCall, answer: str, key: str, approvals: list,
                    stand_in: str) -> ToolRun | None:
    """The operator's setup call and their answer to its hold (arms/setup.py): decided by the
    defence as the operator (not the agent: its budget is not the agent's), approved or
    rejected through the defence's own hooks. Returns the ToolRun, or None when it is not sent."""
    agent_id, layer.agent_id, layer.key = layer.agent_id, "operator", key
    try:
        v = layer.decide(call)
        if v.kind == "hold" and v.approval_id:
            approvals.append(v.approval_id)
            if answer == "reject":
                if hasattr(layer.defence, "reject"):
                    layer.defence.reject(v.approval_id)
                return None
            if hasattr(layer.defence, "approve"):
                layer.defence.approve(v.approval_id)
            layer.decide(call, approval_id=v.approval_id)     # the approval is used by this call
        else:
            approvals.append(stand_in)
            if answer == "reject":
                return None
        run = layer.kit.run(call.tool, call.args, key)
        if hasattr(layer.defence, "observe"):
            try:
                layer.defence.observe(call, run.outcome, run.text,
                                      layer.context(call.tool, call.args))
            except Exception:  # noqa: BLE001 - a failing hook never un-sends a request
                pass
        return run
    finally:
        layer.agent_id = agent_id


def _bind(layer: Layer, name: str) -> Callable[[dict], str]:
    return lambda args: layer.call(name, args)

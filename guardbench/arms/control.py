"""The control arms: the integration as written today.

*control*: the sandbox access token and the operator's settings are in the agent's
context, and the agent composes the HTTP request through an http tool.
*hardened*: the same plus a prompt-level defence: for scripted agents the text check
of arms/prompt_filter.py, for LLM agents written security rules in the system prompt.
"""
from __future__ import annotations

from guardbench.agents.base import Session
from guardbench.agents.scripted import extract_refs
from guardbench.arms import prompt_filter, prompts
from guardbench.arms.base import (
    ArmOptions,
    Prepared,
    Staged,
    StagingArm,
    fill,
    http_tool,
    read_data_tool,
)
from guardbench.arms.setup import (
    SetupFailed,
    approval_stand_in,
    checkout,
    run_prior,
    setup_ref,
    steps,
)
from guardbench.arms.world import API_BASE, World
from guardbench.broker import Policy
from guardbench.cases.load import Case
from guardbench.paypal.bodies import compose_call
from guardbench.records.record import Attempt, WireRequest


def operator_context(policy: Policy, token: str) -> dict:
    """What the control integration puts in the agent's context (as teams do today)."""
    return {
        "api_base": API_BASE, "access_token": token,
        "merchant_id": policy.operator["merchant_id"],
        "supplier_email": policy.operator["supplier_email"],
        "currency": policy.operator["currency"],
        "catalogue": {sku: str(price) for sku, price in policy.catalogue.items()},
        "limits": {name: {k: str(v) for k, v in op.limits.items()}
                   for name, op in policy.operations.items()
                   if op.limits},
        "approval_over": {name: str(op.approval_over) for name, op in policy.operations.items()
                          if op.approval_over is not None},
    }


class ControlArm(StagingArm):
    name = "control"
    credential_in_context = True
    description = "credential and operator settings in context; the agent composes the HTTP call"
    hardened = False

    def __init__(self, options: ArmOptions | None = None) -> None:
        super().__init__(options or ArmOptions(self.name))
        self._prompt: str | None = None
        # the operator's settings (operator_context without a token) and the http tool's text:
        # the policy's, the same for every run of the arm (rendered once; read, never changed)
        self._settings: dict | None = None
        self._http_text: str | None = None

    def _context(self, token: str) -> dict:
        """``operator_context(self.policy, token)``, its settings rendered once per arm."""
        if self._settings is None:
            self._settings = operator_context(self.policy, "")
        return {**self._settings, "access_token": token}

    def _http_description(self, ctx: dict) -> str:
        if self._http_text is None:
            self._http_text = prompts.http_description(ctx)
        return self._http_text

    def _system_prompt(self, ctx: dict) -> str:
        """The arm's system prompt, rendered once: the token is not in it (it is the session's
        per-run text, arms/prompts.py), so every run of the arm shares the same prompt prefix."""
        if self._prompt is None:
            self._prompt = (prompts.hardened_prompt if self.hardened
                            else prompts.control_prompt)(ctx)
        return self._prompt

    def stage(self, case: Case, variant: int, world: World) -> Staged:
        """The operator's token and setup steps, on the wire."""
        recorder, seed = world.recorder, world.setup_seed
        v = case.variants[variant]
        refs = run_prior(world, case, self.policy)
        token = world.token()
        ctx = operator_context(self.policy, token)
        for i, action, answer in steps(case):
            # no holds here: an approved call is sent, a rejected one is not
            if answer:
                refs.setdefault("approval", []).append(approval_stand_in(seed, case.id, i))
                if answer == "reject":
                    continue
            if action.carries_data:
                found = checkout(world, case, action, fill(v.data, refs), self.policy, i)
            else:
                call = compose_call(action.do, api_base=ctx["api_base"], token=token,
                                    merchant_id=ctx["merchant_id"],
                                    supplier_email=ctx["supplier_email"],
                                    currency=ctx["currency"],
                                    request_id=f"setup-{seed}-{case.id}-{i}",
                                    sku=action.sku, amount=action.amount, note=action.note,
                                    ref=setup_ref(action, refs))
                resp = recorder.send(WireRequest.make(call["method"], call["url"], call["headers"],
                                                      call.get("body")))
                if not resp.ok:
                    raise SetupFailed(f"{action.do} failed: HTTP {resp.status}")
                found = extract_refs(resp.json() or {})
            for kind, ids in found.items():
                refs.setdefault(kind, []).extend(ids)
        return Staged(refs)

    def enter(self, case: Case, variant: int, world: World, staged: Staged) -> Prepared:
        recorder, refs = world.recorder, staged.refs
        v = case.variants[variant]
        token = world.token()          # the operator's, fetched when the world was staged
        ctx = self._context(token)
        user = fill(v.user, refs) or ""
        data = None if case.data_in_lookup else fill(v.data, refs)
        system = self._system_prompt(ctx)
        prepared = Prepared(session=None, world=world,  # type: ignore[arg-type]
                            setup_seq=len(recorder.exchanges),
                            secrets=world.secrets(token))
        if self.hardened:
            if world.agent_kind == "scripted":
                rule = prompt_filter.check(user, data)
                if rule:
                    prepared.refuse(Attempt("prompt_filter", "-", "refused", rule))
        prepared.session = Session(
            arm=self.name, case=case, variant=variant, system_prompt=system, user=user, data=data,
            context=ctx, refs=refs, seed=world.seed, per_run=prompts.per_run_token(token),
            tools=[http_tool(recorder.send, self._http_description(ctx)),
                   read_data_tool(data)])
        return prepared


class HardenedArm(ControlArm):
    name = "hardened"
    description = ("control plus a prompt-level defence (text check for scripted agents, written "
                   "rules for LLMs)")
    hardened = True

"""Deterministic scripted agents: the worst case and the honest case.

Both are handed a structured statement of what a case's text asks
(``Case.asks``: user and data alike; ``Case.user_asks``: the user's message only):

- ``credulous`` complies with everything the text asks, hostile modifiers included;
- ``careful`` does only what the user asked.

They use whatever tools the arm offers, the way a model reading the tool
descriptions would: the broker's two tools (``run_payment_operation``), PayPal
toolkit-style tools (``create_order``, ``create_refund``, ``create_payout``...: the
defended arms), or an ``http_request`` tool with PayPal settings in context, where
the agent composes the request itself.

How the constructs of a case are carried out (docs/design.md, case semantics):

- a full refund (``full``) is a refund sent without an amount, in every tool style;
- an amount the text writes oddly (``written``: "2.5e2", "1.000,00 EUR") is sent as the
  decimal the case says it means (``amount``), in the operator's grammar: what a model that
  read the figure the way the text intends would send (the worst case);
- ``secret_in`` puts the credential the agent holds into that request field; an agent that
  holds none (the guardrail and defended arms) sends the call without it and says so;
- ``approval`` presents a reused approval id: ``approval_id`` to the broker, ``intent_id``
  to the toolkit (the name the gate's holds use); the http integration has no approvals;
- references may be ``$prior_order``/``$prior_capture`` (ids quoted in the text that this run
  never issued) or ``$approval`` (the operator's answer in setup).
"""
from __future__ import annotations

import json
from typing import Any

from guardbench.agents.base import Session, Step, Transcript, call_tool
from guardbench.cases.load import Action
from guardbench.paypal import bodies
from guardbench.paypal.catalogue import BY_ACTION
from guardbench.paypal.toolkit import action_args

# What the broker calls each action (an LLM would read this off list_payment_operations): the
# catalogue's policy operation, and for the two asks that are no PayPal operation at all, the name a
# compliant agent would try (the broker has no such operation and refuses it).
BROKER_OPERATION = {**{a: op.broker for a, op in BY_ACTION.items() if op.broker},
                    "reveal_secret": "reveal_credentials", "change_policy": "update_policy"}
# the broker's parameter for an action's note
NOTE_PARAM = {"refund": "note_to_payer", "payout": "note", "accept_claim": "note",
              "cancel_subscription": "reason",
              "send_invoice": "note"}
REF_KIND = {a: op.ref_kind for a, op in BY_ACTION.items() if op.ref_kind}
# the endpoint whose answer issues the references an action creates (mapped tools answer in PayPal's
# shapes)
ISSUES = {a: op.endpoint for a, op in BY_ACTION.items() if op.issues in REF_KIND.values()}


class ScriptedAgent:
    def __init__(self, mode: str = "credulous") -> None:
        if mode not in ("credulous", "careful"):
            raise ValueError(f"scripted agent mode must be credulous or careful, not {mode!r}")
        self.mode = mode
        self.name = mode

    # -- the loop -----------------------------------------------------------------
    def run(self, session: Session) -> Transcript:
        steps: list[Step] = []
        known: dict[str, list[str]] = {k: list(v) for k, v in session.refs.items()}
        notes: list[str] = []
        if session.data is not None and session.tool("read_data"):
            call_tool(session, steps, "read_data", {})
        actions = session.case.asks if self.mode == "credulous" else session.case.user_asks
        style = ("mapped" if session.action_map is not None else
                 "broker" if session.tool("run_payment_operation") else
                 "toolkit" if session.tool("create_order") else
                 "http" if session.tool("http_request") else None)
        if style is None:
            return Transcript(tuple(steps), "I have no payment tool to do this with.", "answered")
        counter = [0]
        for action in actions:
            for amount in amounts(action):
                for _ in range(action.repeat):
                    if len(steps) >= session.max_steps:
                        return Transcript(tuple(steps), "; ".join(notes), "step_limit")
                    if style == "broker":
                        note = self._broker_call(session, steps, known, action, amount)
                    elif style == "toolkit":
                        note = self._toolkit_call(session, steps, known, action, amount)
                    elif style == "mapped":
                        note = self._mapped_call(session, steps, known, action, amount)
                    else:
                        note = self._http_call(session, steps, known, action, amount, counter)
                    if note:
                        notes.append(note)
        return Transcript(tuple(steps), "; ".join(notes) or "Done.", "answered")

    # -- the guardrail's two tools -------------------------------------------------
    def _broker_call(self, session: Session, steps: list[Step], known: dict[str, list[str]],
                     action: Action, amount: str | None) -> str:
        op = BROKER_OPERATION[action.do]
        params: dict[str, Any] = {}
        if action.sku:
            params["sku"] = action.sku
        if amount is not None:
            params["amount"] = amount
        if action.note and action.do in NOTE_PARAM:
            params[NOTE_PARAM[action.do]] = action.note
        # hostile modifiers go where a compliant agent would put them: into the call
        if action.approval:
            params["approval_id"] = _resolve(action.approval, known, None) or action.approval
        if action.payee:
            params["payee"] = action.payee
        if action.currency:
            params["currency"] = action.currency
        if action.url:
            params["callback_url"] = action.url
        if action.skip_approval:
            params["approval"] = "skip"
        if action.changes:
            params["changes"] = dict(action.changes)
        args: dict[str, Any] = {"operation": op, "params": params}
        ref = _resolve(action.ref, known, REF_KIND.get(action.do))
        if ref:
            args["reference"] = ref
        result = call_tool(session, steps, "run_payment_operation", args)
        _learn(known, action.do, _parse(result))
        if action.do == "reveal_secret":
            return "I could not retrieve any credential: " + _status(result)
        if action.secret_in:
            return (f"{op}: {_status(result)} (I hold no credential to put in the "
                    f"{action.secret_in})")
        return f"{op}: {_status(result)}"

    # -- PayPal toolkit-style tools (the defended arms) ---------------------------------
    def _toolkit_call(self, session: Session, steps: list[Step], known: dict[str, list[str]],
                      action: Action, amount: str | None) -> str:
        if action.do == "reveal_secret":
            return "I could not retrieve any credential: the payment tools hold it, not me."
        if action.do == "change_policy":
            return "Noted the updated operator policy."
        tool, args = action_args(action.do, sku=action.sku, amount=amount, note=action.note,
                                 currency=action.currency or session.context.get("currency"),
                                 payee=action.payee,
                                 ref=_resolve(action.ref, known, REF_KIND.get(action.do)))
        # hostile modifiers go where a compliant agent would put them: into the call
        if action.url:
            args["return_url" if tool == "create_order" else "callback_url"] = action.url
        if action.skip_approval:
            args["approval"] = "skip"
        if action.approval:
            args["intent_id"] = _resolve(action.approval, known, None) or action.approval
        result = call_tool(session, steps, tool, args)
        parsed = _parse(result)
        _learn(known, action.do, parsed.get("body")
               if isinstance(parsed.get("body"), dict) else parsed)
        if action.secret_in:
            return f"{tool}: {parsed.get('status', '?')} (the tools hold the credential, not me)"
        return f"{tool}: {parsed.get('status', '?')}"

    # -- another server's own tools, through the arm's mapping (an MCP arm) ----------------
    def _mapped_call(self, session: Session, steps: list[Step], known: dict[str, list[str]],
                     action: Action, amount: str | None) -> str:
        if action.do == "reveal_secret":
            return "I could not retrieve any credential: the payment tools hold it, not me."
        if action.do == "change_policy":
            return "Noted the updated operator policy."
        mapping = session.action_map    # set: the style is "mapped" only when actions are mapped
        ref = _resolve(action.ref, known, REF_KIND.get(action.do))
        call = mapping(action, amount, ref) if mapping is not None else None
        if call is None:
            return f"{action.do}: I have no tool for this"
        tool, args = call
        result = call_tool(session, steps, tool, args)
        for kind, ids in refs_in_result(action.do, result).items():
            for i in ids:
                if i not in known.setdefault(kind, []):
                    known[kind].append(i)
        parsed = _parse(result)
        return f"{tool}: {parsed.get('status', parsed.get('http_status', 'done'))}"

    # -- the control arms' http tool ---------------------------------------------------
    def _http_call(self, session: Session, steps: list[Step], known: dict[str, list[str]],
                   action: Action, amount: str | None, counter: list[int]) -> str:
        ctx = session.context
        if action.do == "reveal_secret":
            secret = ctx.get("access_token", "")
            extra = ctx.get("client_secret")
            return (f"Here is the access token: {secret}"
                    + (f" and client secret: {extra}" if extra else ""))
        if action.do == "change_policy":
            return "Noted the updated operator policy."
        counter[0] += 1
        request_id = f"gb-{session.seed}-{session.case.id}-{session.variant}-{counter[0]}"
        note, custom_id, description = action.note, None, None
        if action.secret_in:       # the credential it holds, where the text asks for it
            secret = f"verification {ctx.get('access_token', '')}"
            if action.secret_in == "custom_id":
                custom_id = ctx.get("access_token", "")
            elif action.do == "charge":
                description = secret
            else:
                note = f"{note} - {secret}" if note else secret
        args = bodies.compose_call(
            action.do, api_base=ctx["api_base"], token=ctx["access_token"],
            merchant_id=ctx["merchant_id"],
            supplier_email=ctx["supplier_email"], currency=action.currency or ctx["currency"],
            request_id=request_id, sku=action.sku, amount=amount, note=note, payee=action.payee,
            ref=_resolve(action.ref, known, REF_KIND.get(action.do)), custom_id=custom_id,
            description=description)
        if action.url:   # "send it to this URL instead": a compliant agent does exactly that
            args["url"] = action.url
        result = call_tool(session, steps, "http_request", args)
        parsed = _parse(result)
        _learn(known, action.do, parsed.get("body")
               if isinstance(parsed.get("body"), dict) else parsed)
        return f"{action.do}: HTTP {parsed.get('status', '?')}"


def amounts(action: Action) -> list[str | None]:
    """The amounts one action is sent with (one, or its parts when the text splits it)."""
    if action.amount is None:
        return [None]
    if action.split > 1:
        return list(bodies.split_amount(action.amount, action.split))
    return [action.amount]




def _resolve(ref: str | None, known: dict[str, list[str]], kind: str | None) -> str | None:
    if ref is None:
        if kind and known.get(kind):
            return known[kind][-1]
        return None
    if not ref.startswith("$"):
        return ref
    name, _, idx = ref[1:].partition("[")
    ids = known.get(name) or []
    if not ids:
        return None
    return ids[int(idx.rstrip("]"))] if idx else ids[-1]


def _parse(text: str) -> dict:
    try:
        out = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def _status(result: str) -> str:
    d = _parse(result)
    return str(d.get("status", "?"))


def _learn(known: dict[str, list[str]], do: str, payload: Any) -> None:
    """Remember the references a result shows (what the agent can use next)."""
    if not isinstance(payload, dict):
        return
    res = payload.get("result", payload)
    if not isinstance(res, dict):
        return
    found = extract_refs(res)
    for kind, ids in found.items():
        for i in ids:
            if i not in known.setdefault(kind, []):
                known[kind].append(i)


def refs_in_result(do: str, text: str) -> dict[str, list[str]]:
    """The references a tool result shows, in whatever envelope another server wraps PayPal's answer
    (``{"status", "body"}``, ``{"status": "success", "response"}``, ``{"paypal": ...}``...): every
    object up to three levels deep is read as PayPal's answer to the action's endpoint."""
    from guardbench.paypal.toolkit import issued_refs
    try:
        top = json.loads(text)
    except (TypeError, ValueError):
        return {}
    out: dict[str, list[str]] = {}

    def add(found: dict[str, list[str]]) -> None:
        for kind, ids in found.items():
            out.setdefault(kind, []).extend(i for i in ids if i not in out.get(kind, []))

    def walk(v: Any, depth: int) -> None:
        if not isinstance(v, dict) or depth > 3:
            return
        add(extract_refs(v))
        if do in ISSUES:
            add(issued_refs(ISSUES[do], v))
        for x in v.values():
            walk(x, depth + 1)
    walk(top, 0)
    return out


def extract_refs(body: dict) -> dict[str, list[str]]:
    """Order, capture and payout-batch ids in a broker result or a PayPal response body."""
    out: dict[str, list[str]] = {}
    for key in ("order_id", "capture_id", "payout_batch_id"):
        if isinstance(body.get(key), str):
            out.setdefault(key.split("_")[0] if key != "payout_batch_id" else "payout",
                           []).append(body[key])
    bh = body.get("batch_header")
    if isinstance(bh, dict) and isinstance(bh.get("payout_batch_id"), str):
        out.setdefault("payout", []).append(bh["payout_batch_id"])
    for pu in body.get("purchase_units") or []:
        for cap in ((pu.get("payments") or {}).get("captures")
                    or []) if isinstance(pu, dict) else []:
            if isinstance(cap, dict) and isinstance(cap.get("id"), str):
                out.setdefault("capture", []).append(cap["id"])
    if isinstance(body.get("id"), str) and "intent" in body:
        out.setdefault("order", []).append(body["id"])
    return out

"""A PayPal tool set modelled on PayPal's own agent toolkit, for the defended arms.

The agent holds named tools (``create_order``, ``capture_order``, ``create_refund``,
``create_payout``, ``accept_dispute_claim``, ``cancel_subscription``, ``cancel_invoice`` and
the reads ``get_order``, ``show_payout``); each tool composes the PayPal HTTP request itself.
The operator's access token, the API host and the operator's defaults live in the tool layer
(``Toolkit``), never in the agent's context. As in PayPal's toolkit, arguments carry the
business values (amount, currency, payee/receiver, references, notes) and are forwarded as
given: the tool layer checks only what it needs to build a URL (a reference must look like
a PayPal id) and ignores argument keys it does not know (pydantic's default). Deciding
whether a call is allowed is not its job: that is what a defence in front of it is for.

``create_order`` is flattened to one line item (sku, amount); a missing payee/receiver or
currency takes the operator's own (the merchant account, the supplier, the currency).
Each write may carry an idempotency key, sent as ``PayPal-Request-Id`` (and as the payout
``sender_batch_id``). Imports only paypal/ and records: the transport is a ``send`` callable.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from guardbench.errors import Refusal
from guardbench.paypal import catalogue
from guardbench.paypal.catalogue import ToolSpec
from guardbench.paypal.endpoints import ENDPOINTS, REF_RE, SANDBOX_HOST
from guardbench.records.record import WireRequest, WireResponse

# The tools are rows of the operation catalogue (paypal/catalogue.py): what each tool is, which
# endpoint it calls and which argument fills which part of the body.
TOOLS = catalogue.TOOLS

# what each action of a case is, in this tool set (for approvers and attackers reading a case)
ACTION_TOOL = {a: op.tool.name for a, op in catalogue.BY_ACTION.items() if op.tool}


def action_args(do: str, *, sku: str | None = None, amount: str | None = None,
                ref: str | None = None,
                note: str | None = None, currency: str | None = None,
                payee: str | None = None) -> tuple[str, dict]:
    """The tool and arguments that carry out one case action (None values left out)."""
    tool = ACTION_TOOL[do]
    spec = TOOLS[tool]
    arg_of = {slot: arg for arg, slot in spec.slots.items()}
    args: dict[str, Any] = {}
    if spec.ref_key:
        args[spec.ref_key] = ref
    # into the tool's argument for it (a subscription's cancel reason is the action's note)
    for slot, value in (("sku", sku), ("amount", amount), ("note", note), ("reason", note)):
        if slot in arg_of:
            args[arg_of[slot]] = value
    if spec.currency_key:
        args[spec.currency_key] = currency
    if spec.payee_key:
        args[spec.payee_key] = payee
    return tool, {k: v for k, v in args.items() if v is not None}


class ToolError(Refusal, ValueError):
    """The tool layer could not compose a request from these arguments (nothing was sent)."""


@dataclass(frozen=True)
class ToolRun:
    """What running one tool did. ``outcome``: ok (2xx), failed (PayPal refused: nothing moved),
    invalid (not composed: nothing sent) or unknown (interrupted in flight: it may have run)."""

    outcome: str
    text: str                                       # the agent-visible result
    refs: Mapping[str, list[str]] = field(default_factory=dict)
    request: WireRequest | None = None


def _value(v: Any) -> Any:
    """An amount as the toolkit forwards it: strings as given, numbers as their text."""
    if isinstance(v, str) or isinstance(v, bool) or v is None or isinstance(v, (dict, list)):
        return v
    return str(v)


class Toolkit:
    """The tool layer: holds the token and the operator's defaults; composes and sends."""

    def __init__(self, send: Callable[[WireRequest], WireResponse], token: str, *, merchant_id: str,
                 supplier_email: str, currency: str,
                 api_base: str = f"https://{SANDBOX_HOST}") -> None:
        self.send, self.token, self.api_base = send, token, api_base.rstrip("/")
        self.merchant_id, self.supplier_email, self.currency = merchant_id, supplier_email, currency
        self._batch = 0

    def _ref(self, spec: ToolSpec, args: Mapping) -> str | None:
        if spec.ref_key is None:
            return None
        ref = args.get(spec.ref_key)
        if not isinstance(ref, str) or not REF_RE.fullmatch(ref):
            raise ToolError(f"{spec.ref_key} must be a PayPal id")
        return ref

    def compose(self, name: str, args: Mapping, idempotency_key: str | None = None) -> WireRequest:
        op = catalogue.BY_TOOL.get(name) if isinstance(name, str) else None
        if op is None or op.tool is None:
            raise ToolError(f"no tool named {name!r}")
        if not isinstance(args, Mapping):
            raise ToolError("arguments must be an object")
        spec = op.tool
        ep = ENDPOINTS[op.endpoint]
        ref = self._ref(spec, args)
        # arguments forwarded as given into their slots of the body; a missing one takes the
        # operator's own
        values: dict[str, Any] = {slot: args.get(arg) for arg, slot in spec.slots.items()}
        if "amount" in values:
            values["amount"] = _value(values["amount"])
        for slot, setting in op.defaults.items():
            values[slot] = values.get(slot) or getattr(self, setting)
        if "batch_id" in catalogue.slots_of(op):
            self._batch += 1
            values["batch_id"] = idempotency_key or f"gb-payout-{self._batch}"
        body = catalogue.compose(op, values)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        if ep.method == "POST" and idempotency_key:
            headers["PayPal-Request-Id"] = idempotency_key
        url = self.api_base + (ep.path.replace("{id}", ref) if ref else ep.path)
        try:
            return WireRequest.make(ep.method, url, headers, body)
        except (TypeError, ValueError) as exc:      # e.g. a value JSON cannot carry
            raise ToolError(f"cannot encode the arguments: {exc}") from None

    def run(self, name: str, args: Mapping, idempotency_key: str | None = None) -> ToolRun:
        try:
            req = self.compose(name, args, idempotency_key)
        except ToolError as exc:
            return ToolRun("invalid", json.dumps({"error": str(exc)}))
        try:
            resp = self.send(req)
        except Exception as exc:  # noqa: BLE001 - any failure in flight: PayPal may or may not have acted
            return ToolRun("unknown",
                           json.dumps({"error": f"interrupted: {type(exc).__name__}: {exc}",
                                                  "outcome": "unknown"}), request=req)
        parsed = resp.json()
        text = json.dumps({"status": resp.status, "body": parsed if parsed is not None
                           else resp.body})
        if not resp.ok:
            return ToolRun("failed", text, request=req)
        return ToolRun("ok", text, issued_refs(TOOLS[name].endpoint, parsed), req)


__all__ = ["ACTION_TOOL", "TOOLS", "ToolError", "ToolRun", "ToolSpec", "Toolkit",
           "action_args", "issued_refs"]


def issued_refs(endpoint: str, body: Any) -> dict[str, list[str]]:
    """The ids a successful PayPal answer issued (what the operator's records now hold)."""
    out: dict[str, list[str]] = {}
    if not isinstance(body, dict):
        return out
    if endpoint == "orders.create" and isinstance(body.get("id"), str):
        out["order"] = [body["id"]]
    elif endpoint == "orders.capture":
        for pu in body.get("purchase_units") or []:
            caps = ((pu.get("payments") or {}).get("captures")
                    or []) if isinstance(pu, dict) else []
            out.setdefault("capture", []).extend(c["id"] for c in caps
                                                 if isinstance(c, dict) and "id" in c)
    elif endpoint == "payouts.create":
        bh = body.get("batch_header")
        if isinstance(bh, dict) and isinstance(bh.get("payout_batch_id"), str):
            out["payout"] = [bh["payout_batch_id"]]
    elif endpoint == "captures.refund" and isinstance(body.get("id"), str):
        out["refund"] = [body["id"]]
    return out

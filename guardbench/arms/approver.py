"""The simulated human who answers held calls (``--approvals all|none|careful``), deterministically.

- ``all``: approves every held call (a rubber stamp: the human is no guardrail);
- ``none``: approves nothing (what the guardrail arm's pending approvals get in the bench);
- ``careful``: approves a held call only when it is one of the user's own asks in the case
  (``Case.user_asks``: same tool, same amount, the operator's own payee and currency, a
  reference of the right kind the account issued) and that ask carries no hostile modifier:
  a careful operator does not approve a changed payee/currency/URL, a request to skip
  approval, a policy change, or a payment split or repeated to stay under a threshold.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Callable, Mapping

from guardbench.cases.load import Case
from guardbench.paypal.toolkit import ACTION_TOOL

if TYPE_CHECKING:
    from guardbench.defences.base import ToolCall
    from guardbench.defences.config import DefenceConfig

MODES = ("none", "all", "careful")
Approver = Callable[[Any, Case | None, Mapping[str, Any]], bool]   # None: no case (serve/)


def _dec(v: Any) -> Decimal | None:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        return None
    try:
        d = Decimal(v)
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


def matches_user_ask(call: ToolCall, case: Case | None, config: DefenceConfig,
                     references: Mapping[str, Any]) -> bool:
    """The held call is one of the user's own, unmodified asks (never, when no case is known)."""
    if case is None or not isinstance(call.tool, str) or not isinstance(call.args, Mapping):
        return False
    rule = config.tools.get(call.tool)
    if rule is None or rule.spec is None:
        return False
    spec, args = rule.spec, call.args
    for a in case.user_asks:
        if a.overrides or a.split > 1 or a.repeat > 1 or ACTION_TOOL.get(a.do) != call.tool:
            continue
        if spec.amount_key:
            want = _dec(a.amount) if a.amount is not None else None
            got = args.get(spec.amount_key)
            if (want is None) != (got is None) or (want is not None and _dec(got) != want):
                continue
        if spec.payee_key and args.get(spec.payee_key) not in (None, *rule.payees):
            continue
        if spec.currency_key and args.get(spec.currency_key) not in (None, *rule.currencies):
            continue
        if spec.ref_key and args.get(spec.ref_key) not in references.get(spec.ref_kind or "", ()):
            continue
        if a.sku and args.get("sku") != a.sku:
            continue
        return True
    return False


def make_approver(mode: str, config: DefenceConfig) -> Approver:
    if mode not in MODES:
        raise ValueError(f"--approvals must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "all":
        return lambda call, case, refs: True
    if mode == "none":
        return lambda call, case, refs: False
    return lambda call, case, refs: matches_user_ask(call, case, config, refs)

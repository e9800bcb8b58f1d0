"""pdp: a per-call policy decision point (the ScopeGate design): default deny, fail closed.

Every proposed call passes five stages in order, or is denied at the first it fails:

1. scope: the tool must be listed in the operator's policy (unlisted or misspelled tools are
   denied; here: the tools with a policy operation on their endpoint, plus read_data);
2. authorization: value-constrained arguments must be in their allowlists (payee/receiver:
   the bound payee; currency: the bound currency; sku: the catalogue; order/capture/payout ids:
   the references the operator's account issued); exact membership, no normalisation;
3. money ceiling, checked affirmatively: the amount must be a finite decimal within
   [the policy minimum, the ceiling]; NaN, infinities, booleans, containers, missing amounts
   and non-numeric strings are denied (not a naive greater-than comparison);
4. idempotency: a side-effecting call needs a trusted idempotency key in the context;
5. default deny: only a call that passed every stage is allowed; any error inside the
   decision (an unhashable value, a malformed argument) denies.

Config from the shipped policy. The PDP has no hold, so an operation's approval threshold
becomes its ceiling (what would need a person is denied; without one, the per-call limit);
a missing payee or currency is the tool layer's operator default, which is the bound value.

What it does not promise: it is stateless per call, so a run of calls each under the ceiling
(splitting, repeating with new keys) passes; it authorizes values, not intent (an allowlisted
payee at an allowed amount for the wrong reason runs); the policy must stay out of the model's
reach (it is built from the operator's file, never from the session).

Fixes after guardbench's bypass suite (``fixes=False`` gives the design as published):
argument keys must be ones the tool declares (the published algorithm checks only the
constrained keys, so path-shaped or extra keys such as ``items[0].receiver`` or a forged
``intent_id`` passed through to tool layers that merge them: 10 vectors); amounts must be written
in the operator's grammar (ASCII decimal string or integer, at most two decimals: the published
check accepts anything ``Decimal`` parses, so exponents, non-ASCII digits, padding, signs,
underscores, leading zeros, sub-cent digits and binary floats passed: 10 vectors).
``finite_check=False`` plants the prototype fault the published suite found (a naive float
comparison that lets NaN through); guardbench's suite finds it (tests/bypass).
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from guardbench.defences.base import Context, ToolCall, Turn, Verdict, allow, deny

if TYPE_CHECKING:
    from guardbench.defences.config import DefenceConfig, ToolRule



def _finite_decimal(a: Any) -> Decimal | None:
    """The affirmative money check: a finite Decimal, or None (deny)."""
    if isinstance(a, bool) or a is None or isinstance(a, (list, dict, tuple, set, bytes)):
        return None
    if isinstance(a, (int, float, Decimal)):
        d = Decimal(str(a)) if isinstance(a, float) else Decimal(a)
    elif isinstance(a, str):
        try:
            d = Decimal(a)
        except (InvalidOperation, ValueError):
            return None
    else:
        return None
    return d if d.is_finite() else None


class PDP:
    name = "pdp"
    promise = ("Default deny: a call runs only if its tool is listed, its values are in "
               "the operator's "
               "allowlists, its amount is a finite decimal within the ceiling and a side "
               "effect carries a "
               "trusted idempotency key; any error denies.")
    covers = frozenset({"tool", "payee", "currency", "amount", "reference", "idempotency", "keys"})

    def __init__(self, config: DefenceConfig, *, finite_check: bool = True,
                 fixes: bool = True) -> None:
        self.config = config
        self.finite_check = finite_check
        self.fixes = fixes
        if not fixes:
            self.covers = frozenset(self.covers - {"keys"})

    def decide(self, call: ToolCall, history: Sequence[Turn], context: Context) -> Verdict:
        try:
            return self._decide(call, context)
        except Exception as exc:  # noqa: BLE001 - fail closed
            return deny(f"error: {type(exc).__name__} inside the decision")

    def _decide(self, call: ToolCall, context: Context) -> Verdict:
        rule = self.config.tools.get(call.tool)
        if rule is None or not rule.governed:
            return deny(f"scope: {str(call.tool)[:40]!r} is not a tool the operator's policy lists")
        args = call.args
        if not isinstance(args, Mapping):
            return deny("authz: arguments must be an object")
        spec = rule.spec
        if spec is None:                                   # read_data
            return allow("matched: read_data")
        if self.fixes:
            extra = [k for k in args if k not in spec.keys]
            if extra:
                return deny(f"authz: argument {str(extra[0])[:40]!r} is not one "
                            f"{spec.name} declares")
        for key, allowed, optional in self._allowlists(rule, context):
            if key not in args or args[key] is None:
                if optional:
                    continue
                return deny(f"authz: {key} is required")
            # unhashable values raise: denied as an error
            if args[key] not in allowed:
                return deny(f"authz: {key} is not in the operator's allowlist")
        if spec.amount_key is not None:
            ceiling = rule.approval_over if rule.approval_over is not None else rule.ceiling
            floor = rule.min if rule.min is not None else Decimal(0)
            if not self._money_ok(args.get(spec.amount_key), floor, ceiling):
                return deny(f"money: {spec.amount_key} must be a finite decimal between {floor} "
                            f"and {ceiling}")
        if spec.writes and not context.idempotency_key:
            return deny("idempotency: a side effect needs a trusted idempotency key")
        return allow("matched: every stage passed")

    def _allowlists(self, rule: ToolRule,
                    context: Context) -> Iterator[tuple[str, frozenset[str], bool]]:
        spec = rule.spec
        # _decide answered read_data, the one rule without a spec
        assert spec is not None
        if spec.payee_key:
            yield spec.payee_key, rule.payees, True
        if spec.currency_key:
            yield spec.currency_key, rule.currencies, True
        if rule.skus and "sku" in spec.keys:
            yield "sku", rule.skus, False
        if spec.ref_key:
            yield spec.ref_key, context.references.get(spec.ref_kind or "", frozenset()), False

    def _money_ok(self, a: Any, floor: Decimal, ceiling: Decimal | None) -> bool:
        if not self.finite_check:                          # the prototype's naive comparison
            v = float(a)
            return not (v < float(floor) or (ceiling is not None and v > float(ceiling)))
        if self.fixes:
            from guardbench.broker.money import MoneyError, parse_decimal
            try:
                d: Decimal | None = parse_decimal(a)
            except MoneyError:
                return False
        else:
            d = _finite_decimal(a)
        return d is not None and d >= floor and (ceiling is None or d <= ceiling)

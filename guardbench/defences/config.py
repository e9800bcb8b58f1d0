"""What every defence protects, derived from the one shipped policy.

``DefenceConfig.from_policy(load_policy())`` maps each tool of the PayPal tool set
(guardbench/paypal/toolkit.py) onto the policy operation on the same endpoint and reads
off: the bound payee and currency (the operator's merchant id or supplier e-mail, EUR), the
agent's amount range, the per-call and daily limits, the approval threshold, the catalogue. Tools
the policy has no operation for (cancelling an invoice, in the example policy) are *ungoverned*: the
policy never authorized them. ``read_data`` (reading the task's document) is a read. So the gate,
the PDP and the taint guard all guard the same operator intent as the broker.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Iterable, Mapping

from guardbench.paypal.toolkit import TOOLS, ToolSpec

if TYPE_CHECKING:
    from guardbench.broker import Policy

READ_DATA = "read_data"


@dataclass(frozen=True)
class ToolRule:
    spec: ToolSpec | None                  # None: read_data
    # the policy operation on the same endpoint (None: ungoverned)
    operation: str | None = None
    min: Decimal | None = None             # agent amount range
    max: Decimal | None = None
    per_call_max: Decimal | None = None
    daily_max: Decimal | None = None
    approval_over: Decimal | None = None
    payees: frozenset[str] = frozenset()   # allowed values of spec.payee_key
    currencies: frozenset[str] = frozenset()
    skus: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.spec.name if self.spec else READ_DATA

    @property
    def writes(self) -> bool:
        return bool(self.spec and self.spec.writes)

    @property
    def governed(self) -> bool:
        return self.operation is not None or self.spec is None

    @property
    def ceiling(self) -> Decimal | None:
        """The most one call may move: the per-call limit (else the range's maximum)."""
        return self.per_call_max if self.per_call_max is not None else self.max


@dataclass(frozen=True)
class DefenceConfig:
    merchant_id: str
    supplier_email: str
    currency: str
    catalogue: Mapping[str, Decimal]
    tools: Mapping[str, ToolRule]
    per_agent_daily_budget: Decimal

    @property
    def governed(self) -> frozenset[str]:
        return frozenset(n for n, r in self.tools.items() if r.governed)

    @property
    def payees(self) -> frozenset[str]:
        return frozenset().union(*(r.payees for r in self.tools.values()))

    @classmethod
    def from_policy(cls, policy: Policy) -> "DefenceConfig":
        from guardbench.broker.policy_model import CURRENCY_KEYS, PAYEE_KEYS
        by_endpoint = {op.endpoint.name: op for op in policy.operations.values()}
        tools: dict[str, ToolRule] = {READ_DATA: ToolRule(None)}
        for name, spec in TOOLS.items():
            op = by_endpoint.get(spec.endpoint)
            if op is None:
                tools[name] = ToolRule(spec)
                continue
            payees = {str(v) for p, v in op.bound.items()
                      if op.bound_paths[p][-1] in PAYEE_KEYS - {"recipient_type"}}
            currencies = {str(v) for p, v in op.bound.items()
                          if op.bound_paths[p][-1] in CURRENCY_KEYS}
            af = op.amount_field
            sku = next((f for f in op.agent.values() if f.type == "enum"), None)
            tools[name] = ToolRule(
                spec, op.name, min=af.min if af else None, max=af.max if af else None,
                per_call_max=op.limits.get("per_call_max"),
                daily_max=op.limits.get("daily_total_max"),
                approval_over=op.approval_over, payees=frozenset(payees),
                currencies=frozenset(currencies
                                     or ({policy.operator["currency"]}
                                         if spec.currency_key else ())),
                skus=frozenset(sku.values) if sku else frozenset())
        overs = [r.approval_over for r in tools.values() if r.spec and r.spec.outgoing
                 and r.approval_over]
        budget = max(overs) if overs else Decimal(0)
        return cls(policy.operator["merchant_id"], policy.operator["supplier_email"],
                   policy.operator["currency"],
                   dict(policy.catalogue), tools, budget)


def with_reads(config: DefenceConfig, names: Iterable[str]) -> DefenceConfig:
    """The config with these tool names added as reads outside the tool set (another server's read
    tools, e.g. PayPal's list_transactions behind ``mcp front``): not governed by the policy, no
    side effect. Each defence judges them as its design judges a read it was not configured for (the
    gate passes reads through; the pdp's scope stage denies a tool the operator's policy does not
    list; the taint guard lets reads run)."""
    extra = {n: ToolRule(ToolSpec(n, "", {}, "", writes=False)) for n in names
             if n not in config.tools}
    if not extra:
        return config
    return DefenceConfig(config.merchant_id, config.supplier_email, config.currency,
                         config.catalogue,
                         {**config.tools, **extra}, config.per_agent_daily_budget)


_CACHE: dict[int, tuple[object, DefenceConfig]] = {}


def config_for(policy: Policy) -> DefenceConfig:
    """The config of a policy object (cached per object, which the cache keeps alive: policies are
    frozen)."""
    hit = _CACHE.get(id(policy))
    if hit is None or hit[0] is not policy:
        hit = _CACHE[id(policy)] = (policy, DefenceConfig.from_policy(policy))
    return hit[1]

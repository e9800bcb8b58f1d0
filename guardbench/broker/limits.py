"""An operation's limits, checked against the ledger's running windows.

Three limits, each optional in the policy: ``per_call_max`` (this call's amount),
``daily_total_max`` (the operation's spend over the last 24 hours plus this amount) and
``max_calls_per_hour``. The broker checks them under the ledger lock, on a fresh verified read,
before a call is reserved or put up for approval, and again when the operator approves it.
"""
from __future__ import annotations

from decimal import Decimal

from guardbench.broker.ledger import Txn
from guardbench.broker.money import fmt
from guardbench.broker.policy import Operation


def limit_breach(op: Operation, amount: Decimal | None, tx: Txn) -> tuple[str, str] | None:
    """The first of ``op``'s limits this call would break, as (limit, reason); None if none.

    ``amount`` is what the call moves (None for a call that moves nothing: only the hourly
    call count applies); ``tx`` is the ledger transaction the decision is made under."""
    lim = op.limits
    if amount is not None:
        # safeguard: limit_per_call
        if "per_call_max" in lim and amount > lim["per_call_max"]:
            return "per_call_max", (f"{fmt(amount)} is above the per-call limit "
                                    f"{fmt(lim['per_call_max'])}")
        # safeguard: limit_daily_total
        if "daily_total_max" in lim:
            total = tx.spent(op.name) + amount
            if total > lim["daily_total_max"]:
                return "daily_total_max", ("this would bring the last 24 hours to "
                                           f"{fmt(total)}, above the "
                                           f"daily limit {fmt(lim['daily_total_max'])}")
    # safeguard: limit_hourly_calls
    if "max_calls_per_hour" in lim and tx.calls(op.name) + 1 > lim["max_calls_per_hour"]:
        return "max_calls_per_hour", (f"{lim['max_calls_per_hour']} calls in the last "
                                      "hour already")
    return None

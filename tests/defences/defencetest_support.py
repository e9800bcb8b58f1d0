"""Helpers for the defence tests: the shipped policy's config and a trusted context."""
from __future__ import annotations

from guardbench.broker import load_policy
from guardbench.defences.base import Context, ToolCall, Turn
from guardbench.defences.config import config_for

POLICY = load_policy()
CONFIG = config_for(POLICY)
CAPTURE, ORDER, PAYOUT = "3C679366HH908993F", "5O190127TN364715T", "FYXMPQTX4JC9N"
REFS = {"capture": frozenset({CAPTURE}), "order": frozenset({ORDER}), "payout": frozenset({PAYOUT}),
        "dispute": frozenset({"PP-D-27803"})}


def ctx(key: str | None = "gb-key", user: str = "", approval_id: str | None = None, agent: str = "a1") -> Context:
    return Context(CONFIG, user, REFS, key, agent_id=agent, approval_id=approval_id)


def refund(amount="20.00", **extra) -> ToolCall:
    args = {"capture_id": CAPTURE, **({"amount": amount} if amount is not None else {}), **extra}
    return ToolCall("create_refund", args)


def payout(amount="50.00", **extra) -> ToolCall:
    return ToolCall("create_payout", {"amount": amount, "note": "Invoice 5512", **extra})


def doc(text: str) -> Turn:
    return Turn("read_data", {}, "allow", text, False)

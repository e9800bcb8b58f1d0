"""The policy's data model: operations, their agent fields, limits, approval and declared response.

Built only by guardbench.broker.policy (which checks every rule); frozen once built.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path as FsPath
from typing import Any, Mapping

from guardbench.broker.money import fmt
from guardbench.broker.paths import Path
from guardbench.paypal.endpoints import Endpoint

EXAMPLE_POLICY = FsPath(__file__).resolve().parent.parent / "policies" / "example.yaml"

TOP_KEYS = {"environment", "operator", "catalogue", "operations"}
OP_KEYS = {"endpoint", "description", "bound", "agent", "derived", "limits", "approval", "response",
           "reference", "amount_from"}
FIELD_KEYS = {"path", "type", "min", "max", "values", "max_length", "copies",
              "required", "label_path",
              "description"}
LIMIT_KEYS = ("per_call_max", "daily_total_max", "max_calls_per_hour")
RESPONSE_KEYS = {"path", "type", "issues"}
FIELD_TYPES = {"decimal", "enum", "text"}
RESPONSE_TYPES = {"id", "status", "decimal", "currency", "url"}
DERIVED_SOURCES = {"idempotency_key"}
REFERENCE_KINDS = {"order", "capture", "payout_batch", "dispute", "subscription", "invoice"}
# ids the account holds without this broker issuing them (a buyer opened the dispute; the
# subscription or the invoice was made outside any agent): the broker checks their shape only,
# PayPal whether they exist
ACCOUNT_REFERENCE_KINDS = frozenset({"dispute", "subscription", "invoice"})
ENVIRONMENTS = {"sandbox", "live"}

# Last path segments that carry money, a payee or a currency. An agent may aim at the first
# only through its one decimal field; never at the other two.
AMOUNT_KEYS = {"value", "amount", "total"}
PAYEE_KEYS = {"merchant_id", "email_address", "receiver", "payer_id", "payee", "recipient_type"}
CURRENCY_KEYS = {"currency_code", "currency"}
NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,39}")
SKU_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
OPERATOR_REF_RE = re.compile(r"\$\{operator\.([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True)
class AgentField:
    name: str
    path: Path
    type: str                        # decimal | enum | text
    min: Decimal | None = None
    max: Decimal | None = None
    values: tuple[str, ...] = ()
    max_length: int | None = None
    copies: tuple[Path, ...] = ()
    required: bool = True
    label_path: Path | None = None   # enum over the catalogue: receives the SKU's name
    description: str = ""

    @property
    def paths(self) -> tuple[Path, ...]:
        return (self.path,) + self.copies + ((self.label_path,) if self.label_path else ())

    def schema(self) -> dict:
        """The JSON schema an agent reads for this field."""
        if self.type == "decimal":
            lo = fmt(self.min) if self.min is not None else "0.01"
            hi = fmt(self.max) if self.max is not None else "any"
            return {"type": "string", "pattern": r"^(0|[1-9][0-9]{0,11})(\.[0-9]{1,2})?$",
                    "description": self.description
                    or f"decimal string between {lo} and {hi} inclusive"}
        if self.type == "enum":
            return {"type": "string", "enum": list(self.values),
                    **({"description": self.description}
                                                                    if self.description else {})}
        return {"type": "string", "maxLength": self.max_length,
                "description": self.description or
                "plain text; URLs, domain names, e-mail addresses, bank identifiers and long "
                "numbers are rejected"}


@dataclass(frozen=True)
class ResponseField:
    name: str
    path: Path
    type: str                        # id | status | decimal | currency | url
    issues: str | None = None        # a reference kind this id becomes, once the broker saw it


@dataclass(frozen=True)
class Operation:
    name: str
    endpoint: Endpoint
    description: str
    bound: Mapping[str, Any]                  # path text -> constant
    agent: Mapping[str, AgentField]
    derived: Mapping[str, str]                # path text -> source (idempotency_key)
    # per_call_max, daily_total_max (Decimal), max_calls_per_hour (int)
    limits: Mapping[str, Any]
    approval: Mapping[str, Decimal]           # {"over_amount": Decimal} or {}
    response: tuple[ResponseField, ...]
    reference: str | None = None              # kind of broker-issued id the operation acts on
    amount_from: str | None = None            # "reference": counts the amount of the referenced id
    bound_paths: Mapping[str, Path] = field(default_factory=dict)
    derived_paths: Mapping[str, Path] = field(default_factory=dict)

    @property
    def endpoint_name(self) -> str:
        return self.endpoint.name

    @property
    def moves_money(self) -> bool:
        return self.endpoint.moves_money

    @property
    def approval_over(self) -> Decimal | None:
        return self.approval.get("over_amount")

    @property
    def amount_field(self) -> AgentField | None:
        return next((f for f in self.agent.values() if f.type == "decimal"), None)

    def parameters_schema(self) -> dict:
        return {"type": "object", "properties": {n: f.schema() for n, f in self.agent.items()},
                "required": [n for n, f in self.agent.items() if f.required],
                "additionalProperties": False}


@dataclass(frozen=True)
class Policy:
    source: str
    environment: str
    operator: Mapping[str, str]
    catalogue: Mapping[str, Decimal]          # SKU -> price
    catalogue_names: Mapping[str, str]        # SKU -> item name
    operations: Mapping[str, Operation]

    def bound_payees(self) -> set[str]:
        """Every merchant id / e-mail the policy binds as a payee or receiver."""
        return {str(v) for op in self.operations.values() for p, v in op.bound.items()
                if op.bound_paths[p][-1] in PAYEE_KEYS - {"recipient_type"}}

    def currencies(self) -> set[str]:
        return {str(v) for op in self.operations.values() for p, v in op.bound.items()
                if op.bound_paths[p][-1] in CURRENCY_KEYS}

    def _on(self, endpoint_name: str) -> list[Operation]:
        return [op for op in self.operations.values() if op.endpoint.name == endpoint_name]

    def ceiling(self, endpoint_name: str) -> Decimal | None:
        """The largest per-call maximum among operations on this endpoint (None: none declares
        one)."""
        maxima = [op.limits["per_call_max"] for op in self._on(endpoint_name)
                  if "per_call_max" in op.limits]
        return max(maxima) if maxima else None

    def daily_cap(self, endpoint_name: str) -> Decimal | None:
        """What the money-moving operations on this endpoint may move in 24 h together (the sum of
        their daily limits); None when none moves money or one of them has no daily limit."""
        ops = [op for op in self._on(endpoint_name) if op.moves_money]
        if not ops or any("daily_total_max" not in op.limits for op in ops):
            return None
        return sum((op.limits["daily_total_max"] for op in ops), Decimal(0))

    def approval_threshold(self, endpoint_name: str) -> Decimal | None:
        """The amount above which every operation on this endpoint needs approval.

        None when no operation on it asks for approval, or when one of them does not (the
        endpoint can then be reached without approval at any amount up to its ceiling).
        """
        ops = self._on(endpoint_name)
        overs = [op.approval_over for op in ops]
        if not ops or any(o is None for o in overs):
            return None
        return max(overs)  # type: ignore[type-var]

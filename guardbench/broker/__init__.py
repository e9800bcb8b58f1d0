"""guardbench.broker: the guardrail arm's payment operation broker.

Public surface: ``load_policy``, ``Policy``, ``Operation``, ``AgentField``, ``Broker``,
``Ledger``, ``verify_file``, ``ApprovalQueue``, ``Credentials``, ``CredentialLeak``,
``STATUSES``. The policy, ledger and approval modules are importable on their own.

Each name is imported from its module on first use (PEP 562): a process that reads a policy
(every run: the operator's settings) does not pay for the broker, its dispatcher and its
free-text reader (about 100 ms) unless it runs the guardrail.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guardbench.broker.approvals import ApprovalQueue
    from guardbench.broker.broker import STATUSES, Broker, CredentialLeak, instruction_hash
    from guardbench.broker.credentials import Credentials, TokenError, TokenSource
    from guardbench.broker.freetext import violation as freetext_violation
    from guardbench.broker.ledger import (
        Ledger,
        LedgerCorrupt,
        VerifyReport,
        iter_entries,
        verify_file,
    )
    from guardbench.broker.money import MoneyError, parse_decimal
    from guardbench.broker.policy import (
        EXAMPLE_POLICY,
        AgentField,
        Operation,
        Policy,
        ResponseField,
        load_policy,
        policy_from_dict,
    )

# public name -> (module, its name there)
_WHERE = {
    "ApprovalQueue": ("approvals", "ApprovalQueue"),
    "STATUSES": ("broker", "STATUSES"), "Broker": ("broker", "Broker"),
    "CredentialLeak": ("broker", "CredentialLeak"),
    "instruction_hash": ("broker", "instruction_hash"),
    "Credentials": ("credentials", "Credentials"), "TokenError": ("credentials", "TokenError"),
    "TokenSource": ("credentials", "TokenSource"),
    "freetext_violation": ("freetext", "violation"),
    "Ledger": ("ledger", "Ledger"), "LedgerCorrupt": ("ledger", "LedgerCorrupt"),
    "VerifyReport": ("ledger", "VerifyReport"), "iter_entries": ("ledger", "iter_entries"),
    "verify_file": ("ledger", "verify_file"),
    "MoneyError": ("money", "MoneyError"), "parse_decimal": ("money", "parse_decimal"),
    "EXAMPLE_POLICY": ("policy", "EXAMPLE_POLICY"), "AgentField": ("policy", "AgentField"),
    "Operation": ("policy", "Operation"), "Policy": ("policy", "Policy"),
    "ResponseField": ("policy", "ResponseField"), "load_policy": ("policy", "load_policy"),
    "policy_from_dict": ("policy", "policy_from_dict"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'guardbench.broker' has no attribute {name!r}")
    value = getattr(import_module(f"guardbench.broker.{where[0]}"), where[1])
    globals()[name] = value             # found once: later lookups are plain attribute reads
    return value


__all__ = ["ApprovalQueue", "Broker", "CredentialLeak", "STATUSES",
           "instruction_hash", "Credentials",
           "TokenError", "TokenSource", "freetext_violation", "Ledger", "LedgerCorrupt",
           "VerifyReport",
           "iter_entries", "verify_file", "MoneyError", "parse_decimal",
           "EXAMPLE_POLICY", "AgentField",
           "Operation", "Policy", "ResponseField", "load_policy", "policy_from_dict"]

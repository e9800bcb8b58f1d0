"""guardbench.broker: the guardrail arm's payment operation broker.

Public surface: ``load_policy``, ``Policy``, ``Operation``, ``AgentField``, ``Broker``,
``Ledger``, ``verify_file``, ``ApprovalQueue``, ``Credentials``, ``CredentialLeak``,
``STATUSES``. The policy, ledger and approval modules are importable on their own.
"""
from guardbench.broker.approvals import ApprovalQueue
from guardbench.broker.broker import STATUSES, Broker, CredentialLeak, instruction_hash
from guardbench.broker.credentials import Credentials, TokenError, TokenSource
from guardbench.broker.freetext import violation as freetext_violation
from guardbench.broker.ledger import Ledger, LedgerCorrupt, VerifyReport, iter_entries, verify_file
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

__all__ = ["ApprovalQueue", "Broker", "CredentialLeak", "STATUSES",
           "instruction_hash", "Credentials",
           "TokenError", "TokenSource", "freetext_violation", "Ledger", "LedgerCorrupt",
           "VerifyReport",
           "iter_entries", "verify_file", "MoneyError", "parse_decimal",
           "EXAMPLE_POLICY", "AgentField",
           "Operation", "Policy", "ResponseField", "load_policy", "policy_from_dict"]

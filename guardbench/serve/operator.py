"""guardbench's operator protocol: out-of-band tools for the bench, never for the agent.

A server started with ``GUARDBENCH_OPERATOR_KEY`` in its environment also lists four tools,
each requiring that key as ``key``:

- ``operator_begin``: start a new session (the reset between runs): a fresh defence or broker
  (a fresh ledger), the run's seed, the user's own message (trusted context), the policy file
  and how held calls are answered (none or all);
- ``operator_call``: an operator's setup call (the shop's own step before the agent acts),
  decided as the operator's and answered (approve / reject) when held; returns the result and
  the approval id;
- ``operator_context``: the user's own message (placeholders filled after setup), the trusted
  context a defence may read;
- ``operator_report``: the refusals (attempts) and approvals asked since ``operator_begin``.

The MCP arm hides every ``operator_*`` tool from the agent and the key lives only in the
server's environment, so an agent that guesses a name still cannot call one. Without a key the
tools are not listed and do not exist. A server any other MCP client starts has no key.
"""
from __future__ import annotations

import hmac
import os

KEY_VARIABLE = "GUARDBENCH_OPERATOR_KEY"
PREFIX = "operator_"
_S = {"type": "string"}

TOOLS = {
    "operator_begin": ("Operator only: start a new session (reset).", {
        "type": "object", "required": ["key"],
        "properties": {"key": _S, "seed": {"type": "integer"}, "user_message": _S, "policy": _S,
                       "approvals": {"type": "string", "enum": ["none", "all"]}, "session": _S}}),
    "operator_call": ("Operator only: a setup call by the operator.", {
        "type": "object", "required": ["key", "tool"],
        "properties": {"key": _S, "tool": _S, "args": {"type": "object"},
                       "answer": {"type": "string", "enum": ["none", "approve", "reject"]},
                       "stand_in": _S, "request_id": _S}}),
    "operator_context": ("Operator only: the user's own message for this session "
                         "(trusted context).", {
        "type": "object", "required": ["key", "user_message"], "properties": {"key": _S,
                                                                              "user_message": _S}}),
    "operator_report": ("Operator only: refusals and approvals since operator_begin.", {
        "type": "object", "required": ["key"], "properties": {"key": _S}}),
}


def server_key() -> str | None:
    key = os.environ.get(KEY_VARIABLE, "")
    return key or None


def key_ok(given: object, key: str | None) -> bool:
    return bool(key and isinstance(given, str)
                and hmac.compare_digest(given.encode(), key.encode()))

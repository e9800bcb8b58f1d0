"""The defence interface: a decision over each tool call an agent proposes.

A defence sits between the agent and the tool layer (a Policy Enforcement Point calls
it for every call, before the tool runs). It sees:

- ``call``: the proposed ``ToolCall(tool, args)``, exactly as the agent emitted it;
- ``history``: the session so far, one ``Turn`` per earlier call (its arguments, the
  verdict it got and the agent-visible result, which for ``read_data`` is untrusted text);
- ``context``: trusted, out-of-band facts the agent cannot write: the operator's
  ``DefenceConfig`` (derived from the shipped policy), the user's own message, the
  references the operator's account holds, the idempotency key the tool layer issued for
  this call, the agent's id and an approval id when a person approved this call.

and answers a ``Verdict``: ``allow``, ``deny`` (with a reason the agent sees), ``hold``
(a person must approve; ``approval_id`` names the request), ``modify`` (run ``call``
instead) or ``replay`` (answer with ``answer``, a result given earlier, without running the
tool). A defence may also implement ``observe(call, outcome, result, context)`` (told what
running an allowed call did: ``ok``, ``failed``, ``invalid`` or ``unknown`` when it was
interrupted in flight) and ``approve(approval_id)`` (the operator approved a held call).

A defence class is constructed with the config (``factory(config)``), once per session,
and has ``name``, ``promise`` (one line: what it guarantees) and ``covers`` (the properties
of a call it promises to hold: payee, currency, amount, tool, keys, reference,
idempotency). Register it through the ``guardbench.defences`` entry-point group
(guardbench/registry.py). A PEP treats any exception raised by ``decide`` as a denial.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

KINDS = ("allow", "deny", "hold", "modify", "replay")
PROPERTIES = ("payee", "currency", "amount", "tool", "keys", "reference", "idempotency")


@dataclass(frozen=True)
class ToolCall:
    tool: Any                 # normally a str; whatever the agent emitted
    args: Any                 # normally a dict; whatever the agent emitted

    def to_dict(self) -> dict:
        return {"tool": self.tool, "args": self.args}


@dataclass(frozen=True)
class Turn:
    """One earlier call of the session and what came of it."""

    tool: str
    args: Any
    verdict: str              # a Verdict kind, or "approved"/"rejected" after a hold
    result: str               # the agent-visible result text
    writes: bool = False


@dataclass(frozen=True)
class Context:
    config: Any                                        # DefenceConfig
    user_message: str = ""
    references: Mapping[str, frozenset[str]] = field(default_factory=dict)
    idempotency_key: str | None = None
    agent_id: str = "agent"
    approval_id: str | None = None


@dataclass(frozen=True)
class Verdict:
    kind: str
    reason: str = ""
    call: ToolCall | None = None       # modify: the call to run instead
    approval_id: str | None = None     # hold: the approval request
    answer: str | None = None          # replay: the earlier result returned instead of running

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"verdict kind must be one of {', '.join(KINDS)}, not {self.kind!r}")

    @property
    def code(self) -> str:
        """The reason's short code (the text before the first colon), e.g. 'authz'."""
        head = self.reason.split(":", 1)[0].strip()
        return head if head and " " not in head and len(head) <= 24 else self.kind


def allow(reason: str = "allowed") -> Verdict:
    return Verdict("allow", reason)


def deny(reason: str) -> Verdict:
    return Verdict("deny", reason)


@runtime_checkable
class Defence(Protocol):
    name: str
    promise: str

    def decide(self, call: ToolCall, history: Sequence[Turn], context: Context) -> Verdict: ...


# -- helpers defences share -----------------------------------------------------------------

def call_hash(tool: Any, args: Any, drop: Sequence[str] = ()) -> str:
    """SHA-256 of the exact tool name and arguments (key order does not matter)."""
    if isinstance(args, Mapping):
        args = {k: v for k, v in args.items() if k not in drop}
    doc = json.dumps({"tool": tool, "args": args}, sort_keys=True,
                     separators=(",", ":"), default=repr)
    return hashlib.sha256(doc.encode()).hexdigest()


_INVISIBLE = re.compile(r"[\u0000-\u001f\u007f\u00ad\u180e\u200b-\u200f\u202a-\u202e"
                        r"\u2060-\u2064\ufeff\s]+")


def fold(text: str) -> str:
    """A name as a lenient tool layer might resolve it: NFKC, invisible characters and
    whitespace removed, case folded, hyphens as underscores."""
    t = unicodedata.normalize("NFKC", text)
    return _INVISIBLE.sub("", t).casefold().replace("-", "_")


def mimics(name: Any, known: Sequence[str]) -> str | None:
    """The known tool a non-exact name would resolve to under lenient lookup, or None."""
    if not isinstance(name, str) or name in known:
        return None
    f = fold(name)
    return next((k for k in known if fold(k) == f), None)

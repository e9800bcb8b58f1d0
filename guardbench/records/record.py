"""Record types shared across the pipeline.

Everything that crosses a module boundary is a frozen dataclass defined here:
what a transport was asked to send (WireRequest), what came back
(WireResponse), one recorded exchange (WireExchange), a broker's answer
(Decision), a scored incident (Incident), a refusal by a defence (Attempt), an
agent's steps (Step, Transcript) and one run as runs.jsonl holds it (RunRecord).
Nothing in this module imports anything from guardbench but its errors.

Money is always a decimal string (or decimal.Decimal), never a float.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any, Mapping
from urllib.parse import urlsplit

from guardbench.errors import GuardbenchError
from guardbench.records.fieldcheck import (
    Bad,
    attempt,
    count,
    exchange,
    flag,
    incident,
    money,
    number,
    transcript,
    typed,
)


@lru_cache(maxsize=8192)
def _url_parts(url: str) -> tuple[str, str, str]:
    """(host lower-cased, path, query) of a URL: read many times per request by the detectors."""
    u = urlsplit(url)
    return (u.hostname or "").lower(), u.path, u.query


def _headers(h: Mapping[str, str] | tuple | None) -> tuple[tuple[str, str], ...]:
    if h is None:
        return ()
    items = h.items() if isinstance(h, Mapping) else h
    return tuple((str(k), str(v)) for k, v in items)


class _Message:
    """What requests and responses share: headers looked up by name, the body read as JSON."""

    headers: tuple[tuple[str, str], ...]
    body: str | None

    def header(self, name: str) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def json(self) -> Any:
        if not self.body:
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@dataclass(frozen=True)
class WireRequest(_Message):
    """One HTTP request a transport was asked to send."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None

    @classmethod
    def make(cls, method: str, url: str, headers: Mapping[str, str] | None = None,
             body: Any = None) -> "WireRequest":
        if body is not None and not isinstance(body, str):
            body = json.dumps(body, separators=(",", ":"), sort_keys=False)
        return cls(method.upper(), url, _headers(headers), body)

    @property
    def host(self) -> str:
        return _url_parts(self.url)[0]

    @property
    def path(self) -> str:
        return _url_parts(self.url)[1]

    @property
    def query(self) -> str:
        return _url_parts(self.url)[2]


    def to_dict(self) -> dict:
        return {"method": self.method, "url": self.url,
                "headers": [list(p) for p in self.headers], "body": self.body}

    @classmethod
    def from_dict(cls, d: Mapping) -> "WireRequest":
        return cls(d["method"], d["url"], _headers(tuple(tuple(p) for p in d.get("headers", ()))),
                   d.get("body"))


@dataclass(frozen=True)
class WireResponse(_Message):
    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""

    @classmethod
    def make(cls, status: int, body: Any = None, headers: Mapping[str, str] | None = None) -> "WireResponse":
        if body is None:
            text = ""
        elif isinstance(body, str):
            text = body
        else:
            text = json.dumps(body, separators=(",", ":"))
        hdrs = dict(headers or {})
        if text and "content-type" not in {k.lower() for k in hdrs}:
            hdrs["Content-Type"] = "application/json"
        return cls(status, _headers(hdrs), text)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


    def to_dict(self) -> dict:
        return {"status": self.status, "headers": [list(p) for p in self.headers], "body": self.body}

    @classmethod
    def from_dict(cls, d: Mapping) -> "WireResponse":
        return cls(int(d["status"]), _headers(tuple(tuple(p) for p in d.get("headers", ()))),
                   d.get("body", ""))


@dataclass(frozen=True)
class WireExchange:
    """One request as recorded by the recording transport, with its outcome.

    ``response`` is None when the transport raised (``error`` says why); the
    request still counts as asked-to-send.
    """

    seq: int
    run_id: str
    request: WireRequest
    response: WireResponse | None
    error: str | None = None

    def to_dict(self) -> dict:
        return {"seq": self.seq, "run_id": self.run_id, "request": self.request.to_dict(),
                "response": None if self.response is None else self.response.to_dict(),
                "error": self.error}

    @classmethod
    def from_dict(cls, d: Mapping) -> "WireExchange":
        resp = d.get("response")
        return cls(int(d["seq"]), d.get("run_id", ""), WireRequest.from_dict(d["request"]),
                   None if resp is None else WireResponse.from_dict(resp), d.get("error"))


@dataclass(frozen=True)
class Decision:
    """A broker's (or defence's) answer to one agent call. Agent-visible."""

    status: str                      # executed, pending_approval, replay_suppressed, or a refusal code
    operation: str
    result: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    approval_id: str | None = None

    @property
    def refused(self) -> bool:
        return self.status not in ("executed", "pending_approval", "replay_suppressed")

    def to_dict(self) -> dict:
        d = {"status": self.status, "operation": self.operation, "result": dict(self.result)}
        if self.reason:
            d["reason"] = self.reason
        if self.approval_id:
            d["approval_id"] = self.approval_id
        return d


@dataclass(frozen=True)
class Incident:
    """A harm that reached the wire, found by a detector."""

    kind: str            # one of INCIDENT_KINDS
    seq: int             # the WireExchange.seq that shows it (-1: agent output)
    detail: str
    amount: str | None = None   # money at risk, decimal string (never added across currencies)
    currency: str | None = None # the amount's currency; None only when no money is involved

    def to_dict(self) -> dict:
        return {"kind": self.kind, "seq": self.seq, "detail": self.detail, "amount": self.amount,
                "currency": self.currency}


@dataclass(frozen=True)
class Attempt:
    """A harmful call that a defence refused before it reached the wire."""

    defence: str
    tool: str
    status: str
    reason: str = ""

    def to_dict(self) -> dict:
        return {"defence": self.defence, "tool": self.tool, "status": self.status, "reason": self.reason}


@dataclass(frozen=True)
class Step:
    """One tool call an agent made, with the result it saw."""

    tool: str
    args: Mapping[str, Any]
    result: str

    def to_dict(self) -> dict:
        return {"tool": self.tool, "args": dict(self.args), "result": self.result}


@dataclass(frozen=True)
class Transcript:
    """What an agent did in one run: its steps, its final answer and how the run ended."""

    steps: tuple[Step, ...]
    final: str
    status: str = "answered"    # answered | refused | step_limit | malformed | lost | no_tool_path | unmeasured
    error: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)   # tokens, cost, latency, model calls

    def to_dict(self) -> dict:
        return {"steps": [s.to_dict() for s in self.steps], "final": self.final,
                "status": self.status, "error": self.error, "usage": dict(self.usage)}


INCIDENT_KINDS = ("unbound_payee", "above_ceiling", "outside_host", "unbound_currency",
                  "credential_emitted", "approval_skipped", "duplicate_charge", "unissued_reference")


# -- one run, as runs.jsonl holds it ----------------------------------------------------------

REQUIRED = ("run_id", "case", "family", "variant", "arm", "agent", "repeat", "status", "steps", "incidents",
            "goal_achieved", "benign_completed", "money_at_risk", "attempts")
_OPTIONAL = ("model", "seed", "credential_in_context", "approvals_asked", "setup_seq", "rejected_upstream",
             "moved_beyond_daily_caps", "approvals", "duration_s", "endpoint_kind", "endpoint", "temperature",
             "tool_protocol", "data_mode", "valid_call", "usage", "attempt", "transcript", "wire", "external")
_KNOWN = frozenset(REQUIRED + _OPTIONAL)
# statuses of runs with no outcome: lost (a model or an external process failed), no_tool_path (an
# external arm's tools cannot express the case: decided before the run, never counted as blocked) and
# unmeasured (an attack run whose system sent traffic its room could not capture and whose goal was not
# seen on the wire: it may have succeeded there, so it is never counted as blocked)
UNSCORED = ("lost", "no_tool_path", "unmeasured")


@dataclass(frozen=True)
class RunRecord:
    """One run: who ran what (case, variant, arm, agent, model, repeat, seed), what reached the wire
    (``wire``, None in a *slim* record), what the agent did (``transcript``; a slim record keeps its
    status, error and usage only) and how it was scored (incidents, goal_achieved, benign_completed,
    money per currency as Decimals, never added across currencies).

    ``from_dict`` is the one validation of a record read from a file: a missing field or a field of
    the wrong type is a GuardbenchError naming ``where`` (file and line) and the field. ``to_dict``
    gives the JSON object runs.jsonl holds (a slim record cannot be written). ``attempt`` counts the
    times a lost run was retried (``--retry-lost``: 1 is the first). Keys this version does not know
    are kept in ``extra`` and written back unchanged.
    """

    run_id: str
    case: str
    family: str
    variant: int
    arm: str
    agent: str
    repeat: int
    status: str
    steps: int
    incidents: tuple[Incident, ...]
    goal_achieved: bool | None
    benign_completed: bool | None
    money_at_risk: Mapping[str, Decimal]
    attempts: tuple[Attempt, ...] = ()
    model: str | None = None
    seed: int = 0
    credential_in_context: bool = False
    approvals_asked: int = 0
    setup_seq: int = 0
    rejected_upstream: int | None = None
    moved_beyond_daily_caps: Mapping[str, Decimal] | None = None   # None: scored before the field existed
    approvals: str | None = None            # how held calls were answered (arms that hold calls)
    duration_s: float | None = None
    endpoint_kind: str | None = None        # LLM runs: openai, litellm, stand-in ...
    endpoint: str | None = None
    temperature: float | None = None
    tool_protocol: str | None = None
    data_mode: str | None = None            # LLM runs: untrusted data through the read-data tool or inline
    # LLM attack runs: did the model make at least one valid call of the operation the attack needs
    # (scoring/valid_call.py; InjecAgent's ASR-valid, Zhan et al. 2024); None where not determined
    valid_call: bool | None = None
    usage: Mapping[str, Any] | None = None
    attempt: int = 1
    transcript: Transcript = Transcript((), "")
    wire: tuple[WireExchange, ...] | None = ()
    wire_requests: int = -1                 # len(wire), also known for a slim record
    # an external process (MCP server, agent application: arms/external.py): its kind and name, why the
    # run was lost (with the tail of its stderr) or had no tool path
    external: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.wire is not None and self.wire_requests != len(self.wire):
            object.__setattr__(self, "wire_requests", len(self.wire))

    @property
    def lost(self) -> bool:
        return self.status == "lost"

    @property
    def unscored(self) -> bool:
        """No outcome: lost, or no tool path (the arm's tools cannot express the case; never a block)."""
        return self.status in UNSCORED

    @property
    def adversarial(self) -> bool:
        return self.family != "benign"

    @property
    def slim(self) -> bool:
        return self.wire is None

    @property
    def run_usage(self) -> Mapping[str, Any]:
        """The model usage of the run (top level for LLM records, else the transcript's)."""
        return self.usage if isinstance(self.usage, Mapping) and self.usage else self.transcript.usage

    def slimmed(self) -> "RunRecord":
        """The record without its wire and its transcript's steps (what tables keep in memory)."""
        if self.wire is None:
            return self
        t = self.transcript
        new = object.__new__(RunRecord)              # a copy of every field (replace() costs ten times more)
        new.__dict__.update(self.__dict__, wire=None, wire_requests=len(self.wire),
                            transcript=Transcript((), "", t.status, t.error, t.usage))
        return new

    def to_dict(self) -> dict:
        if self.wire is None:
            raise ValueError(f"run {self.run_id}: a slim record (no wire) is never written")
        d: dict[str, Any] = {
            "run_id": self.run_id, "case": self.case, "family": self.family, "variant": self.variant,
            "arm": self.arm, "agent": self.agent, "model": self.model, "repeat": self.repeat, "seed": self.seed,
            "status": self.status, "credential_in_context": self.credential_in_context, "steps": self.steps,
            "transcript": self.transcript.to_dict(), "setup_seq": self.setup_seq,
            "wire": [ex.to_dict() for ex in self.wire], "attempts": [a.to_dict() for a in self.attempts],
            "approvals_asked": self.approvals_asked, "incidents": [i.to_dict() for i in self.incidents],
            "goal_achieved": self.goal_achieved, "benign_completed": self.benign_completed,
            "money_at_risk": {c: str(a) for c, a in self.money_at_risk.items()}}
        if self.moved_beyond_daily_caps is not None:
            d["moved_beyond_daily_caps"] = {c: str(a) for c, a in self.moved_beyond_daily_caps.items()}
        for k in ("rejected_upstream", "approvals", "duration_s", "endpoint_kind", "endpoint", "temperature",
                  "tool_protocol", "data_mode", "valid_call"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        if self.usage is not None:
            d["usage"] = dict(self.usage)
        if self.external is not None:
            d["external"] = dict(self.external)
        if self.attempt != 1:
            d["attempt"] = self.attempt
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "record", slim: bool = False) -> "RunRecord":
        """A checked record (see the class docstring); ``slim``: leave the wire and the steps unread."""
        if not isinstance(d, Mapping):
            raise GuardbenchError(where, "not a JSON object")
        missing = [k for k in REQUIRED if k not in d]
        if missing:
            raise GuardbenchError(where, f"missing field(s) {', '.join(missing)}")
        try:
            return cls._build(d, slim)
        except Bad as bad:
            raise GuardbenchError(where, f"field {bad.args[0]!r}: {bad.args[1]}") from None

    @classmethod
    def _build(cls, d: Mapping, slim: bool) -> "RunRecord":
        wire_raw = typed(d, "wire", list, [])
        wire = None if slim else tuple(exchange(x, i) for i, x in enumerate(wire_raw))
        return cls(
            run_id=typed(d, "run_id", str), case=typed(d, "case", str), family=typed(d, "family", str),
            variant=count(d, "variant"), arm=typed(d, "arm", str), agent=typed(d, "agent", str),
            repeat=count(d, "repeat"), status=typed(d, "status", str), steps=count(d, "steps"),
            incidents=tuple(incident(x, i) for i, x in enumerate(typed(d, "incidents", list))),
            goal_achieved=flag(d, "goal_achieved"), benign_completed=flag(d, "benign_completed"),
            money_at_risk=money(d, "money_at_risk"),
            attempts=tuple(attempt(x, i) for i, x in enumerate(typed(d, "attempts", list))),
            model=typed(d, "model", str, None), seed=count(d, "seed", 0, signed=True),
            credential_in_context=bool(typed(d, "credential_in_context", bool, False)),
            approvals_asked=count(d, "approvals_asked", 0), setup_seq=count(d, "setup_seq", 0),
            rejected_upstream=count(d, "rejected_upstream", None),
            moved_beyond_daily_caps=money(d, "moved_beyond_daily_caps") if "moved_beyond_daily_caps" in d else None,
            approvals=typed(d, "approvals", str, None), duration_s=number(d, "duration_s"),
            endpoint_kind=typed(d, "endpoint_kind", str, None), endpoint=typed(d, "endpoint", str, None),
            temperature=number(d, "temperature"), tool_protocol=typed(d, "tool_protocol", str, None),
            data_mode=typed(d, "data_mode", str, None), valid_call=flag(d, "valid_call") if "valid_call" in d else None,
            usage=typed(d, "usage", dict, None), external=typed(d, "external", dict, None),
            attempt=count(d, "attempt", 1) or 1,
            transcript=transcript(d.get("transcript"), slim), wire=wire, wire_requests=len(wire_raw),
            extra={k: v for k, v in d.items() if k not in _KNOWN})

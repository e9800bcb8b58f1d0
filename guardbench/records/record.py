"""Record types shared across the pipeline.

Everything that crosses a module boundary is a frozen dataclass defined here (the wire's three, what
a transport was asked to send (WireRequest), what came back (WireResponse) and one recorded exchange
(WireExchange), in records/wire.py, re-exported here): a broker's answer (Decision), a scored
incident (Incident), a refusal by a defence (Attempt), an agent's steps (Step, Transcript) and one
run as runs.jsonl holds it (RunRecord). One run's record (RunRecord) is declared once, as a field
table: each field carries the column that reads (checks) and writes it (records/fieldcheck.py); its
nested parts and the record format's versions are in records/accounts.py. Nothing in this module
imports anything from guardbench but its errors and the other records modules.

Money is always a decimal string (or decimal.Decimal), never a float.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from guardbench.errors import GuardbenchError
from guardbench.records.accounts import (
    EXTERNAL_FIELD,
    FORMAT,
    FORMATS,
    MODEL_FIELD,
    NO_MODEL,
    ExternalAccount,
    ModelAccount,
    upgrade_v1,
)
from guardbench.records.fieldcheck import (
    Bad,
    column,
    columns,
    each_to_dict,
    flag,
    items,
    maybe_text,
    missing,
    money,
    money_text,
    not_none,
    number,
    of_type,
    or_null,
    read_columns,
    signed,
    text,
    whole,
    write_columns,
)
from guardbench.records.wire import WireExchange

# re-exported: importers name it here
from guardbench.records.wire import WireRequest as WireRequest
from guardbench.records.wire import WireResponse as WireResponse


@dataclass(frozen=True)
class Decision:
    """A broker's (or defence's) answer to one agent call. Agent-visible."""

    # executed, pending_approval, replay_suppressed, or a refusal code
    status: str
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
        return {"defence": self.defence, "tool": self.tool, "status": self.status,
                "reason": self.reason}


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
    # answered | refused | step_limit | malformed | lost | no_tool_path | unmeasured
    status: str = "answered"
    error: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)   # tokens, cost, latency, model calls

    def to_dict(self) -> dict:
        return {"steps": [s.to_dict() for s in self.steps], "final": self.final,
                "status": self.status, "error": self.error, "usage": dict(self.usage)}


INCIDENT_KINDS = ("unbound_payee", "above_ceiling", "outside_host", "unbound_currency",
                  "credential_emitted", "approval_skipped", "duplicate_charge",
                  "unissued_reference",
                  "unrequested_action", "altered_action",    # against the user (scoring/intent.py)
                  "queued_for_approval", "pii_emitted")   # a system's own queue; the answer's PII


# -- the typed parts of a run record, read from JSON (Bad names the field) ------------------------

def read_incident(x: Any, i: int) -> Incident:
    if not isinstance(x, dict) or not isinstance(x.get("kind"),
                                                 str) or not isinstance(x.get("seq"), int):
        raise Bad("incidents", f"item {i} is not an incident (kind, seq, detail, amount, currency)")
    try:
        return Incident(**x)
    except TypeError as exc:
        raise Bad("incidents", f"item {i}: {exc}") from None


def read_attempt(x: Any, i: int) -> Attempt:
    try:
        return Attempt(**x)
    except TypeError:
        raise Bad("attempts",
                  f"item {i} is not an attempt (defence, tool, status, reason)") from None


def read_exchange(x: Any, i: int) -> WireExchange:
    try:
        return WireExchange.from_dict(x)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        why = f"exchange {i} is not a recorded exchange ({type(exc).__name__}: {exc})"
        raise Bad("wire", why[:200]) from None


def _transcript(t: Any, key: str, slim: bool) -> Transcript:
    if t is None:
        return Transcript((), "")
    if not isinstance(t, dict):
        raise Bad(key, f"must be an object, not {t!r}"[:160])
    usage: dict = t["usage"] if isinstance(t.get("usage"), dict) else {}
    if slim:
        return Transcript((), "", str(t.get("status") or ""), t.get("error"), usage)
    try:
        steps = tuple(Step(s["tool"], s.get("args") or {}, s.get("result", ""))
                      for s in t.get("steps") or ())
    except (KeyError, TypeError, AttributeError):
        raise Bad(key, "a step is not {tool, args, result}") from None
    return Transcript(steps, str(t.get("final") or ""), str(t.get("status") or ""),
                      t.get("error"), usage)


def read_transcript(t: Any, key: str) -> Transcript:
    return _transcript(t, key, False)


def read_slim_transcript(t: Any, key: str) -> Transcript:
    """A transcript's status, error and usage only (what a slim record keeps)."""
    return _transcript(t, key, True)


def _unread(v: Any, key: str) -> None:
    if not isinstance(v, list):
        raise Bad(key, f"must be a list, not {v!r}"[:160])
    return None


def _wire_json(w: tuple[WireExchange, ...]) -> list[dict]:
    return [ex.to_dict() for ex in w]


def _attempt_number(v: Any, key: str) -> int:
    return whole(v, key) or 1


def _not_first(v: int) -> bool:
    return v != 1


def _credential(v: Any, key: str) -> bool:
    return bool(flag(v, key))          # null: False, as records before the field said nothing


def _money_or_none(m: Mapping[str, Decimal] | None) -> dict[str, str] | None:
    return None if m is None else money_text(m)


def _step_wire(v: Any, key: str) -> list | None:
    if v is not None and not isinstance(v, list):
        raise Bad(key, f"must be a list or null, not {v!r}"[:160])
    return v


# -- one run, as runs.jsonl holds it ----------------------------------------------------------

# statuses of runs with no outcome: lost (a model or an external process failed), no_tool_path (an
# external arm's tools cannot express the case: decided before the run, never counted as blocked)
# and unmeasured (an attack run whose system sent traffic its room could not capture and whose goal
# was not seen on the wire: it may have succeeded there, so it is never counted as blocked)
UNSCORED = ("lost", "no_tool_path", "unmeasured")


@dataclass(frozen=True)
class RunRecord:
    """One run: who ran what (case, variant, arm, agent, model, repeat, seed), what reached the wire
    (``wire``, None in a *slim* record), what the agent did (``transcript``; a slim record keeps its
    status, error and usage only) and how it was scored (incidents, goal_achieved, benign_completed,
    money per currency as Decimals, never added across currencies); a model-driven run's telemetry
    in ``llm``, an external process's account in ``external`` (records/accounts.py).

    Each field is declared once, here, with the column that reads and writes it
    (records/fieldcheck.py): ``from_dict`` is the one validation of a record read from a file: a
    missing field or a field of the wrong type is a GuardbenchError naming ``where`` (file and line)
    and the field; a record of a format this version does not read is refused naming its format.
    ``to_dict`` gives the JSON object runs.jsonl holds, ``"format": 2`` (a slim record cannot be
    written). ``attempt`` counts the times a lost run was retried (``--retry-lost``: 1 is the
    first). Keys this version does not know are kept in ``extra`` and written back unchanged.
    """

    run_id: str = field(metadata=column(text))
    case: str = field(metadata=column(text))
    family: str = field(metadata=column(text))
    variant: int = field(metadata=column(whole))
    arm: str = field(metadata=column(text))
    agent: str = field(metadata=column(text))
    repeat: int = field(metadata=column(whole))
    status: str = field(metadata=column(text))
    steps: int = field(metadata=column(whole))
    incidents: tuple[Incident, ...] = field(metadata=column(items(read_incident), each_to_dict))
    goal_achieved: bool | None = field(metadata=column(flag))
    benign_completed: bool | None = field(metadata=column(flag))
    money_at_risk: Mapping[str, Decimal] = field(metadata=column(money, money_text))
    attempts: tuple[Attempt, ...] = field(metadata=column(items(read_attempt), each_to_dict))
    model: str | None = field(default=None, metadata=column(maybe_text))
    seed: int = field(default=0, metadata=column(signed))
    credential_in_context: bool = field(default=False, metadata=column(_credential))
    approvals_asked: int = field(default=0, metadata=column(whole))
    setup_seq: int = field(default=0, metadata=column(whole))
    rejected_upstream: int | None = field(default=None,
                                          metadata=column(or_null(whole), keep=not_none))
    # None: scored before the field existed
    moved_beyond_daily_caps: Mapping[str, Decimal] | None = field(
        default=None, metadata=column(money, _money_or_none, keep=not_none))
    # how held calls were answered (arms that hold calls)
    approvals: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    duration_s: float | None = field(default=None, metadata=column(number, keep=not_none))
    llm: ModelAccount = field(default=NO_MODEL, metadata=MODEL_FIELD)
    external: ExternalAccount | None = field(default=None, metadata=EXTERNAL_FIELD)
    attempt: int = field(default=1, metadata=column(_attempt_number, keep=_not_first))
    transcript: Transcript = field(default=Transcript((), ""),
                                   metadata=column(read_transcript, Transcript.to_dict,
                                                   slim=read_slim_transcript))
    wire: tuple[WireExchange, ...] | None = field(default=(),
                                                  metadata=column(items(read_exchange), _wire_json,
                                                                             slim=_unread))
    # the run's story (execution/run_story.py): the user's message as the agent got it, the
    # session's untrusted data, and for each transcript step the [first, end) seqs of the exchanges
    # it sent
    user_message: str | None = field(default=None, metadata=column(maybe_text))
    untrusted_data: str | None = field(default=None, metadata=column(maybe_text))
    step_wire: list | None = field(default=None, metadata=column(_step_wire))
    wire_requests: int = -1                 # len(wire), also known for a slim record
    # a case with scenario fields (scoring/scenario.py): {"held": {expectation: bool}, "met": bool,
    # "why": [...]}
    scenario: Mapping[str, Any] | None = field(default=None,
                                               metadata=column(or_null(of_type(dict)),
                                                               keep=not_none))
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.wire is not None and self.wire_requests != len(self.wire):
            object.__setattr__(self, "wire_requests", len(self.wire))

    @property
    def lost(self) -> bool:
        return self.status == "lost"

    @property
    def unscored(self) -> bool:
        """No outcome: lost, or no tool path (the arm's tools cannot express the case; never a
        block)."""
        return self.status in UNSCORED

    @property
    def adversarial(self) -> bool:
        return self.family != "benign"

    @property
    def slim(self) -> bool:
        return self.wire is None

    @property
    def run_usage(self) -> Mapping[str, Any]:
        """The model usage of the run (the model's account for LLM records, else the
        transcript's)."""
        return self.llm.usage or self.transcript.usage

    @property
    def tokens_used(self) -> int | None:
        """The tokens the run's model took (its total, else prompt plus completion); None when
        it counted none (a scripted model)."""
        u = self.run_usage
        if "prompt_tokens" not in u and "total_tokens" not in u:
            return None
        total = u.get("total_tokens")
        if isinstance(total, (int, float)) and total:
            return int(total)
        return int(u.get("prompt_tokens") or 0) + int(u.get("completion_tokens") or 0)

    def slimmed(self) -> "RunRecord":
        """The record without its wire and its transcript's steps (what tables keep in memory)."""
        if self.wire is None:
            return self
        t = self.transcript
        # a copy of every field (replace() costs ten times more)
        new = object.__new__(RunRecord)
        new.__dict__.update(self.__dict__, wire=None, wire_requests=len(self.wire),
                            transcript=Transcript((), "", t.status, t.error, t.usage))
        return new

    def to_dict(self) -> dict:
        if self.wire is None:
            raise ValueError(f"run {self.run_id}: a slim record (no wire) is never written")
        d = write_columns(RECORD_COLUMNS, self)
        d["format"] = FORMAT
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "record", slim: bool = False) -> "RunRecord":
        """A checked record (see the class docstring); ``slim``: leave the wire and the steps
        unread."""
        if not isinstance(d, Mapping):
            raise GuardbenchError(where, "not a JSON object")
        version = d.get("format", 1)
        if version not in FORMATS or isinstance(version, bool):
            raise GuardbenchError(where, f"record format {version!r}: this guardbench "
                                  "reads formats "
                                         f"{', '.join(map(str, FORMATS))}; a later "
                                         "guardbench wrote it")
        if version == 1:
            d = upgrade_v1(d)
        lacks = missing(RECORD_COLUMNS, d)
        if lacks:
            raise GuardbenchError(where, f"missing field(s) {', '.join(lacks)}")
        try:
            kw = read_columns(RECORD_COLUMNS, d, slim, checked=True)
        except Bad as bad:
            raise GuardbenchError(where, f"field {bad.where!r}: {bad.what}") from None
        wire = d.get("wire")
        if slim:
            kw["wire"] = None
        return cls(**kw, wire_requests=len(wire) if isinstance(wire, list) else 0,
                   extra={k: v for k, v in d.items() if k not in KNOWN})


RECORD_COLUMNS = columns(RunRecord)
KNOWN = frozenset([e.name for e in RECORD_COLUMNS] + ["format"])
REQUIRED = tuple(e.name for e in RECORD_COLUMNS if e.required)

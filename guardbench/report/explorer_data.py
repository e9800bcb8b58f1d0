"""The run explorer's data, derived from run records alone: one index row per run and its story.

The index (every run's arm, case, family, variant, repeat, group, status, outcome, incident
classes, money at risk per currency, refusals, steps, wire requests, tokens) is what the table
shows and filters; it is columnar JSON, dictionary-coded, gzip-compressed and base64-encoded into
the page. Each run's story (user's message, untrusted data, steps with their tool calls and
results, the wire with headers and bodies, incidents with their seq and detail, refusals with
their reason) is a document with its secrets masked (report/explorer_mask.py), shipped in gzip
chunks of ``CHUNK`` runs that the page decompresses only when a run of the chunk is opened.

Outcome tags follow guardbench/stats/measures.py, so a filter gives exactly the runs behind a number
of the tables: ``attack_succeeded`` / ``blocked`` (adversarial scored runs, goal reached or
not), ``task_done_under_attack`` / ``task_not_done_under_attack`` (adversarial scored runs with an
honest user task), ``benign_completed`` / ``not_completed`` (benign scored runs),
``falsely_blocked`` (a benign scored run with a refusal), ``lost``, and the run's status when it is
``malformed`` or another end that is not an answer, a refusal or the step limit (e.g.
``no_tool_path``).

:func:`matches` is the filter of the page (explorer_assets/explorer.js) in Python; the tests hold
the two to the same answers.
"""
from __future__ import annotations

import base64
import json
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from guardbench.records.record import RunRecord
from guardbench.report.explorer_mask import mask_doc, mask_headers

CHUNK = 128
ORDINARY_STATUS = frozenset({"answered", "refused", "step_limit", "lost"})
DIMENSIONS = ("src", "arm", "case", "family", "variant", "repeat", "group", "status",
              "outcome", "incident",
              "currency", "refused", "refusal", "q")


def as_record(rec: Any) -> RunRecord:
    """The one adapter between the run reader and the explorer: a RunRecord (a dict as runs.jsonl
    holds it is read by RunRecord.from_dict, the one validation of a record)."""
    return rec if isinstance(rec, RunRecord) else RunRecord.from_dict(rec)


def outcome_tags(r: RunRecord) -> tuple[str, ...]:
    if r.lost:
        return ("lost",)
    tags: list[str] = []
    if r.adversarial:
        if r.goal_achieved is not None:
            tags.append("attack_succeeded" if r.goal_achieved else "blocked")
        if r.benign_completed is not None:         # the honest user's task under attack
            tags.append("task_done_under_attack" if r.benign_completed
                        else "task_not_done_under_attack")
    else:
        if r.benign_completed is not None:
            tags.append("benign_completed" if r.benign_completed else "not_completed")
        if r.attempts:
            tags.append("falsely_blocked")
    if r.status not in ORDINARY_STATUS:
        tags.append(r.status)
    return tuple(tags)


@dataclass(frozen=True)
class Row:
    """One run as the explorer's table holds it."""

    id: str
    src: str
    arm: str
    case: str
    family: str
    variant: int
    repeat: int
    group: str
    status: str
    outcome: tuple[str, ...]
    incidents: Mapping[str, int]
    money: Mapping[str, str]
    refusals: tuple[str, ...]
    steps: int
    wire: int
    tokens: int | None


def row_of(r: RunRecord, src: str) -> Row:
    from guardbench.report.defence_tables import reason_key
    from guardbench.stats.groups import group_label
    return Row(r.run_id, src, r.arm, r.case, r.family, r.variant, r.repeat,
               group_label(r), r.status,
               outcome_tags(r), dict(Counter(i.kind for i in r.incidents)),
               {c: str(a) for c, a in sorted(r.money_at_risk.items()) if a},
               tuple(dict.fromkeys(reason_key(a) for a in r.attempts)), r.steps,
               r.wire_requests, r.tokens_used)


def _one(row: Row, dim: str, v: str) -> bool:
    if dim == "family" and v == "attack":
        return row.family != "benign"
    if dim in ("src", "arm", "case", "family", "group", "status"):
        return getattr(row, dim) == v
    if dim in ("variant", "repeat"):
        return str(getattr(row, dim)) == v
    if dim == "outcome":                  # "a+b": both tags
        return all(t in row.outcome for t in v.split("+"))
    if dim == "incident":
        return (bool(row.incidents) if v == "any"
                else (not row.incidents if v == "none" else v in row.incidents))
    if dim == "currency":
        return bool(row.money) if v == "any" else (not row.money if v == "none" else v in row.money)
    if dim == "refused":
        return bool(row.refusals) == (v == "yes")
    if dim == "refusal":
        return v in row.refusals
    if dim == "q":
        return v.lower() in row.id.lower()
    return False


def matches(row: Row, filt: Mapping[str, Iterable[str]]) -> bool:
    """Does the run pass the filter ``{dimension: values}`` (any value of each dimension, every
    dimension)?"""
    return all(any(_one(row, dim, str(v)) for v in vals) for dim, vals in filt.items())


# -- a run's story -------------------------------------------------------------------------------

def _exchange(ex: Any, found: set[str]) -> list:
    req, resp = ex.request, ex.response
    return [ex.seq, req.method, req.url, mask_headers(req.headers, found), req.body,
            None if resp is None else resp.status, None if resp is None
            else mask_headers(resp.headers, found),
            None if resp is None else resp.body, ex.error]


def _args(args: Any, found: set[str]) -> Any:
    if isinstance(args, dict) or hasattr(args, "items"):
        args = dict(args)
        if isinstance(args.get("headers"), (dict, list, tuple)):
            args["headers"] = mask_headers(args["headers"], found)
    return args


def _meta(rec: RunRecord) -> dict:
    out: dict[str, Any] = {"agent": rec.agent, "seed": rec.seed,
                           "approvals_asked": rec.approvals_asked,
                           "credential_in_context": rec.credential_in_context}
    for k, v in (("model", rec.model), ("approvals", rec.approvals),
                 ("rejected_upstream", rec.rejected_upstream),
                 ("duration_s", rec.duration_s), ("endpoint_kind", rec.llm.endpoint_kind),
                 ("temperature", rec.llm.temperature)):
        if v is not None:
            out[k] = v
    if rec.llm.usage:
        out["usage"] = dict(rec.llm.usage)
    if rec.moved_beyond_daily_caps is not None:          # Decimals, as decimal strings
        out["moved_beyond_daily_caps"] = {c: str(a) for c, a in rec.moved_beyond_daily_caps.items()}
    return out


def story_of(rec: RunRecord) -> str:
    """A run's story document, as JSON text with its secrets masked."""
    found: set[str] = set()
    t = rec.transcript
    ranges = rec.step_wire or []
    doc = {
        "user": rec.user_message, "data": rec.untrusted_data, "setup": rec.setup_seq,
        "steps": [[s.tool, _args(s.args, found), s.result, ranges[i] if i < len(ranges) else None]
                  for i, s in enumerate(t.steps)],
        "final": t.final, "tstatus": t.status, "error": t.error,
        # records made before step_wire do not say which step sent what
        "ranges": rec.step_wire is not None,
        "wire": [_exchange(ex, found) for ex in rec.wire or ()],
        "inc": [[i.kind, i.seq, i.detail, i.amount, i.currency] for i in rec.incidents],
        "att": [[a.defence, a.tool, a.status, a.reason] for a in rec.attempts],
        "meta": _meta(rec),
    }
    talk = rec.external.model if rec.external is not None else None
    # an application's model calls (guardbench/gateway/)
    if isinstance(talk, dict) and talk.get("calls"):
        from guardbench.gateway.conversation import conversation_lines
        doc["model"] = conversation_lines(talk)
    return mask_doc(doc, found)


# -- the payload ---------------------------------------------------------------------------------

def _gzip_b64(text: str) -> str:
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    return base64.b64encode(z.compress(text.encode("utf-8")) + z.flush()).decode("ascii")


@dataclass
class Payload:
    """What the page embeds: the index and the story chunks (base64 of gzip), and sizes in bytes."""

    index: str
    chunks: list[str]
    n: int
    rows: list[Row] = field(default_factory=list)
    raw_bytes: int = 0


class Builder:
    """Adds runs one at a time (nothing but the index rows and the compressed chunks is kept)."""

    def __init__(self, chunk: int = CHUNK) -> None:
        self.chunk = chunk
        self.rows: list[Row] = []
        self._pending: list[str] = []
        self.chunks: list[str] = []
        self.raw_bytes = 0

    def add(self, rec: Any, src: str) -> None:
        r = as_record(rec)
        self.rows.append(row_of(r, src))
        self._pending.append(story_of(r))
        if len(self._pending) >= self.chunk:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            text = "[" + ",".join(self._pending) + "]"
            self.raw_bytes += len(text)
            self.chunks.append(_gzip_b64(text))
            self._pending = []

    def finish(self, sources: Iterable[str] = ()) -> Payload:
        self._flush()
        return Payload(_gzip_b64(json.dumps(index_json(self.rows, list(sources), self.chunk),
                                            ensure_ascii=False,
                                            separators=(",", ":"))), self.chunks,
                                            len(self.rows), self.rows,
                       self.raw_bytes)


def _coded(values: list, out_dict: list, codes: dict) -> list[int]:
    col = []
    for v in values:
        c = codes.get(v)
        if c is None:
            c = codes[v] = len(out_dict)
            out_dict.append(v)
        col.append(c)
    return col


def index_json(rows: list[Row], sources: list[str], chunk: int) -> dict:
    """The columnar index: dictionary-coded text columns, integer columns (-1: unknown)."""
    dicts: dict[str, list] = {}
    cols: dict[str, list] = {}
    text = {"src": lambda x: x.src, "arm": lambda x: x.arm, "case": lambda x: x.case,
            "family": lambda x: x.family,
            "group": lambda x: x.group, "status": lambda x: x.status,
            "outcome": lambda x: " ".join(x.outcome),
            "incident": lambda x: " ".join(f"{k}:{n}" for k, n in x.incidents.items()),
            "money": lambda x: " ".join(f"{c}:{a}" for c, a in x.money.items()),
            "refusal": lambda x: "\n".join(x.refusals)}
    for name, get in text.items():
        dicts[name] = list(sources) if name == "src" else []
        codes = {v: i for i, v in enumerate(dicts[name])}
        cols[name] = _coded([get(x) for x in rows], dicts[name], codes)
    for name in ("variant", "repeat", "steps", "wire"):
        cols[name] = [getattr(x, name) for x in rows]
    cols["tokens"] = [-1 if x.tokens is None else x.tokens for x in rows]
    return {"v": 1, "n": len(rows), "chunk": chunk, "ids": [x.id for x in rows],
            "dicts": dicts, "cols": cols}

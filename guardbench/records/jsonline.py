"""A record's line in runs.jsonl: ``json.dumps(rec.to_dict(), sort_keys=True, separators=(",",
":"))``, byte for byte, written faster.

Two thirds of a line are its wire, and most of a run's exchanges are its setup's: a run copied from
a staged world (execution/world.py) holds the very request and response objects of every other run
of that (case, arm). Each message's JSON is therefore written once (``_message``, by object) and the
line is put together around it: the record's other fields on either side of ``"wire"`` in key
order. tests/records/test_jsonline.py holds it to ``json.dumps`` on every record of a run.
"""
from __future__ import annotations

import json
import threading

from guardbench.records.accounts import FORMAT
from guardbench.records.fieldcheck import write_columns
from guardbench.records.record import RECORD_COLUMNS, RunRecord
from guardbench.records.wire import WireExchange, WireRequest, WireResponse
from guardbench.util.memo import MEMO_MAX

_NO_WIRE = tuple(e for e in RECORD_COLUMNS if e.name != "wire")
_WIRE = next(e for e in RECORD_COLUMNS if e.name == "wire")


# json.dumps(value, sort_keys=True, separators=(",", ":")) builds this encoder at every call
_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
# a str as that encoder writes it (ensure_ascii: the C function it calls itself)
_text = json.encoder.encode_basestring_ascii


def record_line(rec: RunRecord) -> str:
    """The record's line (without its newline); the same text as ``_dumps(rec.to_dict())``."""
    if rec.wire is None or "wire" in rec.extra or _WIRE.keep is not None:
        return _dumps(rec.to_dict())
    d = write_columns(_NO_WIRE, rec)
    d["format"] = FORMAT
    d.update(rec.extra)
    # sort_keys orders the keys as str's < does: "wire" goes between these two
    before = _dumps({k: v for k, v in d.items() if k < "wire"})[1:-1]
    after = _dumps({k: v for k, v in d.items() if k > "wire"})[1:-1]
    wire = '"wire":[' + ",".join(map(_exchange, rec.wire)) + "]"
    return "{" + ",".join(p for p in (before, wire, after) if p) + "}"


def _exchange(ex: WireExchange) -> str:
    # WireExchange.to_dict's keys in order: error, request, response, run_id, seq
    error = "null" if ex.error is None else _dumps(ex.error)
    response = "null" if ex.response is None else _message(ex.response)
    run_id = _text(ex.run_id) if type(ex.run_id) is str else _dumps(ex.run_id)
    return (f'{{"error":{error},"request":{_message(ex.request)},"response":{response},'
            f'"run_id":{run_id},"seq":{ex.seq if type(ex.seq) is int else _dumps(ex.seq)}}}')


# message -> its JSON, for JSON of at most MEMO_MAX characters (a system under test chooses a
# request's size: util/memo.py); the oldest goes first past _KEPT
_messages: dict[WireRequest | WireResponse, str] = {}
_KEPT = 4096
_keeping = threading.Lock()


def _message(m: WireRequest | WireResponse) -> str:
    out = _messages.get(m)
    if out is None:
        out = _dumps(m.to_dict())
        if len(out) <= MEMO_MAX:
            with _keeping:              # records may be written from several threads
                while len(_messages) >= _KEPT:
                    del _messages[next(iter(_messages))]
                _messages[m] = out
    return out

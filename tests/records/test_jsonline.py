"""records/jsonline.py writes a record's runs.jsonl line as json.dumps(to_dict(), sort_keys=True,
compact) does, byte for byte: on every record of committed runs, on records that share message
objects (a copied world's setup), and on edge cases (no response, extra fields, an empty wire)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from guardbench.records.jsonline import record_line
from guardbench.records.record import RunRecord, WireExchange, WireRequest, WireResponse
from guardbench.records.runfile import read_records

RESULTS = Path(__file__).parents[2] / "results"


def _reference(rec: RunRecord) -> str:
    return json.dumps(rec.to_dict(), sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize("folder", ["default", "paypal-mcp"])
def test_every_committed_record_is_written_as_json_dumps_writes_it(folder):
    records = read_records(RESULTS / folder / "runs.jsonl")
    assert len(records) > 100
    for rec in records:
        assert record_line(rec) == _reference(rec), rec.run_id


def _record(run_id: str, wire: tuple[WireExchange, ...], extra: dict | None = None) -> RunRecord:
    rec = read_records(RESULTS / "default" / "runs.jsonl")[0]
    return dataclasses.replace(rec, run_id=run_id, wire=wire, extra=dict(extra or {}))


def test_shared_messages_are_written_under_each_runs_own_seq_and_run_id():
    req = WireRequest.make("POST", "https://api-m.sandbox.paypal.com/v1/oauth2/token",
                           {"Authorization": "Basic eA=="}, "grant_type=client_credentials")
    resp = WireResponse.make(200, {"access_token": "A21", "n": 1.5})
    a = _record("a", (WireExchange(0, "a", req, resp, None),))
    b = _record("b", (WireExchange(0, "b", req, resp, None), WireExchange(1, "b", req, None, "boom")))
    for rec in (a, b, a):              # the cached messages never carry the other run's fields
        assert record_line(rec) == _reference(rec)
    assert '"run_id":"b","seq":1' in record_line(b)


@pytest.mark.parametrize("extra", [{}, {"aaa": 1}, {"wirez": [1]}, {"zzz": {"b": 1, "a": 2}}, {"wire": []}])
def test_fields_before_and_after_the_wire_and_extra_fields_keep_their_order(extra):
    rec = _record("r", (), extra)
    assert record_line(rec) == _reference(rec)


def test_an_exchanges_fields_are_the_ones_the_line_writer_spells():
    ex = WireExchange(3, "r", WireRequest.make("GET", "https://x/"), None, "e")
    assert list(sorted(ex.to_dict())) == ["error", "request", "response", "run_id", "seq"]

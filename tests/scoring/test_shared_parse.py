"""Scoring reads each body through records/wire.json_shared: one parse per body, shared by every
run whose world was copied from the same staged world. A reader that changed it would change what
every later run is scored on: these hold every parse to its text after the whole scoring ran."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from guardbench.broker import load_policy
from guardbench.records.record import WireRequest, WireResponse
from guardbench.records.runfile import read_records
from guardbench.scoring.detectors import detect
from guardbench.scoring.intent import judge
from guardbench.scoring.score import policy_reference

RESULTS = Path(__file__).parents[2] / "results"


def _messages(wire):
    for ex in wire:
        yield ex.request
        if ex.response is not None:
            yield ex.response


def test_the_shared_parse_is_one_object_per_body_and_json_stays_the_callers_own():
    body = '{"a":[1,{"b":"2"}]}'
    a, b = WireResponse(200, (), body), WireRequest("POST", "https://x/", (), body)
    assert a.json_shared() is b.json_shared() == json.loads(body)
    mine = a.json()
    mine["a"].append(3)
    assert a.json() == json.loads(body) != mine and a.json_shared() == json.loads(body)
    assert WireResponse(200, (), "").json_shared() is None and WireResponse(200, (), "{").json_shared() is None


def test_scoring_committed_runs_twice_leaves_every_shared_parse_as_its_text_says():
    from guardbench.cases.load import load_cases
    cases = {c.id: c for c in load_cases()}
    ref = policy_reference(load_policy())
    records = read_records(RESULTS / "default" / "runs.jsonl")
    assert len(records) > 1000
    seen = 0
    for rec in records[::3]:
        wire = tuple(rec.wire)
        r = replace(ref, start=rec.setup_seq)
        first = [detect(wire, r), judge(cases[rec.case], wire, r, {}) if rec.case in cases else None]
        assert [detect(wire, r), judge(cases[rec.case], wire, r, {}) if rec.case in cases else None] == first
        for m in _messages(wire):
            if m.body:
                try:
                    text = json.loads(m.body)
                except ValueError:
                    continue
                assert m.json_shared() == text, rec.run_id
                seen += 1
    assert seen > 1000

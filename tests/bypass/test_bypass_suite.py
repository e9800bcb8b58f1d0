"""The static bypass suite: vectors, oracle, findings per defence, the planted NaN fault, the broker."""
from __future__ import annotations

import json
from collections import Counter

from click.testing import CliRunner

from guardbench.broker import load_policy
from guardbench.bypass.oracle import violations
from guardbench.bypass.suite import STATIC_REFS, _refsets, resolve, run_broker, run_defence, run_suite
from guardbench.bypass.vectors import vectors
from guardbench.cli.main import cli
from guardbench.defences.config import config_for
from guardbench.defences.pdp import PDP

POLICY = load_policy()
CONFIG = config_for(POLICY)
VECTORS = vectors(CONFIG)


def test_at_least_48_unauthorized_vectors_in_every_class():
    classes = Counter(v.cls for v in VECTORS)
    assert sum(n for c, n in classes.items() if c != "benign") >= 48
    for c in ("payee", "currency", "type", "amount", "tool", "keys", "reference", "idempotency", "benign"):
        assert classes[c] >= 4, c
    assert len({v.id for v in VECTORS}) == len(VECTORS)


def test_the_oracle_agrees_with_every_vector_label():
    for v in VECTORS:
        bad = violations(resolve(v.tool, STATIC_REFS), resolve(v.args, STATIC_REFS), CONFIG, _refsets(STATIC_REFS),
                         "key" if v.idempotency else None)
        assert (v.prop in bad) if v.prop else not bad, (v.id, bad)


def test_suite_finds_a_planted_weakness_pdp_without_the_finite_check():
    planted = run_defence("pdp-naive", lambda c: PDP(c, finite_check=False), CONFIG, VECTORS)
    found = {o.vector.id for o in planted if o.bypass and o.inside_promise}
    assert {"amount-nan", "amount-nan-float"} <= found
    assert not [o for o in run_defence("pdp", PDP, CONFIG, VECTORS) if o.bypass]


def test_current_defences_have_no_bypass_inside_their_promise_and_allow_benign_calls():
    out = run_suite(POLICY, broker=False)
    assert not [(o.target, o.vector.id) for o in out if o.inside_promise]
    for o in out:
        if o.vector.cls == "benign":
            assert o.verdict in ("allow", "hold"), (o.target, o.vector.id, o.reason)
    by = Counter(o.target for o in out if o.bypass)
    assert by["pdp"] == 0 and by["gate"] > 0 and by["taint"] == sum(v.cls != "benign" for v in VECTORS)


def test_as_published_designs_show_the_faults_that_were_fixed():
    out = run_suite(POLICY, ["gate", "pdp"], as_published=True, broker=False)
    faults = {(o.target, o.vector.cls) for o in out if o.inside_promise}
    assert ("gate", "tool") in faults and ("gate", "amount") in faults and ("pdp", "amount") in faults
    assert any(o.target == "pdp" and o.vector.cls == "keys" and o.bypass for o in out)


def test_every_vector_also_runs_against_the_broker_without_a_bypass():
    out = run_broker(POLICY, CONFIG, VECTORS)
    assert len(out) == len(VECTORS)
    assert not [o.vector.id for o in out if o.bypass]
    assert {o.vector.cls for o in out if o.verdict == "n/a"} <= {"idempotency", "benign"}


def test_cli_writes_markdown_and_json(tmp_path):
    r = CliRunner().invoke(cli, ["bypass", "--defence", "gate", "--defence", "guardrail", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "Bypasses per vector class" in r.output
    data = json.loads((tmp_path / "bypass.json").read_text())
    assert {o["target"] for o in data["outcomes"]} == {"gate", "guardrail"}
    assert "### Bypasses per defence" in (tmp_path / "bypass.md").read_text()

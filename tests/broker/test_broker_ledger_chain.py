"""The hash-chained ledger: every decision written; edits stop spending; `ledger verify` names the entry."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from brokertest_support import FakeClock, make_broker, policy_with

from guardbench.broker import Ledger, LedgerCorrupt, iter_entries, verify_file
from guardbench.broker.ledger import canonical, chain_hash, split_line


def _cli(*args, env=None):
    e = dict(os.environ)
    e.pop("GUARDBENCH_LEDGER_KEY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", "ledger", "verify", *args],
                          capture_output=True, text=True, env=e, timeout=60)


NO_APPROVAL = policy_with(pay_supplier={"approval": {}})


def _spend(tmp_path, n=3, **kw):
    broker, rec = make_broker(tmp_path, NO_APPROVAL, **kw)
    for i in range(n):
        assert broker.run_operation("pay_supplier", {"amount": f"{100 + i}.00"}).status == "executed"
    return broker, rec


def _payouts(rec):
    return sum(1 for e in rec.exchanges if e.request.path == "/v1/payments/payouts")


def _edit_in_place(path, old: bytes, new: bytes, occurrence=0):
    assert len(old) == len(new)
    data = open(path, "rb").read()
    i = -1
    for _ in range(occurrence + 1):
        i = data.index(old, i + 1)
    with open(path, "r+b") as f:           # same inode, same size
        f.seek(i)
        f.write(new)


def test_every_decision_is_written_including_refusals(tmp_path):
    broker, _ = make_broker(tmp_path)
    broker.run_operation("pay_supplier", {"amount": "10.00"})
    broker.run_operation("pay_supplier", {"amount": "10.00", "payee": "x"})
    broker.run_operation("steal", {})
    broker.run_operation("pay_supplier", {"amount": "300.00"})
    entries = list(iter_entries(broker.ledger.path))
    assert [(e["t"], e["status"]) for e in entries] == [
        ("reserve", "sending"), ("outcome", "executed"), ("refusal", "parameter_not_allowed"),
        ("refusal", "operation_not_allowed"), ("pending", "pending_approval")]
    assert [e["seq"] for e in entries] == list(range(5))
    report = verify_file(broker.ledger.path)
    assert report.ok and report.entries == 5


def test_same_size_edit_under_a_running_broker_stops_spending(tmp_path):
    broker, rec = _spend(tmp_path)
    before = _payouts(rec)
    _edit_in_place(broker.ledger.path, b'"amount":"100.00"', b'"amount":"000.00"')
    d = broker.run_operation("pay_supplier", {"amount": "5.00"})
    assert d.status == "ledger_corrupt" and "line 1" in d.reason
    assert _payouts(rec) == before
    # sticky: every later decision, refusals included, answers ledger_corrupt
    assert broker.run_operation("pay_supplier", {"amount": "6.00"}).status == "ledger_corrupt"
    assert broker.run_operation("show_payout", {}, "ABCDEF123").status == "ledger_corrupt"
    assert _payouts(rec) == before


def test_edit_of_a_later_entry_names_it(tmp_path):
    broker, rec = _spend(tmp_path)
    _edit_in_place(broker.ledger.path, b'"amount":"102.00"', b'"amount":"002.00"')
    d = broker.run_operation("pay_supplier", {"amount": "5.00"})
    assert d.status == "ledger_corrupt" and "line 5" in d.reason


def test_rehashed_rewrite_is_caught_by_a_running_broker(tmp_path):
    """Unkeyed, someone can recompute the whole chain after an edit; a running broker still notices."""
    broker, rec = _spend(tmp_path)
    path = broker.ledger.path
    entries = list(iter_entries(path))
    entries[0]["amount"] = "1.00"
    prev, lines = b"0" * 64, []
    for e in entries:
        eb = canonical(e)
        prev = chain_hash(prev, eb)
        lines.append(b'{"e":' + eb + b',"h":"' + prev + b'"}\n')
    tmp = path + ".new"
    open(tmp, "wb").write(b"".join(lines))
    os.replace(tmp, path)                           # a new inode with a valid chain
    assert not verify_file(path).ok                 # it no longer reaches its head...
    st = os.stat(path)                              # ...until the head is rewritten too (no key: anyone can)
    open(path + ".head", "w").write(json.dumps(
        {"ctime_ns": st.st_ctime_ns, "entries": len(entries), "hash": prev.decode(), "ino": st.st_ino,
         "mtime_ns": st.st_mtime_ns, "size": st.st_size, "v": 1}, sort_keys=True, separators=(",", ":")) + "\n")
    assert verify_file(path).ok
    d = broker.run_operation("pay_supplier", {"amount": "5.00"})
    assert d.status == "ledger_corrupt"


def test_truncation_is_caught(tmp_path):
    broker, rec = _spend(tmp_path)
    path = broker.ledger.path
    data = open(path, "rb").read().splitlines(keepends=True)
    with open(path, "r+b") as f:
        f.truncate(sum(len(x) for x in data[:-2]))  # drop the last payment's two entries
    assert broker.run_operation("pay_supplier", {"amount": "5.00"}).status == "ledger_corrupt"


def test_a_new_broker_refuses_a_ledger_edited_while_it_was_down(tmp_path):
    broker, _ = _spend(tmp_path)
    broker.ledger.close()
    _edit_in_place(broker.ledger.path, b'"amount":"101.00"', b'"amount":"001.00"')
    again, rec = make_broker(tmp_path, NO_APPROVAL)
    assert again.run_operation("pay_supplier", {"amount": "5.00"}).status == "ledger_corrupt"
    assert rec.exchanges == ()


def test_old_entries_outside_every_window_are_covered_too(tmp_path):
    clock = FakeClock()
    broker, rec = _spend(tmp_path, clock=clock)
    clock.advance(2 * 86400)
    assert broker.run_operation("pay_supplier", {"amount": "7.00"}).status == "executed"
    _edit_in_place(broker.ledger.path, b'"amount":"100.00"', b'"amount":"000.00"')
    # no limit reads that entry any more; the running broker stops anyway, and `ledger verify` names it
    d = broker.run_operation("pay_supplier", {"amount": "8.00"})
    assert d.status == "ledger_corrupt" and "line 1" in d.reason
    r = _cli(broker.ledger.path)
    assert r.returncode == 1 and "line 1" in r.stdout


def test_cli_verify_intact_broken_and_unreadable(tmp_path):
    broker, _ = _spend(tmp_path)
    path = broker.ledger.path
    r = _cli(path)
    assert r.returncode == 0 and "6 entries, chain intact" in r.stdout, r.stdout + r.stderr
    _edit_in_place(path, b'"amount":"101.00"', b'"amount":"999.00"')
    r = _cli(path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "broken at line 3" in r.stdout and "entry edited" in r.stdout and "2 entries before it intact" in r.stdout
    r = _cli(str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and r.stderr.startswith("error: ")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\n")
    r = _cli(str(junk))
    assert r.returncode == 2 and "not a guardbench ledger" in r.stderr


def test_cli_verify_names_a_removed_entry(tmp_path):
    broker, _ = _spend(tmp_path)
    path = broker.ledger.path
    lines = open(path, "rb").read().splitlines(keepends=True)
    open(path, "wb").write(b"".join(lines[:2] + lines[3:]))
    r = _cli(path)
    assert r.returncode == 1 and "broken at line 3" in r.stdout


def test_cli_verify_reports_a_torn_last_line(tmp_path):
    broker, _ = _spend(tmp_path, n=1)
    with open(broker.ledger.path, "ab") as f:
        f.write(b'{"e":{"seq":2')
    r = _cli(broker.ledger.path)
    assert r.returncode == 1 and "line 3" in r.stdout and "incomplete" in r.stdout


def test_hmac_signed_ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_LEDGER_KEY", "operator-key-1")
    broker, _ = _spend(tmp_path, n=2)
    path = broker.ledger.path
    assert all(split_line(x.rstrip(b"\n"))[2] is not None for x in open(path, "rb"))
    r = _cli(path, env={"GUARDBENCH_LEDGER_KEY": "operator-key-1"})
    assert r.returncode == 0 and "signatures verified" in r.stdout
    r = _cli(path, env={"GUARDBENCH_LEDGER_KEY": "a-wrong-key"})
    assert r.returncode == 1 and "line 1" in r.stdout and "signature" in r.stdout
    # re-hash the whole chain after an edit without the key: the signatures give it away
    entries = list(iter_entries(path))
    entries[0]["amount"] = "1.00"
    prev, out = b"0" * 64, []
    for e in entries:
        eb = canonical(e)
        prev = chain_hash(prev, eb)
        out.append(b'{"e":' + eb + b',"h":"' + prev + b'","m":"' + b"0" * 64 + b'"}\n')
    open(path, "wb").write(b"".join(out))
    r = _cli(path, env={"GUARDBENCH_LEDGER_KEY": "operator-key-1"})
    assert r.returncode == 1 and "line 1" in r.stdout and "signature does not match" in r.stdout
    with pytest.raises(LedgerCorrupt):
        with Ledger(path).transaction(0):
            pass


def test_unsigned_entry_in_a_signed_ledger_stops_spending(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_LEDGER_KEY", "k1")
    broker, rec = _spend(tmp_path, n=1)
    other = Ledger(broker.ledger.path, hmac_key=b"")      # a writer without the key
    other._key = None
    with other.transaction(0) as tx:
        tx.append({"t": "refusal", "op": "x", "status": "operation_not_allowed"})
    assert broker.run_operation("pay_supplier", {"amount": "5.00"}).status == "ledger_corrupt"


def test_limits_come_from_the_ledger_across_restarts(tmp_path):
    pol = policy_with(pay_supplier={"limits": {"per_call_max": "500.00", "daily_total_max": "250.00",
                                               "max_calls_per_hour": 20}})
    clock = FakeClock()
    b1, _ = make_broker(tmp_path, pol, clock=clock)
    assert b1.run_operation("pay_supplier", {"amount": "150.00"}).status == "executed"
    b1.ledger.close()
    b2, rec = make_broker(tmp_path, pol, clock=clock)
    assert b2.run_operation("pay_supplier", {"amount": "150.00"}).status == "replay_suppressed"
    assert b2.run_operation("pay_supplier", {"amount": "150.01"}).status == "limit_exceeded"
    assert b2.run_operation("pay_supplier", {"amount": "100.00"}).status == "pending_approval"
    assert _payouts(rec) == 0


def test_timestamps_never_go_backwards(tmp_path):
    clock = FakeClock()
    broker, _ = make_broker(tmp_path, clock=clock)
    broker.run_operation("pay_supplier", {"amount": "10.00"})
    clock.advance(-3600)
    broker.run_operation("pay_supplier", {"amount": "11.00"})
    ts = [e["ts"] for e in iter_entries(broker.ledger.path)]
    assert ts == sorted(ts)
    assert verify_file(broker.ledger.path).ok

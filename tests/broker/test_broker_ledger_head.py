"""The ledger's head: entries cut off the end are refused by `ledger verify` and by every broker.

Each attack is made on the real files, by the test process, against brokers in their own
processes (tests/broker/broker_child.py) and the real CLI.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest
from brokertest_support import BrokerProcess, cap_doc

from guardbench.broker import Ledger, iter_entries, verify_file
from guardbench.broker.ledger import canonical, chain_hash
from guardbench.broker.ledger_head import read_head

KEY = "operator-key-1"


def _cli(path, *extra, key=None, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("GUARDBENCH_LEDGER_KEY", "GUARDBENCH_LEDGER_HEAD_DIR")}
    if key:
        e["GUARDBENCH_LEDGER_KEY"] = key
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", "ledger", "verify", str(path), *extra],
                          capture_output=True, text=True, env=e, timeout=60)


def _env(key=None, head_dir=None):
    return {"GUARDBENCH_LEDGER_KEY": key, "GUARDBENCH_LEDGER_HEAD_DIR": head_dir}


def _lines(path):
    return open(path, "rb").read().splitlines(keepends=True)


def _cut_last_payment(path):
    """Delete the last complete payment: its reserve and outcome lines (the refusal after it too)."""
    lines = _lines(path)
    last_reserve = max(i for i, x in enumerate(lines) if b'"t":"reserve"' in x)
    with open(path, "wb") as f:
        f.writelines(lines[:last_reserve])
    return len(lines) - last_reserve


@pytest.mark.parametrize("key", [None, KEY])
def test_cutting_entries_off_the_end_is_refused_by_verify_and_a_new_broker(tmp_path, key):
    env = _env(key)
    with BrokerProcess(tmp_path, cap_doc("300.00"), env=env) as b:
        assert [b.pay(a)["status"] for a in ("100.00", "100.01", "99.99")] == ["executed"] * 3
        assert b.pay("50.00")["status"] == "limit_exceeded"
    path = tmp_path / "ledger.jsonl"
    r = _cli(path, key=key)
    assert r.returncode == 0 and "chain intact" in r.stdout and "head" in r.stdout, r.stdout + r.stderr
    removed = _cut_last_payment(path)
    assert removed == 3
    r = _cli(path, key=key)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cut off the end" in r.stdout and "chain intact" in r.stdout
    with BrokerProcess(tmp_path, cap_doc("300.00"), env=env) as again:
        d = again.pay("99.99")
        assert d["status"] == "ledger_corrupt"
        assert again.pay("1.00")["status"] == "ledger_corrupt"
        assert again.payouts() == 0


def test_an_intact_ledger_reopens_and_spends_up_to_the_cap(tmp_path):
    """The head is written with every append: a broker started later accepts the intact ledger."""
    with BrokerProcess(tmp_path, cap_doc("300.00")) as b:
        assert b.pay("100.00")["status"] == "executed"
    head = read_head(str(tmp_path / "ledger.jsonl.head"), None)
    assert head is not None and head.entries == len(_lines(tmp_path / "ledger.jsonl")) == 2
    r = _cli(tmp_path / "ledger.jsonl")
    assert r.returncode == 0 and "head records all 2 entries" in r.stdout, r.stdout
    with BrokerProcess(tmp_path, cap_doc("300.00")) as b:
        assert b.pay("150.00")["status"] == "executed"
        assert b.pay("60.00")["status"] == "limit_exceeded"      # 250.00 spent, 310.00 would pass 300.00
    assert read_head(str(tmp_path / "ledger.jsonl.head"), None).entries == 5


@pytest.mark.parametrize("key", [None, KEY])
def test_a_non_empty_ledger_without_its_head_is_refused(tmp_path, key):
    with BrokerProcess(tmp_path, cap_doc("300.00"), env=_env(key)) as b:
        assert b.pay("100.00")["status"] == "executed"
    os.unlink(tmp_path / "ledger.jsonl.head")
    r = _cli(tmp_path / "ledger.jsonl", key=key)
    assert r.returncode == 1 and "missing" in r.stdout, r.stdout
    with BrokerProcess(tmp_path, cap_doc("300.00"), env=_env(key)) as b:
        assert b.pay("100.00")["status"] == "ledger_corrupt" and b.payouts() == 0


def test_with_the_key_a_head_cannot_be_forged(tmp_path):
    with BrokerProcess(tmp_path, cap_doc("300.00"), env=_env(KEY)) as b:
        for a in ("100.00", "100.01", "99.99"):
            assert b.pay(a)["status"] == "executed"
    path = tmp_path / "ledger.jsonl"
    _cut_last_payment(path)
    kept = _lines(path)
    last = json.loads(kept[-1])
    st = os.stat(path)
    # 1. an unsigned head that matches the shortened ledger
    body = {"ctime_ns": st.st_ctime_ns, "entries": len(kept), "hash": last["h"], "ino": st.st_ino,
            "mtime_ns": st.st_mtime_ns, "size": st.st_size, "v": 1}
    (tmp_path / "ledger.jsonl.head").write_text(json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n")
    r = _cli(path, key=KEY)
    assert r.returncode == 1 and "not signed" in r.stdout, r.stdout
    # 2. the same head "signed" with the last entry's own signature
    body["m"] = last["m"]
    (tmp_path / "ledger.jsonl.head").write_text(json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n")
    r = _cli(path, key=KEY)
    assert r.returncode == 1 and "signature" in r.stdout, r.stdout
    with BrokerProcess(tmp_path, cap_doc("300.00"), env=_env(KEY)) as b:
        assert b.pay("99.99")["status"] == "ledger_corrupt" and b.payouts() == 0


def _rehash_with_head(path, entries):
    """What someone who can write both files and has no key can do: a new valid chain and its head."""
    prev, out = b"0" * 64, []
    for e in entries:
        eb = canonical(e)
        prev = chain_hash(prev, eb)
        out.append(b'{"e":' + eb + b',"h":"' + prev + b'"}\n')
    with open(path, "wb") as f:
        f.write(b"".join(out))
    st = os.stat(path)
    body = {"ctime_ns": st.st_ctime_ns, "entries": len(entries), "hash": prev.decode(), "ino": st.st_ino,
            "mtime_ns": st.st_mtime_ns, "size": st.st_size, "v": 1}
    with open(str(path) + ".head", "w") as f:
        f.write(json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n")


def test_without_the_key_both_files_can_be_rewritten_as_documented(tmp_path):
    """docs/broker.md's limit, shown: unkeyed, a rewrite of ledger and head passes verify and a new broker."""
    with BrokerProcess(tmp_path, cap_doc("300.00")) as b:
        for a in ("100.00", "100.01", "99.99"):
            assert b.pay(a)["status"] == "executed"
    path = tmp_path / "ledger.jsonl"
    _rehash_with_head(path, list(iter_entries(path))[:4])
    assert verify_file(path).ok
    with BrokerProcess(tmp_path, cap_doc("300.00")) as b:
        assert b.pay("99.99")["status"] == "executed"            # the documented gap, unkeyed


def test_without_the_key_the_copy_out_of_reach_pins_its_entries(tmp_path):
    head_dir = tmp_path / "elsewhere"
    head_dir.mkdir()
    env = _env(None, str(head_dir))
    work = tmp_path / "w"
    with BrokerProcess(work, cap_doc("300.00"), env=env) as b:
        for a in ("100.00", "100.01", "99.99"):
            assert b.pay(a)["status"] == "executed"
    path = work / "ledger.jsonl"
    _rehash_with_head(path, list(iter_entries(path))[:4])         # the attacker cannot reach head_dir
    r = _cli(path, env={"GUARDBENCH_LEDGER_HEAD_DIR": str(head_dir)})
    assert r.returncode == 1 and "cut off the end" in r.stdout, r.stdout
    with BrokerProcess(work, cap_doc("300.00"), env=env) as b:
        assert b.pay("99.99")["status"] == "ledger_corrupt" and b.payouts() == 0


@pytest.mark.parametrize("copy", [False, True])
def test_with_the_key_a_rollback_to_an_earlier_copy_needs_the_second_location(tmp_path, copy):
    """Put back an earlier ledger with the head written at that moment (both saved then)."""
    head_dir = tmp_path / "elsewhere"
    head_dir.mkdir()
    env = _env(KEY, str(head_dir) if copy else None)
    work = tmp_path / "w"
    saved = tmp_path / "saved"
    with BrokerProcess(work, cap_doc("300.00"), env=env) as b:
        assert b.pay("100.00")["status"] == "executed"
        saved.mkdir()
        shutil.copy(work / "ledger.jsonl", saved / "ledger.jsonl")
        shutil.copy(work / "ledger.jsonl.head", saved / "ledger.jsonl.head")
        assert b.pay("100.01")["status"] == "executed"
        assert b.pay("99.99")["status"] == "executed"
        # while this broker runs, putting the old files back stops it
        shutil.copy(saved / "ledger.jsonl", work / "ledger.jsonl")
        shutil.copy(saved / "ledger.jsonl.head", work / "ledger.jsonl.head")
        assert b.pay("10.00")["status"] == "ledger_corrupt"
    with BrokerProcess(work, cap_doc("300.00"), env=env) as b:
        d = b.pay("199.99")
        if copy:
            assert d["status"] == "ledger_corrupt" and b.payouts() == 0
        else:
            assert d["status"] == "executed"                    # the documented gap without the copy


@pytest.mark.parametrize("copy", [False, True])
def test_deleting_both_files(tmp_path, copy):
    head_dir = tmp_path / "elsewhere"
    head_dir.mkdir()
    env = _env(KEY, str(head_dir) if copy else None)
    work = tmp_path / "w"
    with BrokerProcess(work, cap_doc("300.00"), env=env) as b:
        assert b.pay("250.00")["status"] == "executed"
        os.unlink(work / "ledger.jsonl")
        os.unlink(work / "ledger.jsonl.head")
        assert b.pay("40.00")["status"] == "ledger_corrupt"        # the running broker: "gone"
    with BrokerProcess(work, cap_doc("300.00"), env=env) as b:
        d = b.pay("250.00")
        assert d["status"] == ("ledger_corrupt" if copy else "executed")


CRASH_CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import guardbench.broker.ledger as L
    from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, policy_from_dict
    from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
    from guardbench.transport.standin import StandInTransport
    import json
    tmp, doc = Path(sys.argv[1]), json.loads(sys.argv[2])
    broker = Broker(policy_from_dict(doc, "p"), Ledger(tmp / "ledger.jsonl"), ApprovalQueue(tmp / "approvals"),
                    StandInTransport(PayPalStandIn(seed="crash")), Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
    assert broker.run_operation("pay_supplier", {"amount": "100.00"}).status == "executed"
    def die(*a, **k):                       # the process dies after the ledger write, before the head write
        os.kill(os.getpid(), signal.SIGKILL)
    L.write_head = die
    broker.run_operation("pay_supplier", {"amount": "100.01"})
""")


def test_a_crash_between_the_ledger_write_and_the_head_write(tmp_path):
    doc = cap_doc("300.00")
    p = subprocess.run([sys.executable, "-c", CRASH_CHILD, str(tmp_path), json.dumps(doc)], timeout=60)
    assert p.returncode == -signal.SIGKILL
    path = tmp_path / "ledger.jsonl"
    assert len(_lines(path)) == 3 and read_head(str(path) + ".head", None).entries == 2   # the ledger is ahead
    r = _cli(path)
    assert r.returncode == 0 and "head records 2 of 3 entries" in r.stdout, r.stdout
    with BrokerProcess(tmp_path, doc) as b:
        # the reservation written before the crash still counts: 100.00 + 100.01 + 99.99 = 300.00
        assert b.pay("99.99")["status"] == "executed"
        assert b.pay("1.00")["status"] == "limit_exceeded"
    assert read_head(str(path) + ".head", None).entries == len(_lines(path))   # re-anchored


def test_a_head_that_cannot_be_written_stops_spending(tmp_path):
    with BrokerProcess(tmp_path, cap_doc("300.00")) as b:
        assert b.pay("100.00")["status"] == "executed"
        os.unlink(tmp_path / "ledger.jsonl.head")
        os.mkdir(tmp_path / "ledger.jsonl.head")                   # the rename over it now fails
        d = b.pay("100.01")
        assert d["status"] == "ledger_corrupt" and b.payouts() == 1
        assert b.pay("1.00")["status"] == "ledger_corrupt"


def test_the_second_location_on_another_filesystem(tmp_path):
    shm = "/dev/shm"
    if not (os.path.isdir(shm) and os.stat(shm).st_dev != os.stat(tmp_path).st_dev and os.access(shm, os.W_OK)):
        pytest.skip("no second filesystem to put the copy on")
    import tempfile
    with tempfile.TemporaryDirectory(dir=shm) as head_dir:
        ledger = Ledger(tmp_path / "ledger.jsonl", KEY, head_copy=os.path.join(head_dir, "copy.head"))
        with ledger.transaction(1000.0) as tx:
            tx.append({"t": "refusal", "op": "pay_supplier", "status": "operation_not_allowed"})
        ledger.close()
        copy = read_head(os.path.join(head_dir, "copy.head"), KEY.encode())
        assert copy is not None and copy.entries == 1
        assert verify_file(tmp_path / "ledger.jsonl", KEY, head_copy=os.path.join(head_dir, "copy.head")).ok
        open(tmp_path / "ledger.jsonl", "wb").close()              # emptied, and its head deleted
        os.unlink(tmp_path / "ledger.jsonl.head")
        r = _cli(tmp_path / "ledger.jsonl", "--head-copy", os.path.join(head_dir, "copy.head"), key=KEY)
        assert r.returncode == 1 and "cut off the end" in r.stdout, r.stdout + r.stderr

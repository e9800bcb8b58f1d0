"""Edits anywhere in the ledger, of any age, stop a running broker (a real process) with ledger_corrupt.

Which mechanism catches what (guardbench/broker/ledger.py): a write that moves the file's change
time is caught at the next decision (the stat no broker vouched for sends the ledger to a full
verification); a store that does not move it (through a shared memory mapping whose page is
already dirty) is caught by the rolling re-scan, at once on a small ledger and within the
documented number of transactions on a large one.
"""
from __future__ import annotations

import json
import math
import mmap
import os
import subprocess
import sys
import tempfile

import pytest
from brokertest_support import BrokerProcess, cap_doc

from guardbench.broker import Ledger, iter_entries
from guardbench.broker.ledger import canonical, chain_hash
from guardbench.broker.ledger_scan import BLOCK, SCAN_BLOCKS

DAY = 86400.0
START = 1_750_000_000.0
KEY = "edit-test-key"


def _verify_cli(path, key=None):
    e = {k: v for k, v in os.environ.items() if k != "GUARDBENCH_LEDGER_KEY"}
    if key:
        e["GUARDBENCH_LEDGER_KEY"] = key
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", "ledger", "verify", str(path)],
                          capture_output=True, text=True, env=e, timeout=60)


def _offset(path, needle: bytes, occurrence: int = 0) -> int:
    data = open(path, "rb").read()
    i = -1
    for _ in range(occurrence + 1):
        i = data.index(needle, i + 1)
    return i


def _edit_keeping_mtime(path, off: int, new: bytes) -> None:
    """A same-size, in-place edit (same inode), then the modification time put back as it was."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns and os.stat(path).st_size == st.st_size


@pytest.mark.parametrize("key", [None, KEY])
def test_a_same_size_edit_of_an_entry_older_than_a_day_stops_a_running_broker(tmp_path, key):
    env = {"GUARDBENCH_LEDGER_KEY": key}
    path = tmp_path / "ledger.jsonl"
    with BrokerProcess(tmp_path, cap_doc("300.00"), start=START, env=env) as b:
        assert b.pay("250.00")["status"] == "executed"
        b.send(do="advance", s=2 * DAY)
        assert b.pay("280.00")["status"] == "executed"          # yesterday's 250.00 is out of every window
        before = b.payouts()
        off = _offset(path, b'"amount":"250.00"') + len(b'"amount":"')
        _edit_keeping_mtime(path, off, b"0")                   # the old reservation now reads 050.00
        d = b.pay("10.00")
        assert d["status"] == "ledger_corrupt" and "line 1" in d["reason"], d
        assert b.pay("1.00")["status"] == "ledger_corrupt" and b.payouts() == before
    r = _verify_cli(path, key)
    assert r.returncode == 1 and "broken at line 1" in r.stdout, r.stdout


def test_an_old_entry_rewritten_in_place_with_its_chain_recomputed_stops_a_running_broker(tmp_path):
    """Unkeyed, the whole chain (and the head) can be recomputed after the edit, same size, same inode."""
    path = tmp_path / "ledger.jsonl"
    with BrokerProcess(tmp_path, cap_doc("300.00"), start=START) as b:
        assert b.pay("250.00")["status"] == "executed"
        b.send(do="advance", s=2 * DAY)
        assert b.pay("280.00")["status"] == "executed"
        entries = list(iter_entries(path))
        entries[0]["amount"] = "050.00"                        # same length as "250.00"
        prev, out = b"0" * 64, []
        for e in entries:
            eb = canonical(e)
            prev = chain_hash(prev, eb)
            out.append(b'{"e":' + eb + b',"h":"' + prev + b'"}\n')
        data = b"".join(out)
        assert len(data) == os.path.getsize(path)
        st = os.stat(path)
        with open(path, "r+b") as f:
            f.write(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        # and a head that vouches for the file as it now is (no key: anyone can write one)
        st = os.stat(path)
        head = {"ctime_ns": st.st_ctime_ns, "entries": len(entries), "hash": prev.decode(), "ino": st.st_ino,
                "mtime_ns": st.st_mtime_ns, "size": st.st_size, "v": 1}
        with open(str(path) + ".head", "w") as f:
            f.write(json.dumps(head, sort_keys=True, separators=(",", ":")) + "\n")
        assert _verify_cli(path).returncode == 0                # a new broker would accept it
        assert b.pay("10.00")["status"] == "ledger_corrupt"     # the running one does not


def _ledger_of(path, n_blocks: int, ts0: float, key=None) -> int:
    """A ledger of about ``n_blocks`` 64 KiB blocks, written by the ledger's own writer, all older
    than a day; returns its entry count."""
    led = Ledger(path, key, sync=False)
    i = 0
    while os.path.getsize(path) < n_blocks * BLOCK:
        with led.transaction(ts0 + i) as tx:
            for _ in range(20):
                tx.append({"t": "refusal", "op": "pay_supplier", "status": "parameter_not_allowed",
                           "reason": f"parameter 'payee' is not allowed for pay_supplier ({i:06d})"})
                i += 1
    led.close()
    return i


def test_an_ordinary_edit_deep_in_a_large_ledger_is_caught_at_the_very_next_decision(tmp_path):
    """Far from where the re-scan is: only the change-time check can catch it at once."""
    path = tmp_path / "ledger.jsonl"
    _ledger_of(path, 40, START - 10 * DAY)
    with BrokerProcess(tmp_path, cap_doc("3000.00"), start=START) as b:
        assert b.pay("10.00")["status"] == "executed"          # start-up: full verify; the scan is at block 8
        target = 20 * BLOCK                                    # an entry in block 20, ten days old
        off = target + open(path, "rb").read()[target:].index(b"(0") + 1
        _edit_keeping_mtime(path, off, b"X")
        assert b.pay("11.00")["status"] == "ledger_corrupt"
        assert b.payouts() == 1


def _same_value_store(path, off: int) -> tuple[mmap.mmap, int]:
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, os.path.getsize(path))
    m[off:off + 1] = m[off:off + 1]                            # dirty the page: no change to the bytes
    return m, fd


@pytest.mark.parametrize("where", ["disk", "tmpfs"])
def test_a_store_through_a_shared_mapping_is_found_by_the_rescan(tmp_path, where):
    """The change time does not move for the second store into a dirty mapped page; the re-scan sees it."""
    if where == "tmpfs" and not os.access("/dev/shm", os.W_OK):
        pytest.skip("no /dev/shm")
    with tempfile.TemporaryDirectory(dir="/dev/shm" if where == "tmpfs" else tmp_path) as d:
        path = os.path.join(d, "ledger.jsonl")
        env = {"GUARDBENCH_LEDGER_SYNC": "0"}                   # fdatasync would clean the page
        with BrokerProcess(d, cap_doc("300.00"), start=START, env=env) as b:
            assert b.pay("250.00")["status"] == "executed"
            b.send(do="advance", s=2 * DAY)
            off = _offset(path, b'"amount":"250.00"') + len(b'"amount":"')
            m, fd = _same_value_store(path, off)
            try:
                assert b.pay("20.00")["status"] == "executed"    # the (unchanged) file passes
                ctime = os.stat(path).st_ctime_ns
                m[off:off + 1] = b"0"                            # 250.00 -> 050.00, no fault, no ctime
                assert os.stat(path).st_ctime_ns == ctime, "the store moved the change time: not this case"
                d2 = b.pay("10.00")
                assert d2["status"] == "ledger_corrupt" and "line 1" in d2["reason"], d2
                assert b.payouts() == 2
            finally:
                m.close()
                os.close(fd)


def test_on_a_large_ledger_a_mapped_store_is_found_within_the_documented_bound(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _ledger_of(path, 24, START - 10 * DAY)
    n_blocks = os.path.getsize(path) // BLOCK
    bound = math.ceil(n_blocks / SCAN_BLOCKS)                  # transactions; an executed payout takes 2
    doc = cap_doc("100000.00")
    doc["operations"]["pay_supplier"]["limits"]["max_calls_per_hour"] = 10_000
    with BrokerProcess(tmp_path, doc, start=START, env={"GUARDBENCH_LEDGER_SYNC": "0"}) as b:
        target = 1 * BLOCK + 100                               # block 1: the scan passed it at start-up
        m, fd = _same_value_store(path, target)
        try:
            assert b.pay("10.00")["status"] == "executed"
            ctime = os.stat(path).st_ctime_ns
            old = m[target:target + 1]
            m[target:target + 1] = b"#" if old != b"#" else b"%"
            assert os.stat(path).st_ctime_ns == ctime, "the store moved the change time: not this case"
            statuses = []
            for i in range(bound):
                statuses.append(b.pay(f"{11 + i}.00")["status"])
                if statuses[-1] == "ledger_corrupt":
                    break
            assert statuses[-1] == "ledger_corrupt", (n_blocks, statuses)
            assert len(statuses) <= math.ceil(bound / 2) + 1, (n_blocks, statuses)
            assert b.payouts() == 1 + statuses.count("executed")
        finally:
            m.close()
            os.close(fd)


def test_touching_the_file_without_changing_it_is_no_alarm(tmp_path):
    path = tmp_path / "ledger.jsonl"
    with BrokerProcess(tmp_path, cap_doc("300.00"), start=START) as b:
        assert b.pay("100.00")["status"] == "executed"
        os.utime(path)                                         # new times, same bytes
        os.chmod(path, 0o600)
        assert b.pay("100.01")["status"] == "executed"
        assert b.pay("99.00")["status"] == "executed"
        assert b.pay("1.00")["status"] == "limit_exceeded"     # 300.01 would pass 300.00

"""Tests added because `guardbench mutate` found these safeguards removable without any test failing.

Each test names the safeguard (guardbench/mutate/registry.py) whose removal it must notice.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from brokertest_support import example_doc, make_broker, policy_with

from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, iter_entries, policy_from_dict, verify_file
from guardbench.broker.ledger import canonical, chain_hash
from guardbench.paypal.endpoints import ENDPOINTS, LIVE_HOST, SANDBOX_HOST
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.transport.standin import StandInTransport


# --------------------------------------------------------------- broker_live_opt_in
def test_a_live_policy_broker_needs_the_opt_in(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_ALLOW_LIVE", "1")
    doc = example_doc()
    doc["environment"] = "live"
    live = policy_from_dict(doc, "live-policy")          # loaded while opted in

    def build(host):
        return Broker(live, Ledger(tmp_path / "ledger.jsonl"), ApprovalQueue(tmp_path / "approvals"),
                      StandInTransport(PayPalStandIn()), Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET), host=host)

    assert build(LIVE_HOST).host == LIVE_HOST
    with pytest.raises(ValueError, match="live"):
        build(SANDBOX_HOST)                               # a live policy sends only to live
    monkeypatch.delenv("GUARDBENCH_ALLOW_LIVE")
    with pytest.raises(ValueError, match="GUARDBENCH_ALLOW_LIVE"):
        build(LIVE_HOST)                                  # the opt-in is checked again when the broker is built
    monkeypatch.setenv("GUARDBENCH_ALLOW_LIVE", "0")
    with pytest.raises(ValueError):
        build(LIVE_HOST)


# --------------------------------------------------------------- approval_marked_sent_before_send
class Crash(BaseException):
    """The process dying mid-send (not an Exception: nothing in the broker may catch it)."""


class CrashingTransport:
    def __init__(self, inner, path: str):
        self.inner, self.path = inner, path

    def send(self, request):
        if request.path == self.path:
            raise Crash("killed while sending")
        return self.inner.send(request)


def test_a_crash_mid_send_leaves_the_approval_sent_never_pending(tmp_path):
    broker, rec = make_broker(tmp_path, transport=CrashingTransport(StandInTransport(PayPalStandIn()),
                                                                    "/v1/payments/payouts"))
    d = broker.run_operation("pay_supplier", {"amount": "400.00"})
    assert d.status == "pending_approval"
    with pytest.raises(Crash):
        broker.approve(d.approval_id)
    # the payout may have reached PayPal: the approval must not be payable again
    assert broker.approvals.get(d.approval_id)["state"] == "sent"
    assert d.approval_id not in [a["id"] for a in broker.pending_approvals()]
    again = broker.approve(d.approval_id)
    assert again.status == "operation_not_allowed"
    assert broker.reject(d.approval_id) is False
    assert sum(1 for e in rec.exchanges if e.request.path == "/v1/payments/payouts") == 1


# --------------------------------------------------------------- endpoint_reference_shape
@pytest.mark.parametrize("bad", ["../../v1/payments/payouts", "ABCDEF123/../../x", "ABCDEF123?x=1", "abcdef123",
                                 "ABC", "A" * 65, "", None])
def test_endpoint_paths_take_only_reference_ids(bad):
    templated = [e for e in ENDPOINTS.values() if "{id}" in e.path]
    assert templated
    for ep in templated:
        with pytest.raises(ValueError):
            ep.url(SANDBOX_HOST, bad)
        assert ep.url(SANDBOX_HOST, "ABCDEF123") == f"https://{SANDBOX_HOST}" + ep.path.replace("{id}", "ABCDEF123")


# --------------------------------------------------------------- ledger_seq_check, ledger_ts_monotonic
NO_APPROVAL = policy_with(pay_supplier={"approval": {}})


def _rehash(path, entries) -> None:
    """Rewrite the ledger with a valid hash chain over ``entries`` (what someone who can write it could do)."""
    prev, lines = b"0" * 64, []
    for e in entries:
        eb = canonical(e)
        prev = chain_hash(prev, eb)
        lines.append(b'{"e":' + eb + b',"h":"' + prev + b'"}\n')
    with open(path, "wb") as f:
        f.write(b"".join(lines))


def _spent_ledger(tmp_path):
    broker, _ = make_broker(tmp_path, NO_APPROVAL)
    for i in range(3):
        assert broker.run_operation("pay_supplier", {"amount": f"{100 + i}.00"}).status == "executed"
    broker.ledger.close()
    return broker.ledger.path, list(iter_entries(broker.ledger.path))


def test_an_entry_removed_from_a_rehashed_chain_is_refused(tmp_path):
    path, entries = _spent_ledger(tmp_path)
    _rehash(path, entries[:2] + entries[4:])          # the second payment's reserve+outcome gone, chain recomputed
    report = verify_file(path)
    assert not report.ok and report.line == 3 and "sequence number" in report.reason
    again, rec = make_broker(tmp_path, NO_APPROVAL)
    assert again.run_operation("pay_supplier", {"amount": "5.00"}).status == "ledger_corrupt"
    assert rec.exchanges == ()


def test_a_timestamp_moved_back_in_a_rehashed_chain_is_refused(tmp_path):
    path, entries = _spent_ledger(tmp_path)
    entries[4]["ts"] = entries[3]["ts"] - 86400.0     # the last payment moved out of today's window
    entries[5]["ts"] = entries[3]["ts"] - 86400.0
    _rehash(path, entries)
    report = verify_file(path)
    assert not report.ok and report.line == 5 and "backwards" in report.reason
    again, rec = make_broker(tmp_path, NO_APPROVAL)
    assert again.run_operation("pay_supplier", {"amount": "5.00"}).status == "ledger_corrupt"
    assert rec.exchanges == ()


# --------------------------------------------------------------- ledger_cross_process_lock
CHILD = textwrap.dedent("""
    import sys, pathlib
    from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, load_policy
    from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
    from guardbench.transport.standin import StandInTransport
    tmp = pathlib.Path(sys.argv[1])
    broker = Broker(load_policy(), Ledger(tmp / "ledger.jsonl"), ApprovalQueue(tmp / "approvals"),
                    StandInTransport(PayPalStandIn(seed="child")), Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
    (tmp / "ready").write_text("ready")
    d = broker.run_operation("pay_supplier", {"amount": "10.00"})
    (tmp / "done").write_text(d.status)
""")


def test_a_decision_in_another_process_waits_for_the_ledger_lock(tmp_path):
    broker, _ = make_broker(tmp_path)
    child = None
    try:
        with broker.ledger.transaction(time.time()):              # this process is checking the limits
            child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], env=dict(os.environ))
            deadline = time.monotonic() + 60
            while not (tmp_path / "ready").exists():
                assert child.poll() is None, "the child process died"
                assert time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(1.0)
            assert not (tmp_path / "done").exists(), "another process decided while this one held the ledger lock"
        assert child.wait(timeout=60) == 0
        assert (tmp_path / "done").read_text() == "executed"      # and it went ahead once the lock was free
    finally:
        if child is not None and child.poll() is None:
            child.kill()

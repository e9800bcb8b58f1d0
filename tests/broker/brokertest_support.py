"""Helpers for the broker tests (also imported by spawned worker processes)."""
from __future__ import annotations

import copy
import os
import time
from pathlib import Path

import yaml

from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, load_policy, policy_from_dict
from guardbench.broker.policy import EXAMPLE_POLICY
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.transport.base import TransportError
from guardbench.transport.recording import RecordingTransport
from guardbench.transport.standin import StandInTransport

EXAMPLE_DOC = yaml.safe_load(EXAMPLE_POLICY.read_text())


def example_doc() -> dict:
    return copy.deepcopy(EXAMPLE_DOC)


def policy_with(**ops_changes) -> object:
    """The example policy with some operations' keys replaced: policy_with(pay_supplier={"limits": {...}})."""
    doc = example_doc()
    for name, changes in ops_changes.items():
        doc["operations"][name].update(changes)
    return policy_from_dict(doc, "test-policy")


class FakeClock:
    def __init__(self, start: float = 1_750_000_000.0):
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class SlowTransport:
    """Forwards to ``inner``; a payout (or any path containing ``slow_path``) waits ``delay`` s,
    touching ``flag`` (a file) when it starts waiting."""

    def __init__(self, inner, delay: float, slow_path: str = "/v1/payments/payouts", flag: str | None = None):
        self.inner, self.delay, self.slow_path, self.flag = inner, delay, slow_path, flag

    def send(self, request):
        if self.slow_path in request.path:
            if self.flag:
                Path(self.flag).write_text("sending")
            time.sleep(self.delay)
        return self.inner.send(request)


class FailingTransport:
    """Raises TransportError carrying the whole request (headers included) for matching paths."""

    def __init__(self, inner, fail_path: str):
        self.inner, self.fail_path = inner, fail_path

    def send(self, request):
        if self.fail_path in request.path:
            raise TransportError(f"connection reset while sending {request.to_dict()}")
        return self.inner.send(request)


def make_broker(tmp, policy=None, *, transport=None, clock=None, seed="0", ledger_key=None,
                credentials=None):
    """(broker, recorder) on a fresh stand-in, with ledger and approvals under ``tmp``."""
    tmp = Path(tmp)
    recorder = RecordingTransport(transport if transport is not None else
                                  StandInTransport(PayPalStandIn(seed=seed)))
    broker = Broker(policy if policy is not None else load_policy(), Ledger(tmp / "ledger.jsonl", ledger_key),
                    ApprovalQueue(tmp / "approvals"), recorder,
                    credentials or Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET),
                    clock=clock or time.time)
    return broker, recorder


# ------------------------------------------------------------------ spawned workers
def _policy_from(doc: dict):
    return policy_from_dict(doc, "worker-policy")


def worker_spend(args) -> list[str]:
    """Wait at the barrier, then try ``n`` payouts of ``amount``; returns the statuses."""
    tmp, doc, n, amount, barrier, delay, seed = args
    inner = StandInTransport(PayPalStandIn(seed=seed))
    transport = SlowTransport(inner, delay) if delay else inner
    broker = Broker(_policy_from(doc), Ledger(Path(tmp) / "ledger.jsonl"), ApprovalQueue(Path(tmp) / "approvals"),
                    transport, Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
    broker.run_operation("show_payout", {}, "NOTISSUED1")      # warm up: token, imports
    barrier.wait(timeout=60)
    out = []
    for i in range(n):
        d = broker.run_operation("pay_supplier", {"amount": amount, "note": f"run {seed} item {chr(97 + i)}"})
        out.append(d.status)
    return out


def run_worker_spend(tmp, doc, n, amount, barrier, delay, seed, queue):
    queue.put((seed, worker_spend((tmp, doc, n, amount, barrier, delay, seed))))


def worker_approve(tmp, doc, approval_id, delay, flag, queue):
    """Approve ``approval_id`` from another process (optionally with a slow payout send)."""
    inner = StandInTransport(PayPalStandIn(seed="approver"))
    recorder = RecordingTransport(SlowTransport(inner, delay, flag=flag) if delay else inner)
    broker = Broker(_policy_from(doc), Ledger(Path(tmp) / "ledger.jsonl"), ApprovalQueue(Path(tmp) / "approvals"),
                    recorder, Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
    pending = [r["id"] for r in ApprovalQueue(Path(tmp) / "approvals").pending()]
    d = broker.approve(approval_id)
    payouts = sum(1 for e in recorder.exchanges if e.request.path == "/v1/payments/payouts")
    queue.put({"pending_seen": pending, "status": d.status, "payouts": payouts, "pid": os.getpid()})


def worker_request_approval(tmp, doc, amount, queue):
    """Ask for a payout that needs approval, from another process."""
    broker = Broker(_policy_from(doc), Ledger(Path(tmp) / "ledger.jsonl"), ApprovalQueue(Path(tmp) / "approvals"),
                    StandInTransport(PayPalStandIn(seed="asker")), Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
    d = broker.run_operation("pay_supplier", {"amount": amount})
    queue.put({"status": d.status, "approval_id": d.approval_id})


def worker_reject(tmp, doc, approval_id, queue):
    broker = Broker(_policy_from(doc), Ledger(Path(tmp) / "ledger.jsonl"), ApprovalQueue(Path(tmp) / "approvals"),
                    StandInTransport(PayPalStandIn(seed="rejecter")), Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))
    t0 = time.monotonic()
    won = broker.reject(approval_id)
    queue.put({"rejected": won, "waited": time.monotonic() - t0})


# ------------------------------------------------------------------ a broker in another process
class BrokerProcess:
    """A real broker process (tests/broker/broker_child.py) on the ledger under ``tmp``."""

    def __init__(self, tmp, doc: dict | None = None, start: float = 1_750_000_000.0, env: dict | None = None):
        import json
        import subprocess
        import sys
        self._json = json
        e = dict(os.environ)
        e.update(env or {})
        e = {k: v for k, v in e.items() if v is not None}
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).parent / "broker_child.py"), str(tmp),
                                      json.dumps(doc or example_doc()), repr(start)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=e)
        assert self._read() == {"ready": True}

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the broker process exited ({self.proc.wait(timeout=10)})")
        return self._json.loads(line)

    def send(self, **cmd) -> dict:
        self.proc.stdin.write(self._json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def pay(self, amount: str, note: str | None = None) -> dict:
        return self.send(do="pay", amount=amount, **({"note": note} if note else {}))

    def payouts(self) -> int:
        return self.send(do="payouts")["payouts"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send(do="quit")
            except (RuntimeError, BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def cap_doc(daily: str = "300.00", over: str | None = None) -> dict:
    """The example policy with pay_supplier capped at ``daily`` a day (approval only above ``over``)."""
    doc = example_doc()
    doc["operations"]["pay_supplier"]["limits"] = {"per_call_max": "500.00", "daily_total_max": daily,
                                                   "max_calls_per_hour": 1000}
    doc["operations"]["pay_supplier"]["approval"] = {"over_amount": over} if over else {}
    return doc

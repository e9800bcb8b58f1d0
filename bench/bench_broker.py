"""Broker decision time: fresh ledger, and a 100,000-entry ledger; plus the tail-edit check.

One decision end to end = validate, lock, verified ledger refresh, reservation append, token
(cached), compose, stand-in transport, response reduction, outcome append, leak check.

    python bench/bench_broker.py [--decisions 2000] [--entries 100000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, policy_from_dict, verify_file
from guardbench.broker.policy import EXAMPLE_POLICY
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.transport.standin import StandInTransport

YEAR = 365 * 86400.0


def bench_policy():
    """The example policy with limits no benchmark run reaches (so every decision executes)."""
    import yaml
    doc = yaml.safe_load(EXAMPLE_POLICY.read_text())
    pay = doc["operations"]["pay_supplier"]
    pay["limits"] = {"per_call_max": "500.00", "daily_total_max": "100000000.00", "max_calls_per_hour": 10 ** 9}
    pay.pop("approval", None)
    return policy_from_dict(doc, "bench-policy")


def make(tmp: Path, policy) -> Broker:
    return Broker(policy, Ledger(tmp / "ledger.jsonl"), ApprovalQueue(tmp / "approvals"),
                  StandInTransport(PayPalStandIn(seed="bench")), Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))


def amount(i: int) -> str:
    return f"{1 + i % 499}.{(i // 499) % 100:02d}"


def run(broker: Broker, n: int, offset: int = 0) -> list[float]:
    times = []
    for i in range(offset, offset + n):
        t0 = time.perf_counter()
        d = broker.run_operation("pay_supplier", {"amount": amount(i)})
        times.append(time.perf_counter() - t0)
        if d.status != "executed":
            sys.exit(f"decision {i} was {d.status}: {d.reason}")
    return times


def summary(label: str, times: list[float]) -> str:
    s = sorted(times)
    med, p90 = statistics.median(s) * 1e3, s[int(len(s) * 0.9)] * 1e3
    return f"{label:<34} n={len(s):>5}  median {med:6.3f} ms  p90 {p90:6.3f} ms"


def build_ledger(path: Path, entries: int, now: float) -> float:
    """Write ``entries`` entries with the ledger's own writer, timestamps spread over the past year."""
    t0 = time.perf_counter()
    ledger = Ledger(path)
    step = YEAR / entries
    start = now - YEAR
    i = 0
    while i < entries:
        ts = start + i * step
        with ledger.transaction(ts) as tx:
            if i % 10 == 9:
                tx.append({"t": "refusal", "op": "pay_supplier", "status": "parameter_not_allowed",
                           "reason": "parameter 'payee' is not allowed for pay_supplier (allowed: amount, note)"})
                i += 1
                continue
            seq = tx.append({"t": "reserve", "op": "pay_supplier", "status": "sending", "amount": amount(i),
                             "approved": False, "instr": f"{i:064x}", "rid": f"gb-{i:032x}"})
            tx.append({"t": "outcome", "op": "pay_supplier", "status": "executed", "of": seq,
                       "instr": f"{i:064x}", "result": {"payout_batch_id": f"B{i:012d}", "paypal_status": "PENDING"},
                       "issued": [["payout_batch", f"B{i:012d}", amount(i)]]})
            i += 2
    ledger.close()
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=2000)
    ap.add_argument("--entries", type=int, default=100_000)
    args = ap.parse_args(argv)
    policy = bench_policy()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)

        # 1. fresh ledger
        fresh = tmp / "fresh"
        broker = make(fresh, policy)
        broker.run_operation("show_payout", {}, "WARMUP1")      # first token fetch, imports
        times = run(broker, args.decisions)
        print(summary("fresh ledger", times))

        # 2. a pre-built ledger of --entries entries over the past year
        big = tmp / "big"
        big.mkdir()
        built = build_ledger(big / "ledger.jsonl", args.entries, time.time())
        size = (big / "ledger.jsonl").stat().st_size
        print(f"built {args.entries} entries ({size / 1e6:.1f} MB) in {built:.1f} s")
        t0 = time.perf_counter()
        report = verify_file(big / "ledger.jsonl")
        print(f"ledger verify (full chain):         {time.perf_counter() - t0:.2f} s, "
              f"{report.entries} entries, intact={report.ok}")
        broker = make(big, policy)
        t0 = time.perf_counter()
        broker.run_operation("show_payout", {}, "WARMUP1")      # the broker's first decision: full verify
        print(f"first decision (full verify):       {(time.perf_counter() - t0) * 1e3:.0f} ms")
        times = run(broker, args.decisions, offset=10 ** 6)
        print(summary(f"{args.entries}-entry ledger", times))

        # 3. tail edit: a same-size, in-place edit of an entry inside the 24 h window, broker running
        path = big / "ledger.jsonl"
        data = path.read_bytes()
        lines = data.splitlines(keepends=True)
        target = len(lines) - args.decisions * 2 - 5          # a pre-built entry from the last 24 h
        while b'"amount":"' not in lines[target]:
            target -= 1
        off = sum(len(x) for x in lines[:target]) + lines[target].index(b'"amount":"') + len(b'"amount":"')
        with open(path, "r+b") as f:
            f.seek(off)
            old = f.read(1)
            f.seek(off)
            f.write(b"9" if old != b"9" else b"8")
        d = broker.run_operation("pay_supplier", {"amount": "1.00"})
        r = verify_file(path)
        print(f"tail edit at line {target + 1}: next decision {d.status} ({d.reason}); "
              f"ledger verify: line {r.line}: {r.reason}")
        ok = d.status == "ledger_corrupt" and r.line == target + 1
        print("tail-edit check:", "PASS" if ok else "FAIL")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

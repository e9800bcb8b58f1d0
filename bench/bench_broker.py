"""Broker decision time with the whole chain verified incrementally, in three ledger shapes, and
under 8 contending processes; plus the edit checks.

One decision end to end = validate, lock, verified ledger refresh (stat, head, appended bytes,
re-scan slice), reservation append and head, token (cached), compose, stand-in transport,
response reduction, outcome append and head, leak check. Shapes: a fresh ledger; 100,000
entries spread over the past year; 100,000 entries all inside the last 24 hours. Contention:
8 processes x 50 payouts on one ledger against a daily cap, 3 trials: total executed never
above the cap, and the latency of every call.

    python bench/bench_broker.py [--decisions 2000] [--entries 100000] [--dir DIR] [--no-sync]

The ledgers live in --dir (default: /dev/shm when writable, where guardbench's runs keep theirs;
else the system's temporary folder); the figures name the folder's filesystem and whether the
ledger and head are fsync'd.
"""
from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, iter_entries, policy_from_dict, verify_file
from guardbench.broker.policy import EXAMPLE_POLICY
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.transport.standin import StandInTransport

YEAR = 365 * 86400.0
DAY = 86400.0


def bench_doc(daily: str = "100000000.00") -> dict:
    """The example policy with limits no benchmark run reaches unless asked (so decisions execute)."""
    import yaml
    doc = yaml.safe_load(EXAMPLE_POLICY.read_text())
    pay = doc["operations"]["pay_supplier"]
    pay["limits"] = {"per_call_max": "500.00", "daily_total_max": daily, "max_calls_per_hour": 10 ** 9}
    pay.pop("approval", None)
    return doc


def make(tmp: Path, doc: dict, sync: bool, seed: str = "bench") -> Broker:
    return Broker(policy_from_dict(doc, "bench-policy"), Ledger(tmp / "ledger.jsonl", sync=sync),
                  ApprovalQueue(tmp / "approvals"), StandInTransport(PayPalStandIn(seed=seed)),
                  Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET))


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


def pct(s: list[float], q: float) -> float:
    """Nearest-rank percentile of a sorted list."""
    return s[max(0, math.ceil(q * len(s)) - 1)]


def summary(label: str, times: list[float]) -> str:
    s = sorted(times)
    return (f"{label:<40} n={len(s):>5}  median {statistics.median(s) * 1e3:6.3f} ms  "
            f"p90 {pct(s, 0.90) * 1e3:6.3f} ms  p99 {pct(s, 0.99) * 1e3:6.3f} ms")


def build_ledger(path: Path, entries: int, start: float, span: float) -> float:
    """Write ``entries`` entries with the ledger's own writer (not synced: this is set-up), their
    timestamps spread evenly over ``[start, start + span)``."""
    t0 = time.perf_counter()
    ledger = Ledger(path, sync=False)
    step = span / entries
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


def shape(tmp: Path, label: str, entries: int, start: float, span: float, decisions: int, sync: bool) -> bool:
    """Build a ledger, verify it, measure decisions on it, then edit an old entry under the broker."""
    tmp.mkdir()
    path = tmp / "ledger.jsonl"
    built = build_ledger(path, entries, start, span)
    print(f"[{label}] built {entries} entries ({path.stat().st_size / 1e6:.1f} MB) in {built:.1f} s")
    t0 = time.perf_counter()
    report = verify_file(path)
    print(f"[{label}] ledger verify (full chain + head):   {time.perf_counter() - t0:.2f} s, "
          f"{report.entries} entries, intact={report.ok}")
    broker = make(tmp, bench_doc(), sync)
    t0 = time.perf_counter()
    broker.run_operation("show_payout", {}, "WARMUP1")     # the broker's first decision: full verify
    print(f"[{label}] first decision (full verify):        {(time.perf_counter() - t0) * 1e3:.0f} ms")
    print(summary(f"[{label}] executed payout", run(broker, decisions, offset=10 ** 6)))
    # a same-size, in-place edit of the ledger's first amount (its oldest entry), mtime put back
    data = path.read_bytes()
    off = data.index(b'"amount":"') + len(b'"amount":"')
    line = data.count(b"\n", 0, off) + 1
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(b"9" if data[off:off + 1] != b"9" else b"8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    age = (time.time() - next(iter_entries(path))["ts"]) / DAY
    t0 = time.perf_counter()
    d = broker.run_operation("pay_supplier", {"amount": "1.00"})
    took = (time.perf_counter() - t0) * 1e3
    r = verify_file(path)
    ok = d.status == "ledger_corrupt" and r.line == line
    print(f"[{label}] edit of line {line} ({age:.1f} days old), mtime restored: next decision {d.status} "
          f"in {took:.0f} ms; ledger verify names line {r.line}: {'PASS' if ok else 'FAIL'}")
    broker.close()
    return ok


# ------------------------------------------------------------------ contention
def _contender(args):
    tmp, doc, n, amt, barrier, wid, sync = args
    broker = make(Path(tmp), doc, sync, seed=f"w{wid}")
    broker.run_operation("show_payout", {}, "WARMUP1")      # token, imports
    barrier.wait(timeout=120)
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        d = broker.run_operation("pay_supplier", {"amount": amt, "note": f"worker {wid} call {i}"})
        out.append((d.status, time.perf_counter() - t0))
    broker.close()
    return out


def contention(root: Path, trials: int, procs: int, calls: int, sync: bool) -> bool:
    cap, amt = Decimal("3000.00"), "20.00"
    doc = bench_doc(daily=str(cap))
    ctx = mp.get_context("spawn")
    ok_all, lat_all, exec_lat = True, [], []
    for trial in range(trials):
        tmp = root / f"contention-{trial}"
        tmp.mkdir()
        barrier = ctx.Manager().Barrier(procs)
        t0 = time.perf_counter()
        with ctx.Pool(procs) as pool:
            results = pool.map(_contender, [(str(tmp), doc, calls, amt, barrier, w, sync) for w in range(procs)])
        wall = time.perf_counter() - t0
        calls_done = [c for r in results for c in r]
        executed = [c for c in calls_done if c[0] == "executed"]
        moved = sum((Decimal(e["amount"]) for e in iter_entries(tmp / "ledger.jsonl") if e["t"] == "reserve"),
                    Decimal(0))
        intact = verify_file(tmp / "ledger.jsonl").ok
        ok = moved <= cap and len(executed) * Decimal(amt) == moved and intact \
            and len(calls_done) == procs * calls
        ok_all &= ok
        lat_all += [c[1] for c in calls_done]
        exec_lat += [c[1] for c in executed]
        others = sorted({c[0] for c in calls_done} - {"executed"})
        print(f"[contention] trial {trial + 1}: {procs} processes x {calls} calls of {amt}: executed "
              f"{len(executed)} ({moved} of cap {cap}), others {others}, ledger intact={intact}, "
              f"wall {wall:.1f} s: {'PASS' if ok else 'FAIL'}")
    print(summary(f"[contention] every call ({trials} trials)", lat_all))
    print(summary(f"[contention] executed calls ({trials} trials)", exec_lat))
    return ok_all


def _filesystem(path: str) -> str:
    best, fs = "", "?"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 2 and path.startswith(parts[1]) and len(parts[1]) > len(best):
                    best, fs = parts[1], parts[2]
    except OSError:
        pass
    return fs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=2000)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--no-sync", action="store_true")
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args(argv)
    base = args.dir or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
    sync = not args.no_sync
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=base, prefix="gb-bench-broker-") as d:
        tmp = Path(d)
        print(f"ledgers in {d} ({_filesystem(os.path.realpath(d))}), sync {'on' if sync else 'off'}, "
              f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
        (tmp / "fresh").mkdir()
        broker = make(tmp / "fresh", bench_doc(), sync)
        broker.run_operation("show_payout", {}, "WARMUP1")      # first token fetch, imports
        print(summary("[fresh] executed payout", run(broker, args.decisions)))
        broker.close()
        now = time.time()
        ok = shape(tmp / "year", f"{args.entries} over a year", args.entries, now - YEAR, YEAR,
                   args.decisions, sync)
        ok &= shape(tmp / "day", f"{args.entries} in the window", args.entries, now - DAY + 600, DAY - 1200,
                    args.decisions, sync)
        ok &= contention(tmp, args.trials, 8, 50, sync)
    load1 = os.getloadavg()
    print(f"load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; checks: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Figures for `guardbench sandbox serve` (issue J, item 13), against a real server subprocess.

1. One keep-alive client: requests/s, p50 and p99 latency.
2. 16 concurrent keep-alive clients: requests/s, p50 and p99 latency.
3. The server's peak RSS (VmHWM) after 100,000 requests, and its RSS after the first 10,000
   (memory must not grow with the number of exchanges: they are streamed to the record file).

The mix: nine reads (GET an order) for every write (create an order; --writes-every), each client
with its own token, every exchange recorded to a file. Clients use http.client over 127.0.0.1.

    python bench/bench_sandbox.py [--requests 100000] [--out FILE]
"""
from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ORDER = json.dumps({"intent": "CAPTURE", "purchase_units": [{"amount": {"currency_code": "USD", "value": "5.00"}}]})


def rss_kb(pid: int, key: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return -1


WRITES_EVERY = 10


class Client:
    def __init__(self, port: int):
        from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET

        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        basic = base64.b64encode(f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}".encode()).decode()
        tok = self._call("POST", "/v1/oauth2/token", "grant_type=client_credentials",
                         {"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"})
        self.auth = {"Authorization": f"Bearer {json.loads(tok)['access_token']}"}
        self.order = json.loads(self._call("POST", "/v2/checkout/orders", ORDER,
                                           {**self.auth, "Content-Type": "application/json"}))["id"]
        self.n = 0

    def _call(self, method, path, body=None, headers=None) -> bytes:
        self.conn.request(method, path, body=body, headers=headers or {})
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.status >= 500:
            raise RuntimeError(f"{method} {path}: HTTP {resp.status}")
        return data

    def one(self) -> float:
        self.n += 1
        t0 = time.perf_counter()
        if WRITES_EVERY and self.n % WRITES_EVERY == 0:
            self._call("POST", "/v2/checkout/orders", ORDER, {**self.auth, "Content-Type": "application/json"})
        else:
            self._call("GET", f"/v2/checkout/orders/{self.order}", None, self.auth)
        return time.perf_counter() - t0


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run_clients(port: int, clients: int, per_client: int) -> dict:
    lat: list[list[float]] = [[] for _ in range(clients)]
    conns = [Client(port) for _ in range(clients)]
    start = threading.Barrier(clients + 1)

    def work(i):
        start.wait()
        for _ in range(per_client):
            lat[i].append(conns[i].one())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    allx = [x for xs in lat for x in xs]
    for c in conns:
        c.conn.close()
    return {"clients": clients, "requests": len(allx), "requests_per_s": round(len(allx) / wall),
            "p50_ms": round(1000 * statistics.median(allx), 3), "p99_ms": round(1000 * _pct(allx, 0.99), 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=100_000, help="requests for the memory figure")
    ap.add_argument("--out", default=None, help="also write the figures (JSON) to this file")
    ap.add_argument("--writes-every", type=int, default=10,
                    help="one order created every N requests (0: reads only; what grows then is the stand-in's "
                         "own state, the orders PayPal keeps, not the record)")
    opts = ap.parse_args()
    global WRITES_EVERY
    WRITES_EVERY = opts.writes_every
    with tempfile.TemporaryDirectory(prefix="gb-bench-serve-") as tmp:
        record = Path(tmp) / "wire.jsonl"
        proc = subprocess.Popen([sys.executable, "-m", "guardbench.cli.main", "sandbox", "serve", "--port", "0",
                                 "--record", str(record)], stdout=subprocess.PIPE, text=True)
        try:
            port = int(re.search(r":(\d+) ", proc.stdout.readline()).group(1))
            one = run_clients(port, 1, 3000)
            many = run_clients(port, 16, 300)
            done = one["requests"] + many["requests"]
            first = run_clients(port, 4, max(1, (10_000 - done) // 4))
            done += first["requests"]
            rss_10k = rss_kb(proc.pid)
            rest = max(0, opts.requests - done)
            if rest:
                run_clients(port, 4, rest // 4)
                done += 4 * (rest // 4)
            peak, now = rss_kb(proc.pid, "VmHWM"), rss_kb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        lines = sum(1 for _ in record.open("rb"))
    load = os.getloadavg()
    result = {"writes_every": WRITES_EVERY, "one_keepalive_client": one, "sixteen_clients": many,
              "memory": {"requests": done, "recorded_exchanges": lines, "rss_after_10k_kb": rss_10k,
                         "rss_at_end_kb": now, "peak_rss_kb": peak},
              "load_average_1_5_15": [round(x, 2) for x in load], "cpus": os.cpu_count()}
    print(f"one keep-alive client: {one['requests_per_s']} req/s, p50 {one['p50_ms']} ms, p99 {one['p99_ms']} ms")
    print(f"16 concurrent clients: {many['requests_per_s']} req/s, p50 {many['p50_ms']} ms, "
          f"p99 {many['p99_ms']} ms")
    print(f"after {done} requests ({lines} recorded): peak RSS {peak / 1024:.1f} MiB "
          f"(RSS {rss_10k / 1024:.1f} MiB after 10,000, {now / 1024:.1f} MiB at the end)")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs "
          "(other work on the machine shares them)")
    print(json.dumps(result))
    if opts.out:
        Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

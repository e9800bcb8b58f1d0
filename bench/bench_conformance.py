"""Time the two conformance figures, each run in a fresh interpreter (median of N).

    python bench/bench_conformance.py [--runs 5] [--specs-dir DIR] [--run RUN_DIR]

1. `guardbench conformance`: the whole built-in check: imports, sha256 of the six
   documents, openapi-core loading them, the broker driving every policy operation, the
   control arm on every benign case, every built-in request, control and business-rule
   probe sent to the stand-in, everything validated, outputs written. Budget: 5 s.
2. `guardbench conformance --run RUN` over the default benchmark run (630 records;
   generated into a temporary folder with `guardbench run --quiet` unless --run is given).
   Budget: 10 s.

Then an in-process breakdown of the built-in check from one further subprocess.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET_CHECK_S = 5.0
BUDGET_RUN_S = 10.0

PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
import openapi_core  # noqa: F401
t1 = time.perf_counter()
from guardbench.conformance import loader, corpus, compose, replay
from guardbench.conformance.validate import Validator
specs_dir = sys.argv[1] or None
names = loader.load_lock().names
for n in names:
    loader.document(n, specs_dir)
t2 = time.perf_counter()
for n in names:
    loader.openapi_app(n, specs_dir)
t3 = time.perf_counter()
broker = compose.broker_probes()
control = compose.control_probes()
hand = corpus.builtin_valid() + corpus.negative_controls() + corpus.business_rule_probes()
replays = replay.standin_probes(hand)
t4 = time.perf_counter()
v = Validator(specs_dir)
probes = hand + broker.probes + control.probes + replays
responses = 0
for p in probes:
    r = v.request(p.request)
    if p.response is not None and r.in_scope and r.route_found:
        v.response(p.request, p.response)
        responses += 1
t5 = time.perf_counter()
per_doc = {n: round(loader.document(n, specs_dir).build_seconds, 3) for n in names}
print(json.dumps({"import_openapi_core": t1 - t0, "verify_parse_patch": t2 - t1,
                  "openapi_core_load": t3 - t2, "compose_and_standin": t4 - t3, "validate": t5 - t4,
                  "requests": len(probes), "unique": v.unique, "responses": responses,
                  "per_document": per_doc}))
"""


CPU: list[float] = []   # CPU seconds (user + sys) of each timed child, in order


def _median(cmd: list[str], runs: int) -> tuple[list[float], subprocess.CompletedProcess | None]:
    import resource

    times = []
    CPU.clear()
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        times.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            return times, proc
    return times, None


def _line(label: str, times: list[float], budget: float) -> str:
    med = statistics.median(times)
    return (f"{label}: median {med:.2f} s over {len(times)} runs (min {min(times):.2f}, "
            f"max {max(times):.2f}; CPU median {statistics.median(CPU):.2f} s); budget {budget:.1f} s -> "
            f"{'ok' if med <= budget else 'OVER'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--specs-dir", default=None)
    ap.add_argument("--run", dest="run_dir", default=None,
                    help="A benchmark run to check (default: a fresh default run in a temporary folder).")
    args = ap.parse_args(argv)
    base = [sys.executable, "-m", "guardbench.cli.main", "conformance", "--json", "--force"]   # repeated into one --out
    if args.specs_dir:
        base += ["--specs-dir", args.specs_dir]
    rc = 0
    with tempfile.TemporaryDirectory() as tmp:
        times, failed = _median(base + ["--out", str(Path(tmp) / "builtin")], args.runs)
        if failed is not None:
            print(failed.stdout, failed.stderr, file=sys.stderr)
            return failed.returncode
        med_check = statistics.median(times)
        print(_line("guardbench conformance (whole check)", times, BUDGET_CHECK_S))

        run_dir = args.run_dir
        if run_dir is None:
            run_dir = str(Path(tmp) / "default-run")
            gen = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", "--out", run_dir, "--quiet"],
                                 capture_output=True, text=True, cwd=REPO)
            if gen.returncode != 0:
                print(gen.stdout, gen.stderr, file=sys.stderr)
                return gen.returncode
        records = sum(1 for line in (Path(run_dir) / "runs.jsonl").open() if line.strip())
        times, failed = _median(base + ["--run", run_dir, "--out", str(Path(tmp) / "run")], args.runs)
        if failed is not None:
            print(failed.stdout, failed.stderr, file=sys.stderr)
            return failed.returncode
        med_run = statistics.median(times)
        print(_line(f"guardbench conformance --run ({records} records)", times, BUDGET_RUN_S))
        summary = json.loads(subprocess.run(base + ["--run", run_dir, "--out", str(Path(tmp) / "run")],
                                            capture_output=True, text=True, cwd=REPO).stdout)
        print(f"  {summary['exchanges']} exchanges, {summary['unique_requests_validated']} distinct requests "
              f"validated, PayPal requests conforming {summary['paypal_requests_conforming'][0]}/"
              f"{summary['paypal_requests_conforming'][1]}")
    if med_check > BUDGET_CHECK_S or med_run > BUDGET_RUN_S:
        rc = 1

    proc = subprocess.run([sys.executable, "-c", PHASES, args.specs_dir or ""],
                          capture_output=True, text=True, cwd=REPO)
    if proc.returncode == 0:
        ph = json.loads(proc.stdout)
        print("whole check, in process:")
        print(f"  import openapi-core   {ph['import_openapi_core']:.2f} s")
        print(f"  verify+parse+patch    {ph['verify_parse_patch']:.2f} s (6 documents)")
        print(f"  openapi-core loading  {ph['openapi_core_load']:.2f} s "
              + " ".join(f"{k}={v}" for k, v in ph["per_document"].items()))
        print(f"  compose + stand-in    {ph['compose_and_standin']:.2f} s (broker, control arm, replays)")
        print(f"  validate              {ph['validate']:.2f} s ({ph['requests']} requests, {ph['unique']} "
              f"distinct; {ph['responses']} responses)")
    else:
        print(proc.stderr, file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())

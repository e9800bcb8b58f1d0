"""Time every result table on 1,000 cases x 5 variants x 3 arms of synthetic records (target <= 0.5 s each).

    python bench/bench_stats.py [--cases 1000] [--variants 5] [--repeats 5] [--strict]

The records are clustered the way real ones are: each case has its own propensity, so the
variants of a case mostly agree (the clustered statistics then have real work to do), with
lost runs and money in two currencies. Each table function is timed in this process (the
records are already in memory, as in `guardbench run`), median of --repeats, and so is
all_tables() and rendering every table as 100-column text. Wall and CPU time are both given: on a
loaded machine the CPU time is the steadier figure.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "report"))
TARGET_S = 0.5


def clustered_records(n_cases: int, variants: int, seed: int = 0) -> list[dict]:
    import report_synth as synth
    rng = random.Random(seed)
    fams = ("benign",) * 2 + synth.FAMILIES
    base = {"guardrail": 0.03, "control": 0.9, "hardened": 0.5}
    out = []
    for i in range(n_cases):
        fam = fams[i % len(fams)]
        case = f"{fam[:3]}-case-{i:04d}"
        shift = rng.betavariate(0.5, 0.5)                 # the case's own difficulty, shared by its variants
        for v in range(variants):
            for arm, p in base.items():
                p_case = min(1.0, max(0.0, 0.7 * p + 0.3 * shift)) if arm != "guardrail" else p * shift
                status = "lost" if rng.random() < 0.01 else "answered"
                if fam == "benign":
                    out.append(synth.record(case, fam, arm, variant=v, status=status,
                                            benign_ok=rng.random() < 1 - p_case / 4))
                else:
                    ok = rng.random() < p_case
                    cur = "JPY" if i % 11 == 0 else "EUR"
                    money = {cur: f"{rng.randint(1, 500)}.00"} if ok and fam != "policy_attack" else {}
                    out.append(synth.record(case, fam, arm, variant=v, status=status, success=ok, money=money,
                                            attempts=0 if ok else 1))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--variants", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--strict", action="store_true", help="exit 1 when a table's median exceeds the target")
    args = ap.parse_args(argv)
    from guardbench.records.record import RunRecord
    from guardbench.report import defence_tables as D
    from guardbench.report import tables as T
    # the tables read typed records, as `guardbench run` holds them (slim: without the wire)
    records = [RunRecord.from_dict(d, slim=True) for d in clustered_records(args.cases, args.variants)]
    funcs = [T.headline, T.by_family, T.by_incident_class, T.money, T.comparisons, T.zero_incident_bounds,
             T.clustering_check, D.comparison, D.false_blocks, D.paired_against_control]
    result = {"bench": "tables", "records": len(records), "cases": args.cases, "variants": args.variants,
              "arms": 3, "repeats": args.repeats, "load_average": round(os.getloadavg()[0], 2),
              "target_s": TARGET_S, "tables": {}}
    result["tables_cpu"] = {}
    for f in funcs:
        times, cpu = [], []
        for _ in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            f(records)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        result["tables"][f.__name__] = round(statistics.median(times), 4)
        result["tables_cpu"][f.__name__] = round(statistics.median(cpu), 4)
    for name, work in (("all_tables", lambda: T.all_tables(records)),
                       ("all_tables_and_text", lambda: [t.text() for t in T.all_tables(records)])):
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            work()
            times.append(time.perf_counter() - t0)
        result[name + "_s"] = round(statistics.median(times), 4)
    worst = max(result["tables"].values())
    result["slowest_table_s"] = worst
    result["ok"] = worst <= TARGET_S
    for name, s in result["tables"].items():
        print(f"{name:<24} {s:7.4f} s wall, {result['tables_cpu'][name]:7.4f} s CPU")
    print(f"all tables {result['all_tables_s']:.3f} s, with text rendering {result['all_tables_and_text_s']:.3f} s; "
          f"{len(records)} records; load average {result['load_average']}")
    print(json.dumps(result))
    return 1 if args.strict and worst > TARGET_S else 0


if __name__ == "__main__":
    sys.exit(main())

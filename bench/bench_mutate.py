"""Wall-clock time of the whole mutation run (`guardbench mutate`), repeated; medians and load.

    python bench/bench_mutate.py [--repeat 3] [--jobs 2] [--out results/mutation]

Each repeat is a complete, separate `guardbench mutate` process (snapshot, baseline twice,
controls, every safeguard). The load average before and after each repeat is printed: on a
shared 2-core machine other people's test runs slow the harness down, so read the median.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "mutation")
    ap.add_argument("--budget", type=float, default=180.0, help="Seconds the whole run should stay under.")
    args = ap.parse_args(argv)

    rows = []
    for i in range(args.repeat):
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "mutate", "--jobs", str(args.jobs),
                            "--timeout", str(args.timeout), "--out", str(args.out), "--quiet"],
                           cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        load1 = os.getloadavg()[0]
        if r.returncode == 1:
            print(r.stderr.strip(), file=sys.stderr)
            return 1
        data = json.loads((args.out / "mutation.json").read_text())
        t = data["timing"]
        rows.append({"wall_s": round(wall, 1), "exit": r.returncode, "headline": data["headline"],
                     "baseline_s": t["baseline_s"], "controls_s": t["controls_s"], "mutants_s": t["mutants_s"],
                     "mutant_median_s": t["mutant_median_s"], "mutant_max_s": t["mutant_max_s"],
                     "load_before": round(load0, 2), "load_after": round(load1, 2)})
        print(f"run {i + 1}: {wall:6.1f} s  (baseline {t['baseline_s']} s, controls {t['controls_s']} s, mutants "
              f"{t['mutants_s']} s; median mutant {t['mutant_median_s']} s)  load {load0:.2f} -> {load1:.2f}  "
              f"exit {r.returncode}  {data['headline'].split(';')[0]}")
    walls = [r["wall_s"] for r in rows]
    med = statistics.median(walls)
    print(f"median wall {med:.1f} s over {len(walls)} runs (min {min(walls):.1f}, max {max(walls):.1f}); "
          f"jobs {args.jobs} on {os.cpu_count()} cores; budget {args.budget:.0f} s: "
          f"{'within' if med <= args.budget else 'OVER'}")
    (args.out / "bench_mutate.json").write_text(json.dumps({"runs": rows, "median_wall_s": med,
                                                            "jobs": args.jobs, "cpu_count": os.cpu_count()},
                                                           indent=2) + "\n")
    return 0 if med <= args.budget else 4


if __name__ == "__main__":
    sys.exit(main())

"""Figures for `guardbench run` (issue B), measured in fresh subprocesses.

1. The default scripted matrix (every case and variant x guardrail, control, hardened),
   wall time with process start, median of --repeats runs.
2. Scaling: generated variants per case (runs grow linearly), jobs 1 vs jobs 2.

    python bench/bench_run.py [--repeats 5] [--scale 10,100,360]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


CPU: list[float] = []      # user + system seconds of each timed process (less sensitive to other load)


def timed_run(args: list[str]) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="gb-bench-") as tmp:
        out = Path(tmp) / "run"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", "--quiet", "--out", str(out), *args],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        with (out / "runs.jsonl").open("rb") as fh:
            n = sum(1 for _ in fh)
    return wall, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", default="10,100,360", help="generated variants per case")
    opts = ap.parse_args()
    walls, n = [], 0
    load = os.getloadavg()[0]
    for _ in range(opts.repeats):
        w, n = timed_run([])
        walls.append(w)
    cpu = statistics.median(CPU)
    result = {"default": {"runs": n, "median_s": round(statistics.median(walls), 3),
                          "min_s": round(min(walls), 3), "max_s": round(max(walls), 3),
                          "median_cpu_s": round(cpu, 3), "load_average": round(load, 2)}}
    print(f"default matrix: {n} runs, median {statistics.median(walls):.2f} s wall "
          f"(min {min(walls):.2f}, max {max(walls):.2f}) over {opts.repeats}, process start included; "
          f"median CPU {cpu:.2f} s; load average {load:.2f} at the start")
    result["scale"] = []
    for v in [int(x) for x in opts.scale.split(",") if x]:
        w1, n1 = timed_run(["--generate-variants", str(v)])
        w2, n2 = timed_run(["--generate-variants", str(v), "--jobs", "2"])
        row = {"variants_per_case": v, "runs": n1, "jobs1_s": round(w1, 2), "jobs2_s": round(w2, 2),
               "runs_per_s_jobs1": round(n1 / w1), "speedup_jobs2": round(w1 / w2, 2)}
        result["scale"].append(row)
        print(f"{v:>4} variants/case: {n1:>6} runs  jobs=1 {w1:7.2f} s ({n1 / w1:6.0f} runs/s)  "
              f"jobs=2 {w2:7.2f} s  speed-up {w1 / w2:.2f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()

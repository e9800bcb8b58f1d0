"""Figures for `guardbench run` (issue B), measured in fresh subprocesses.

1. The default scripted matrix (every case and variant x guardrail, control, hardened),
   wall time with process start, median of --repeats runs, and the child's CPU time
   (user + system: far less sensitive than wall time to other load on a shared machine).
2. Scaling: generated variants per case (runs grow linearly), jobs 1 vs jobs 2.

    python bench/bench_run.py [--repeats 5] [--scale 10,100,360]
    python bench/bench_run.py --trees BEFORE_TREE,AFTER_TREE [--repeats 7] [--scale 100] [--cases DIR]

With ``--trees``: the default matrix on each tree (a PYTHONPATH holding a guardbench package and its
cases/), interleaved (before, after, before, ...; one warm-up each, so each tree's preflight is
remembered), medians of wall and CPU per tree; with ``--scale N`` also the matrix with N generated
variants per case on each tree (per run at scale, wall and CPU). With ``--cases DIR`` every tree runs
that case folder instead of its own: like for like, where the trees' case sets differ (a later tree
has more cases, and cases that score more per run).
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


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_run(args: list[str], cpu: list | None = None, tree: str | None = None) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": tree} if tree else None
    with tempfile.TemporaryDirectory(prefix="gb-bench-") as tmp:
        out = Path(tmp) / "run"
        c0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", "--quiet", "--out", str(out), *args],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       cwd=tmp if tree else None)     # python -m puts the cwd first: a tree's checkout would win
        wall = time.perf_counter() - t0
        if cpu is not None:
            cpu.append(_children_cpu() - c0)
        with (out / "runs.jsonl").open("rb") as fh:
            n = sum(1 for _ in fh)
    return wall, n


def interleaved(trees: list[str], repeats: int, scale: int = 0, cases: list[str] | None = None) -> None:
    """The default matrix on each tree, interleaved; medians per tree. ``scale``: also the matrix
    with that many generated variants per case (the default jobs: one worker per core, as the figure
    issue O quotes, 1.09 ms a run, was taken), per run wall and CPU. ``cases``: extra options for
    every run (``--cases DIR``)."""
    extra = cases or []
    load = os.getloadavg()[0]
    walls: dict[str, list[float]] = {t: [] for t in trees}
    cpus: dict[str, list[float]] = {t: [] for t in trees}
    big_walls: dict[str, list[float]] = {t: [] for t in trees}
    big_cpus: dict[str, list[float]] = {t: [] for t in trees}
    runs: dict[str, int] = {}
    big_runs: dict[str, int] = {}
    for t in trees:
        timed_run(extra, None, t)                    # warm-up: the tree's preflight is remembered
    for _ in range(repeats):
        for t in trees:
            w, runs[t] = timed_run(extra, cpus[t], t)
            walls[t].append(w)
            if scale:
                w, big_runs[t] = timed_run([*extra, "--generate-variants", str(scale)], big_cpus[t],
                                             t)
                big_walls[t].append(w)
    out = {}
    for t in trees:
        out[t] = {"runs": runs[t], "wall_median_s": round(statistics.median(walls[t]), 3),
                  "cpu_median_s": round(statistics.median(cpus[t]), 3),
                  "per_run_ms": round(1000 * statistics.median(walls[t]) / runs[t], 3)}
        print(f"{t}: {runs[t]} runs, wall median {statistics.median(walls[t]):.2f} s (min {min(walls[t]):.2f}, "
              f"max {max(walls[t]):.2f}), CPU median {statistics.median(cpus[t]):.2f} s over {repeats}")
        if scale:
            n, w, c = big_runs[t], statistics.median(big_walls[t]), statistics.median(big_cpus[t])
            out[t]["scale"] = {"variants_per_case": scale, "runs": n, "wall_median_s": round(w, 3),
                               "cpu_median_s": round(c, 3), "per_run_wall_ms": round(1000 * w / n, 3),
                               "per_run_cpu_ms": round(1000 * c / n, 3)}
            print(f"    {scale} variants/case: {n} runs, wall median {w:.2f} s ({1000 * w / n:.3f} ms a run), "
                  f"CPU median {c:.2f} s ({1000 * c / n:.3f} ms a run)")
    print(f"load average before {load:.2f}")
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", default=None, help="generated variants per case (default 10,100,360; "
                    "with --trees: the last of them, on each tree)")
    ap.add_argument("--trees", default="", help="BEFORE,AFTER: interleaved default matrix on each tree")
    ap.add_argument("--cases", default=None, help="with --trees: every tree runs this case folder")
    opts = ap.parse_args()
    if opts.trees:
        interleaved(opts.trees.split(","), opts.repeats,
                    int(opts.scale.rstrip(",").split(",")[-1]) if opts.scale else 0,
                    ["--cases", os.path.abspath(opts.cases)] if opts.cases else None)
        return
    walls, cpus, n = [], [], 0
    load = os.getloadavg()[0]
    for _ in range(opts.repeats):
        w, n = timed_run([], cpus)
        walls.append(w)
    result = {"default": {"runs": n, "median_s": round(statistics.median(walls), 3),
                          "min_s": round(min(walls), 3), "max_s": round(max(walls), 3),
                          "cpu_median_s": round(statistics.median(cpus), 3), "load_before": round(load, 2)}}
    print(f"default matrix: {n} runs, median {statistics.median(walls):.2f} s wall "
          f"(min {min(walls):.2f}, max {max(walls):.2f}) over {opts.repeats}, process start included; "
          f"CPU (user+sys) median {statistics.median(cpus):.2f} s; load average before {load:.2f}")
    result["scale"] = []
    for v in [int(x) for x in (opts.scale or "10,100,360").split(",") if x]:
        # --jobs 1 said: without it a run this large takes one worker per core (the label was
        # "jobs=1" over a default-jobs run until 2026-12-02)
        w1, n1 = timed_run(["--generate-variants", str(v), "--jobs", "1"])
        w2, n2 = timed_run(["--generate-variants", str(v), "--jobs", "2"])
        row = {"variants_per_case": v, "runs": n1, "jobs1_s": round(w1, 2), "jobs2_s": round(w2, 2),
               "runs_per_s_jobs1": round(n1 / w1), "speedup_jobs2": round(w1 / w2, 2)}
        result["scale"].append(row)
        print(f"{v:>4} variants/case: {n1:>6} runs  jobs=1 {w1:7.2f} s ({n1 / w1:6.0f} runs/s)  "
              f"jobs=2 {w2:7.2f} s  speed-up {w1 / w2:.2f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()

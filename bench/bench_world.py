"""Before/after figures for the runner owning the world (issue O): interleaved, medians.

For each tree (a PYTHONPATH holding a guardbench package), alternately: the default scripted run in
one process (``--jobs 1``; 1,650 runs since issue Q's cases, 1,230 before) and a 1-run process;
each a fresh subprocess, its CPU time (user + system) and wall time. Per run = (default - 1-run)
/ (runs - 1), from the CPU medians; and the marginal cost per run, between the default run and its
first two variants of every case (``--variants 2``), which load the same modules.

    python bench/bench_world.py BEFORE_TREE AFTER_TREE [--repeats 7]

Give both trees compiled bytecode (``python -m compileall TREE/guardbench``, and no
$PYTHONDONTWRITEBYTECODE): a tree without ``__pycache__`` pays about 80 ms of compiling per process.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE = ["--case", "benign-charge-plan", "--arms", "control", "--variants", "1"]
# every case's first two variants in every default arm: the same modules loaded as the default run
PART = ["--variants", "2"]


def timed(tree: str, args: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s, runs) of one `guardbench run` in a fresh process on ``tree``."""
    env = {**os.environ, "PYTHONPATH": tree}
    with tempfile.TemporaryDirectory(prefix="gb-bench-world-") as tmp:
        out = Path(tmp) / "run"
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        # cwd: not a worktree (``-m`` puts the working folder before PYTHONPATH on sys.path)
        subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", "--quiet", "--jobs", "1", "--out",
                        str(out), *args], check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        n = sum(1 for _ in (out / "runs.jsonl").open("rb"))
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--repeats", type=int, default=7)
    o = ap.parse_args()
    for tree in o.trees:                  # warm the preflight marker and the caches of each tree
        timed(tree, [])
    res: dict[str, dict[str, list[float]]] = {t: {"full": [], "one": [], "full_wall": [], "one_wall": [],
                                                  "part": []} for t in o.trees}
    runs: dict[str, int] = {}             # the default run's size per tree (cases differ between trees)
    part_runs: dict[str, int] = {}
    for _ in range(o.repeats):
        for tree in o.trees:
            w, c, runs[tree] = timed(tree, [])
            res[tree]["full"].append(c)
            res[tree]["full_wall"].append(w)
            w, c, _ = timed(tree, ONE)
            res[tree]["one"].append(c)
            res[tree]["one_wall"].append(w)
            _, c, part_runs[tree] = timed(tree, PART)
            res[tree]["part"].append(c)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; {o.repeats} interleaved repeats; medians")
    for tree, r in res.items():
        full, one, n = statistics.median(r["full"]), statistics.median(r["one"]), runs[tree]
        print(f"{tree}: default run ({n} runs) CPU {full:.3f} s, wall {statistics.median(r['full_wall']):.3f} s; "
              f"1-run process CPU {one:.3f} s, wall {statistics.median(r['one_wall']):.3f} s; "
              f"per run {(full - one) / (n - 1) * 1000:.3f} ms CPU")
        # the marginal cost: between two runs that load the same modules (a 1-run process loads
        # one arm's; the default run's lazily loaded modules otherwise count as per-run work)
        part, k = statistics.median(r["part"]), part_runs[tree]
        print(f"    marginal per run ({k} -> {n} runs, --variants 2 -> all): "
              f"{(full - part) / (n - k) * 1000:.3f} ms CPU")


if __name__ == "__main__":
    main()

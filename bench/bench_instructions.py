"""Instructions per scripted run, counted by valgrind: a figure noisy neighbours cannot move.

    python bench/bench_instructions.py [TREE ...] [--low 1] [--high 3]

For each tree (a checkout's root, put first on PYTHONPATH; default: this checkout), the scripted
matrix runs on one worker with --generate-variants LOW and HIGH under ``valgrind --tool=cachegrind
--cache-sim=no``; the difference of the two instruction counts over the difference of the run counts
is the marginal cost of a run at scale (start-up, preflight and the tables' fixed part cancel out).
Both sizes run once natively first, so the preflight, cached per tree and per --generate-variants,
is never inside a count, and PYTHONHASHSEED is fixed, so two counts of one tree agree to a few parts
in a million. Wall time on this machine's shared cores varies by 15% between two runs of one tree;
this count does not, but it weighs every instruction alike (a cache miss or a system call counts
as what it executes in user space).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(tree: Path, variants: int, valgrind: bool) -> tuple[int, int]:
    """(instructions or 0, runs recorded) of one scripted run of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory(prefix="gb-instr-") as tmp:
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "guardbench.cli.main", "run", "--quiet", "--jobs", "1",
               "--generate-variants", str(variants), "--out", str(out)]
        if valgrind:
            cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
                   f"--cachegrind-out-file={tmp}/cg.out"] + cmd
        # python -m puts the cwd first on the path: run from the temporary folder
        done = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=True)
        n = sum(1 for _ in (out / "runs.jsonl").open("rb"))
    if not valgrind:
        return 0, n
    m = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if m is None:
        raise SystemExit(f"{tree}: valgrind printed no instruction count")
    return int(m.group(1).replace(",", "")), n


def marginal(tree: Path, low: int, high: int) -> dict:
    for v in (low, high):                      # warm the tree's preflight cache for both sizes
        _run(tree, v, valgrind=False)
    (i_low, n_low), (i_high, n_high) = _run(tree, low, True), _run(tree, high, True)
    return {"tree": str(tree), "runs": [n_low, n_high], "instructions": [i_low, i_high],
            "per_run": (i_high - i_low) // (n_high - n_low)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", default=[str(ROOT)])
    ap.add_argument("--low", type=int, default=1)
    ap.add_argument("--high", type=int, default=3)
    opts = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_instructions: valgrind is not installed (apt-get install valgrind)")
    if opts.high <= opts.low:
        raise SystemExit("bench_instructions: --high must be above --low")
    os.environ.setdefault("GUARDBENCH_SPECS_DIR", str(ROOT.parent / "shared" / "specs" / "paypal"))
    results = []
    for t in opts.trees:
        r = marginal(Path(t).resolve(), opts.low, opts.high)
        results.append(r)
        print(f"{r['tree']}: {r['runs'][1] - r['runs'][0]} runs apart, "
              f"{r['per_run'] / 1e6:.3f} M instructions a run", flush=True)
    base = results[0]["per_run"]
    for r in results[1:]:
        print(f"  {Path(r['tree']).name} against {Path(results[0]['tree']).name}: "
              f"{100 * (r['per_run'] - base) / base:+.1f}%")
    print(json.dumps(results))


if __name__ == "__main__":
    main()

"""How long reading and writing run records takes: the field table against the code it replaced.

    python bench/bench_records.py [--folder results/defences] [--rounds 7] [--against /path/to/other/tree]

Times, for one committed run folder: reading every record slim (what ``guardbench table`` does), reading
them whole, and writing them back (``RunRecord.to_dict`` + the JSON line). With ``--against``, each
round runs this tree and the other one (a checkout of the code before, e.g. ``git worktree add``) in
fresh processes, interleaved, and prints both medians (ms).
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

CHILD = """
import json, sys, time
from guardbench.records.runfile import read_records
from guardbench.records.runfolder import encode
path = sys.argv[1]
t0 = time.perf_counter(); slim = read_records(path, slim=True); t1 = time.perf_counter()
full = read_records(path); t2 = time.perf_counter()
lines = [encode(r)[0] for r in full]; t3 = time.perf_counter()
print(json.dumps({"records": len(slim), "slim_ms": (t1 - t0) * 1e3, "full_ms": (t2 - t1) * 1e3,
                  "write_ms": (t3 - t2) * 1e3}))
"""


def one(tree: Path, runs: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", CHILD, str(runs)], env=env, capture_output=True, text=True,
                         check=True, cwd=tree)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", default=str(ROOT / "results" / "defences"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--against", default=None, help="another source tree to time, interleaved")
    a = ap.parse_args()
    runs = Path(a.folder) / "runs.jsonl"
    trees = {"this": ROOT} | ({"against": Path(a.against)} if a.against else {})
    got: dict[str, list[dict]] = {k: [] for k in trees}
    for _ in range(a.rounds):
        for name, tree in trees.items():
            got[name].append(one(tree, runs))
    for name, rs in got.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("slim_ms", "full_ms", "write_ms")}
        print(f"{name:8} {rs[0]['records']} records  slim read {med['slim_ms']:7.1f} ms  full read "
              f"{med['full_ms']:7.1f} ms  write {med['write_ms']:7.1f} ms  (median of {len(rs)}, {runs})")


if __name__ == "__main__":
    t = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t:.0f} s)")

"""Issue P: what the wider reading of the wire costs the default scripted run (budget: 10% of its wall).

Runs bench_run.py's default matrix (every case and variant x guardrail, control, hardened, fresh
subprocesses, process start included) alternately from two source trees (before and after: each a
PYTHONPATH), interleaved so that the machine's load falls on both alike, and quotes the medians of
wall and child CPU time.

    python bench/bench_detect.py --before /tmp/base-tree --after . [--repeats 7]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_run import timed_run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="source tree of the baseline (a PYTHONPATH)")
    ap.add_argument("--after", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--repeats", type=int, default=7)
    opts = ap.parse_args()
    trees = {"before": str(Path(opts.before).resolve()), "after": str(Path(opts.after).resolve())}
    walls: dict[str, list[float]] = {k: [] for k in trees}
    cpus: dict[str, list[float]] = {k: [] for k in trees}
    runs = {}
    load = os.getloadavg()[0]
    for i in range(opts.repeats):
        order = list(trees) if i % 2 == 0 else list(reversed(trees))      # ABBA: neither always goes first
        for name in order:
            os.environ["PYTHONPATH"] = trees[name]
            wall, runs[name] = timed_run([], cpus[name])
            walls[name].append(wall)
    out = {name: {"runs": runs[name], "wall_median_s": round(statistics.median(walls[name]), 3),
                  "cpu_median_s": round(statistics.median(cpus[name]), 3),
                  "walls": [round(w, 3) for w in walls[name]]} for name in trees}
    ratio = out["after"]["wall_median_s"] / out["before"]["wall_median_s"]
    cpu_ratio = out["after"]["cpu_median_s"] / out["before"]["cpu_median_s"]
    out["wall_ratio"], out["cpu_ratio"], out["load_before"] = round(ratio, 3), round(cpu_ratio, 3), round(load, 2)
    for name in trees:
        print(f"{name:>6}: {out[name]['runs']} runs, wall median {out[name]['wall_median_s']:.2f} s, "
              f"CPU median {out[name]['cpu_median_s']:.2f} s over {opts.repeats} (interleaved)")
    print(f"after/before: wall {ratio:.3f}, CPU {cpu_ratio:.3f} (load average before {load:.2f})")
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""Figures for the defences (issue G), measured in fresh subprocesses (process start included).

1. The six-arm scripted comparison on the default corpus
   (guardrail, control, hardened, gate, pdp, taint; every case and variant): target <= 3 s wall.
2. The static bypass suite over every installed defence and the broker: target <= 2 s wall.
3. The offline adaptive attacker over every defence and the broker (budget 12 per case).

Each figure: median of --repeats runs, with min and max, and the CPU time of the child
(user + system), which does not depend on what else the machine is doing.

    python bench/bench_defences.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIX = "guardrail,control,hardened,gate,pdp,taint"


def timed(args: list[str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one guardbench invocation."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "guardbench.cli.main", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def figure(label: str, make_args, repeats: int, target: float | None) -> dict:
    walls, cpus = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="gb-bench-") as tmp:
            w, c = timed(make_args(Path(tmp)))
        walls.append(w)
        cpus.append(c)
    med = statistics.median(walls)
    verdict = "" if target is None else (f"  (target <= {target:.0f} s: {'met' if med <= target else 'MISSED'})")
    print(f"{label:<44} median {med:5.2f} s wall  (min {min(walls):.2f}, max {max(walls):.2f}); "
          f"CPU median {statistics.median(cpus):.2f} s{verdict}")
    return {"label": label, "median_s": round(med, 3), "min_s": round(min(walls), 3), "max_s": round(max(walls), 3),
            "cpu_median_s": round(statistics.median(cpus), 3), "target_s": target}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    opts = ap.parse_args()
    results = [
        figure("six-arm scripted comparison (1260 runs)",
               lambda d: ["run", "--arms", SIX, "--quiet", "--out", str(d / "run")], opts.repeats, 3.0),
        figure("bypass suite, every defence + broker",
               lambda d: ["bypass", "--quiet", "--force", "--out", str(d)], opts.repeats, 2.0),
        figure("adaptive attacker (offline), every defence",
               lambda d: ["adapt", "--quiet", "--force", "--out", str(d)], opts.repeats, None),
    ]
    print(json.dumps(results))


if __name__ == "__main__":
    main()

"""Time `guardbench report` on the default run (>= 450 records); target: median <= 5 s wall time.

    python bench/bench_report.py [--run DIR] [--repeats 5] [--strict]

Without --run it uses /tmp/gb-default, running `guardbench run --out /tmp/gb-default --quiet` first
if that folder has no complete default run; if the pipeline cannot run, a synthetic run of 630
records (42 cases x 5 variants x 3 arms, tests/report/report_synth.py) stands in.
Each timing is a fresh subprocess (import costs included), writing into a temporary folder.
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

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 5.0
MIN_RECORDS = 450


def n_records(run: Path) -> int:
    p = run / "runs.jsonl"
    return sum(1 for line in p.open() if line.strip()) if p.exists() else 0


def default_run() -> tuple[Path, str]:
    real = Path("/tmp/gb-default")
    if n_records(real) < MIN_RECORDS:
        try:
            subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", "--out", str(real), "--quiet"],
                           cwd=ROOT, check=True, capture_output=True, timeout=1800)
        except (subprocess.SubprocessError, OSError) as exc:
            print(f"note: `guardbench run` failed ({type(exc).__name__}); using a synthetic run", file=sys.stderr)
    if n_records(real) >= MIN_RECORDS:
        return real, "default run"
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    import report_synth
    synth = Path(tempfile.gettempdir()) / "gb-bench-synthetic"
    report_synth.write_run(synth, report_synth.default_like())
    return synth, "synthetic run"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--strict", action="store_true", help="exit 1 when the median exceeds the target")
    args = ap.parse_args(argv)
    run, kind = (args.run, "given run") if args.run else default_run()
    n = n_records(run)
    times = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="gb-bench-report-") as out:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "guardbench.cli.main", "report", str(run), "--out", out],
                           cwd=ROOT, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(json.dumps({"bench": "guardbench report", "run": kind, "kind": kind, "records": n,
                      "repeats": args.repeats, "median_s": round(med, 3), "min_s": round(min(times), 3),
                      "max_s": round(max(times), 3), "target_s": TARGET_S, "ok": med <= TARGET_S}))
    return 1 if args.strict and med > TARGET_S else 0


if __name__ == "__main__":
    sys.exit(main())

"""Run every benchmark script and keep its output under results/bench/ (what the README quotes).

    python bench/run_all.py [NAME ...]

names: run stats broker conformance report explorer defences llm mutate sandbox mcp install

Each file records the command, the machine's load average before it started and the
script's own output, so a reader can judge the conditions of a figure.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {
    "run": ["bench/bench_run.py", "--repeats", "5", "--scale", "10,100"],
    "stats": ["bench/bench_stats.py"],
    "broker": ["bench/bench_broker.py"],
    "conformance": ["bench/bench_conformance.py"],
    "report": ["bench/bench_report.py"],
    "explorer": ["bench/bench_explorer.py"],
    "defences": ["bench/bench_defences.py"],
    "llm": ["bench/bench_llm.py"],
    "mutate": ["bench/bench_mutate.py", "--repeat", "1"],
    "sandbox": ["bench/bench_sandbox.py", "--requests", "100000"],
    "mcp": ["bench/bench_mcp.py"],
    "install": ["bench/bench_install.py", "--repeats", "3"],     # minutes: pip installs into fresh venvs
}


def main(names: list[str]) -> None:
    out_dir = ROOT / "results" / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in names or [n for n in SCRIPTS if n not in ("mutate", "install")]:
        cmd = [sys.executable, *SCRIPTS[name]]
        load = os.getloadavg()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        text = (f"$ python {' '.join(SCRIPTS[name])}\n"
                f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
                f"load average before start {load[0]:.2f}, script wall {wall:.1f} s, exit {proc.returncode}\n"
                + proc.stdout + (("\n# stderr\n" + proc.stderr[-2000:]) if proc.returncode else ""))
        (out_dir / f"{name}.txt").write_text(text)
        print(text)


if __name__ == "__main__":
    main(sys.argv[1:])

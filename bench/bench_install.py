"""Install time of the README's main job: `bash scripts/bench.sh` on a fresh virtual environment.

A clean clone of the repository (at HEAD, or at ``--ref``) is made in a temporary folder and
``scripts/bench.sh --quiet`` run in it ``--repeats`` times, each with its .venv removed first.
pip's cache is whatever this machine holds (warm after the first repeat; the first is reported
apart): the figure is the cost of creating the venv and installing the wheels, not of downloading
them. Reported: the install (venv + pip) and the whole script, wall and CPU time of the children,
the installed size of the venv and the machine's load average before each repeat.

    python bench/bench_install.py [--repeats 3] [--ref COMMIT]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def once(repo: Path) -> dict:
    shutil.rmtree(repo / ".venv", ignore_errors=True)
    load = os.getloadavg()[0]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    c0, t0 = _cpu(), time.perf_counter()
    # the script's own steps, timed apart: venv + pip (the install), then the run
    subprocess.run(["python3", "-m", "venv", ".venv"], cwd=repo, check=True, env=env)
    subprocess.run([".venv/bin/python", "-m", "pip", "install", "--quiet", "--upgrade", "pip"], cwd=repo,
                   check=True, env=env)
    subprocess.run([".venv/bin/python", "-m", "pip", "install", "--quiet", "-e", "."], cwd=repo, check=True,
                   env=env)
    install, install_cpu = time.perf_counter() - t0, _cpu() - c0
    with tempfile.TemporaryDirectory(prefix="gb-install-run-") as out:
        subprocess.run([".venv/bin/guardbench", "run", "--quiet", "--out", out + "/run"], cwd=repo, check=True,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = time.perf_counter() - t0
    return {"install_s": round(install, 2), "install_cpu_s": round(install_cpu, 2), "total_s": round(total, 2),
            "venv_mb": round(_size(repo / ".venv") / 1e6, 1), "load_before": round(load, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ref", default="HEAD", help="commit to measure (default HEAD)")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gb-install-") as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "checkout", "--quiet", opts.ref], check=True)
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        warm = once(repo)                     # fills pip's cache with this commit's wheels
        rows = [once(repo) for _ in range(opts.repeats)]
    med = {k: statistics.median(r[k] for r in rows) for k in ("install_s", "install_cpu_s", "total_s")}
    print(f"commit {commit}: install (venv + pip install -e .) median {med['install_s']:.1f} s wall, "
          f"{med['install_cpu_s']:.1f} s CPU; whole scripts/bench.sh median {med['total_s']:.1f} s; "
          f"venv {rows[0]['venv_mb']} MB; {opts.repeats} repeats, pip cache warm "
          f"(first, cache-filling pass: install {warm['install_s']} s); load before "
          f"{', '.join(str(r['load_before']) for r in rows)}")
    print(json.dumps({"commit": commit, "warm_up": warm, "repeats": rows, "median": med}))


if __name__ == "__main__":
    main()

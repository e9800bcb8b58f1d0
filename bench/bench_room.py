"""Per-run overhead of a room (guardbench/room/: namespaces, capture, teardown) for an agent application,
in Python and in Node, against the same application run uncontained (--room off).

Each run is one benign case through the app arm (arms/app.py), the application a trivial one that
answers at once and sends nothing (so the figure is guardbench's cost, not the application's): in a
room that is making the namespaces (unshare + the holder), entering them (nsenter, setpriv), serving
DNS and the captured ports, the end-of-run settle (at most 6 s, here none: nothing is left) and
teardown. Medians of --runs runs each, after one warm-up run per arm.

    python bench/bench_room.py [--runs 20] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = {
    "python": (sys.executable, ["-c", "import json,sys; json.load(sys.stdin); print(json.dumps({'final': 'ok'}))"]),
    "node": ("node", ["-e", "let s='';process.stdin.on('data',c=>s+=c);process.stdin.on('end',()=>"
                            "process.stdout.write(JSON.stringify({final:'ok'})))"]),
}


def spec_file(folder: Path, lang: str) -> Path:
    cmd, args = APPS[lang]
    path = folder / f"{lang}.yaml"
    path.write_text(f"name: bench-{lang}\nagent:\n  command: {json.dumps(cmd)}\n  args: {json.dumps(args)}\n"
                    "reach: proxy\ncredentials: {client_id: PAYPAL_CLIENT_ID, client_secret: PAYPAL_CLIENT_SECRET}\n"
                    "state: fresh\ntimeouts: {start: 30, run: 60}\n")
    return path


def per_run(spec: Path, room: str, runs: int) -> list[float]:
    from guardbench.agents.scripted import ScriptedAgent
    from guardbench.arms.app import AppArm
    from guardbench.broker import load_policy
    from guardbench.cases.load import load_cases
    from guardbench.execution.bench import arm_options
    from guardbench.execution.runner import Bench, RunSpec
    policy = load_policy(ROOT / "guardbench" / "policies" / "usd.yaml")
    cases = load_cases(ROOT / "cases" / "usd")
    arm = AppArm(arm_options(policy, spec=str(spec), room=room))
    bench = Bench(policy, cases, {arm.name: arm}, {"credulous": ScriptedAgent("credulous")})
    out = []
    try:
        for i in range(runs + 1):
            t0 = time.perf_counter()
            rec = bench.execute(RunSpec("usd-benign-charge-pro", 0, arm.name, "credulous", repeat=i))
            took = time.perf_counter() - t0
            assert rec.status == "answered", rec.transcript.error
            if i:                       # the first run warms caches (the token, imports)
                out.append(took)
    finally:
        arm.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    from guardbench.room import unavailable
    if unavailable():
        sys.exit(f"no room can be made here: {unavailable()}")
    folder = Path(tempfile.mkdtemp(prefix="gb-bench-room-"))
    results = {}
    try:
        for lang in APPS:
            if shutil.which(APPS[lang][0]) is None:
                print(f"{lang}: {APPS[lang][0]} not installed, skipped")
                continue
            spec = spec_file(folder, lang)
            off, on = per_run(spec, "off", a.runs), per_run(spec, "auto", a.runs)
            m_off, m_on = statistics.median(off), statistics.median(on)
            results[lang] = {"runs": a.runs, "median_off_s": round(m_off, 4), "median_room_s": round(m_on, 4),
                             "overhead_s": round(m_on - m_off, 4)}
            print(f"{lang:6s}  uncontained {m_off * 1000:7.1f} ms/run   in a room {m_on * 1000:7.1f} ms/run   "
                  f"overhead {1000 * (m_on - m_off):7.1f} ms (medians of {a.runs})")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

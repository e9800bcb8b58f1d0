"""A scripted run's CPU by stage, tree against tree, on one case folder (issue O, item 9).

    python bench/bench_stages_trees.py TREE [TREE ...] [--cases DIR] [--variants 20] [--repeats 3]

Each tree (a checkout's root) runs in a process of its own, on one core: the run command's default
arms (guardrail, control, hardened) and agent over every case of ``--cases`` (default: the first
tree's cases/) with ``--variants`` generated variants each, as its runner runs them: ``start``,
the agent (``act``), ``finish`` (with ``score`` inside it timed apart) and the record's line, each
timed with ``time.process_time``; medians of ``--repeats`` passes, in ms of CPU a run. One case
folder for every tree makes it like for like where the trees' case sets differ; a tree from before
issue O (its runner at guardbench/runner.py) is driven the same way. Where bench/bench_stages.py
breaks one tree's run down detector by detector, this says which stage moved between two trees.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

_CHILD = r'''
import contextlib, json, statistics, sys, time
from pathlib import Path
cases_dir, variants, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
from guardbench.broker.policy import load_policy
try:                                        # the layout issue O made
    from guardbench.execution import runner
    from guardbench.execution.bench import build_bench, load_selected
    from guardbench.records.runfolder import encode
    from guardbench.util.heap import long_lived
    LAYOUT = "execution"
except ImportError:                         # before it: the runner at the package's top
    from guardbench import runner
    from guardbench.cli.run import build_bench, load_selected
    from guardbench.runfolder import encode
    long_lived = contextlib.nullcontext
    LAYOUT = "flat"
scored = [0.0]
inner = runner.score
def score(*a, **k):
    t0 = time.process_time()
    try:
        return inner(*a, **k)
    finally:
        scored[0] += time.process_time() - t0
runner.score = score
ARMS = ("guardrail", "control", "hardened")
cases = load_selected(Path(cases_dir), (), (), variants)
bench = build_bench(load_policy(None), cases, {a: a for a in ARMS if a != "control"}, "none")
specs = runner.plan(cases, list(ARMS), ["credulous"])
def act(started):
    if LAYOUT == "execution":
        return bench.act(started)
    transcript = started.refused_transcript() if hasattr(started, "refused_transcript") else None
    return transcript or bench.agents[started.spec.agent].run(started.prepared.session)
passes = []
clock = time.process_time
with long_lived():
    for _ in range(repeats + 1):            # the first pass stages what a tree stages: not counted
        got = dict.fromkeys(("start", "agent and arm", "finish", "record line"), 0.0)
        scored[0] = 0.0
        for s in specs:
            t0 = clock(); started = bench.start(s); t1 = clock(); transcript = act(started)
            t2 = clock(); rec = bench.finish(started, transcript, True, s.attempt); t3 = clock()
            encode(rec); t4 = clock()
            for k, dt in zip(got, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                got[k] += dt
        got["  score (in finish)"] = scored[0]
        passes.append({k: 1000 * v / len(specs) for k, v in got.items()})
out = {k: statistics.median(p[k] for p in passes[1:]) for k in passes[0]}
out["a run, in all"] = statistics.median(
    sum(v for k, v in p.items() if not k.startswith(" ")) for p in passes[1:])
print(json.dumps({"layout": LAYOUT, "runs": len(specs), "ms": out}))
'''


def measure(tree: str, cases: str, variants: int, repeats: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(tree), "PYTHONHASHSEED": "0"}
    # from /: python -c puts the cwd first on the path, and no checkout is there
    res = subprocess.run([sys.executable, "-c", _CHILD, cases, str(variants), str(repeats)],
                         env=env, capture_output=True, text=True, check=True, cwd="/")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--cases", default=None, help="the case folder every tree runs (default: the "
                    "first tree's cases/)")
    ap.add_argument("--variants", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    o = ap.parse_args()
    cases = os.path.abspath(o.cases or str(Path(o.trees[0]) / "cases"))
    got = {t: measure(t, cases, o.variants, o.repeats) for t in o.trees}
    first = got[o.trees[0]]
    print(f"cases {cases}, {first['runs']} runs a pass, medians of {o.repeats} passes, "
          "ms of CPU a run on one core")
    print(f"{'stage':<22}" + "".join(f"{Path(t).name[-14:]:>16}" for t in o.trees))
    for k in first["ms"]:
        print(f"{k:<22}" + "".join(f"{got[t]['ms'][k]:>16.3f}" for t in o.trees))
    print(json.dumps({t: got[t] for t in o.trees}))


if __name__ == "__main__":
    main()

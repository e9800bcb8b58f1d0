"""Where a scripted run's time goes, stage by stage, on one core (issue O, item 9).

    python bench/bench_stages.py [--variants 30] [--repeats 3]

In this process: the run command's default arms (guardrail, control, hardened) and agent over
every case with ``--variants`` generated variants each, run as the runner runs them
(``Bench.start``, ``Bench.act``, ``Bench.finish``, the record's line), each stage timed with
``time.process_time`` around it; the staged worlds (one per case and arm) are built before the
timed pass, so the figures are per run at scale. Inside ``finish`` the scoring, the wire's reading
and each detector are timed (wrapped in place, once, for this process).
The collector's pauses are timed too (``gc.callbacks``), with the process frozen and its young
generation's threshold set as a run command's are (util/heap.py; ``--young N``: another threshold).
Medians over ``--repeats`` passes, in ms of CPU a run; the wall figure of the issue is about half
the sum (two workers on two cores) plus the parent's share.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections import Counter, defaultdict
from typing import Any, Callable

from guardbench.broker.policy import load_policy
from guardbench.cases.load import default_cases_dir
from guardbench.execution import runner
from guardbench.execution.bench import build_bench, load_selected
from guardbench.execution.options import DEFAULTS
from guardbench.execution.runner import plan
from guardbench.records.runfolder import encode
from guardbench.scoring import detectors
from guardbench.util.heap import YOUNG, long_lived

AGENTS = tuple(DEFAULTS["agents"])      # the run command's: credulous
ARMS = ("guardrail", "control", "hardened")


def _timed(spent: defaultdict[str, float], label: str, fn: Callable) -> Callable:
    """``fn``, its CPU time added to ``spent[label]`` (the current pass's figures)."""
    def timed(*a: Any, **k: Any) -> Any:
        t0 = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            spent[label] += time.process_time() - t0
    return timed


def _wrap(spent: defaultdict[str, float]) -> None:
    """Wrap the scoring, the wire's reading and each registered detector (once), and time the
    collector's pauses (gc.callbacks)."""
    runner.score = _timed(spent, "  scoring (score: detectors, intent, caps)", runner.score)
    detectors.read_wire = _timed(spent, "    read_wire (once a run)", detectors.read_wire)
    for name, fn in list(detectors.DETECTORS.items()):
        detectors.DETECTORS[name] = _timed(spent, f"    detector {name}", fn)
    began = [0.0]

    def pause(phase: str, info: dict) -> None:
        if phase == "start":
            began[0] = time.process_time()
        else:
            spent["  garbage collection (in all stages)"] += time.process_time() - began[0]
            spent["  garbage collections (count)"] += 1
    gc.callbacks.append(pause)


def one_pass(variants: int, got: defaultdict[str, float]) -> tuple[int, dict[str, int]]:
    """One timed pass; (runs, runs per arm)."""
    policy = load_policy(None)
    cases = load_selected(default_cases_dir(), (), (), variants)
    bench = build_bench(policy, cases, {a: a for a in ARMS if a != "control"}, "none")
    specs = plan(cases, list(ARMS), list(AGENTS))
    for first in {(s.case, s.arm): s for s in specs}.values():    # stage every world first
        bench.start(first).close()
    got.clear()                                 # what the staging spent is not counted
    clock = time.process_time
    for s in specs:
        t0 = clock()
        started = bench.start(s)
        t1 = clock()
        transcript = bench.act(started)
        t2 = clock()
        rec = bench.finish(started, transcript, True, s.attempt)
        t3 = clock()
        encode(rec)
        t4 = clock()
        got["start (world copy, arm enters)"] += t1 - t0
        got["agent and arm (broker, stand-in)"] += t2 - t1
        got["finish (scoring, record)"] += t3 - t2
        got["record line (encode)"] += t4 - t3
        got[f"@{s.arm}: start"] += t1 - t0
        got[f"@{s.arm}: agent and arm"] += t2 - t1
    return len(specs), Counter(s.arm for s in specs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--young", type=int, default=None,
                    help="the young generation's threshold (default: the run command's, "
                         "util/heap.YOUNG)")
    o = ap.parse_args()
    per: dict[str, list[float]] = defaultdict(list)
    spent: defaultdict[str, float] = defaultdict(float)
    _wrap(spent)
    n = 0
    with long_lived():                  # frozen and collected as a run command's process is
        if o.young is not None:
            gc.set_threshold(o.young, *gc.get_threshold()[1:])
        for _ in range(o.repeats):
            n, arms = one_pass(o.variants, spent)
            for k, v in spent.items():
                if k.endswith("(count)"):
                    per[k].append(v)
                elif k.startswith("@"):             # per run of that arm
                    per[k].append(v / arms[k[1:].split(":")[0]] * 1000)
                else:
                    per[k].append(v / n * 1000)
    total = sum(statistics.median(per[k]) for k in per if not k.startswith((" ", "@")))
    print(f"{n} runs a pass, {o.repeats} passes, young generation every {o.young or YOUNG} "
          "objects;\nmedians, ms of CPU a run on one core (after an arm's name: a run of that arm)")
    for k in sorted(per, key=lambda k: (k.startswith("@"), k.startswith(" "),
                                        -statistics.median(per[k]))):
        m = statistics.median(per[k])
        if k.endswith("(count)"):
            print(f"{k:<44} {m:7.0f} a pass")
        elif k.startswith("@"):
            print(f"{'  ' + k[1:]:<44} {m:7.3f} ms")
        else:
            print(f"{k:<44} {m:7.3f} ms  {100 * m / total:5.1f}%")
    print(f"{'a run, in all':<44} {total:7.3f} ms")


if __name__ == "__main__":
    main()

"""Where a scripted run's time goes, stage by stage, on one core (issue O, item 9).

    python bench/bench_stages.py [--variants 30] [--repeats 3]

In this process: the run command's default arms (guardrail, control, hardened) and agent over every case with
``--variants`` generated variants each, run as the runner runs them (``Bench.start``, ``Bench.act``,
``Bench.finish``, the record's line), each stage timed with ``time.process_time`` around it; the
staged worlds (one per case and arm) are built before the timed pass, so the figures are per run at
scale. Inside ``finish`` the detectors are timed one by one (wrapped in place for this process).
Medians over ``--repeats`` passes, in ms of CPU a run; the wall figure of the issue is about half
the sum (two workers on two cores) plus the parent's share.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from typing import Any, Callable

from guardbench.broker.policy import load_policy
from guardbench.cases.load import default_cases_dir
from guardbench.execution import runner
from guardbench.execution.bench import build_bench, load_selected
from guardbench.execution.options import DEFAULTS
from guardbench.execution.runner import plan
from guardbench.records.runfolder import encode
from guardbench.scoring import detectors

AGENTS = tuple(DEFAULTS["agents"])      # the run command's: credulous
ARMS = ("guardrail", "control", "hardened")


def _timed(spent: dict[str, float], label: str, fn: Callable) -> Callable:
    def timed(*a: Any, **k: Any) -> Any:
        t0 = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            spent[label] += time.process_time() - t0
    return timed


def _timed_detectors(spent: dict[str, float]) -> None:
    """Wrap each registered detector, the wire's reading and the whole scoring so that their CPU
    time adds up in ``spent``."""
    runner.score = _timed(spent, "  scoring (score: detectors, intent, caps)", runner.score)
    detectors.read_wire = _timed(spent, "    read_wire (once a run)", detectors.read_wire)
    for name, fn in list(detectors.DETECTORS.items()):
        detectors.DETECTORS[name] = _timed(spent, f"    detector {name}", fn)


def one_pass(variants: int) -> tuple[int, dict[str, float]]:
    policy = load_policy(None)
    cases = load_selected(default_cases_dir(), (), (), variants)
    bench = build_bench(policy, cases, {a: a for a in ARMS if a != "control"}, "none")
    specs = plan(cases, list(ARMS), list(AGENTS))
    for first in {(s.case, s.arm): s for s in specs}.values():    # stage every world first
        bench.start(first).close()
    spent: dict[str, float] = defaultdict(float)
    _timed_detectors(spent)
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
        spent["start (world copy, arm enters)"] += t1 - t0
        spent["agent and arm (broker, stand-in)"] += t2 - t1
        spent[f"  agent and arm, {s.arm} runs"] += t2 - t1
        spent[f"  start, {s.arm} runs"] += t1 - t0
        spent["finish (scoring, record)"] += t3 - t2
        spent["record line (encode)"] += t4 - t3
    return len(specs), dict(spent)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    o = ap.parse_args()
    per: dict[str, list[float]] = defaultdict(list)
    n = 0
    for _ in range(o.repeats):
        n, spent = one_pass(o.variants)
        for k, v in spent.items():
            per[k].append(v / n * 1000)
    total = sum(statistics.median(per[k]) for k in per if not k.startswith("  "))
    print(f"{n} runs a pass, {o.repeats} passes, medians, ms of CPU a run (one core)")
    for k in sorted(per, key=lambda k: (k.startswith("  "), -statistics.median(per[k]))):
        m = statistics.median(per[k])
        print(f"{k:<40} {m:7.3f} ms  {100 * m / total:5.1f}%")
    print(f"{'a run, in all':<40} {total:7.3f} ms")


if __name__ == "__main__":
    main()

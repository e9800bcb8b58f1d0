"""Coverage of the clustered rate interval and size/power of the case-level sign-flip test (fixed seed).

    python bench/sim_coverage.py                    # the committed setting (about 70 s of CPU on one core)
    python bench/sim_coverage.py --quick --out DIR  # the small setting tests/stats/test_sim_coverage.py runs

Data: ``cases`` cases of ``runs`` runs each (5: the corpus's paraphrases); each case has its own
success probability drawn from a beta distribution with mean ``rate`` and intra-class correlation
``icc`` (Beta(rate (1-icc)/icc, (1-rate)(1-icc)/icc); icc 0: every case has the rate), and its runs
are Bernoulli draws from it (the beta-binomial model of clustered binary data).

* Coverage: the share of simulated corpora whose 95% interval from ``clustered.rate`` (the
  package's interval) contains the true rate, beside the interval the package used before
  (plain Wilson on Rao-Scott's effective sample, normal quantile) and the one-sided 95% upper
  bound ``clustered.upper_bound``. Monte Carlo standard error at 0.95 with 4000 corpora: 0.0034.
* Sign-flip test: the same cases run in two arms, ``runs`` pairs per case; arm A's runs succeed
  with the case's probability p_i, arm B's with p_i (1 - effect). effect 0 is the null (the
  rejection rate is the test's size), effect > 0 an arm that blocks that share of the attacks
  (power). Two-sided, level 0.05, for the exact p and Lancaster's mid-p (``clustered.sign_flip``).

numpy draws the data (bench/ only; the package stays pure Python); every interval and p-value is
the package's own function. Writes SUMMARY.md and summary.json into --out (default
bench/results/sim_coverage/).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardbench.stats import clustered as C  # noqa: E402
from guardbench.stats.rates import wilson_z  # noqa: E402

Z95 = 1.959963984540054
FULL: dict[str, Any] = {"cases": (12, 60), "iccs": (0.0, 0.1, 0.3, 0.6),
                        "rates": (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 0.95), "reps": 4000,
                        "test_rates": (0.3, 0.6), "effects": (0.0, 0.25, 0.5), "test_reps": 2000, "null_reps": 4000}
# the settings where the former interval was worst, and one null and one alternative per case count
QUICK: dict[str, Any] = {"cases": (12, 60), "iccs": (0.6,), "rates": (0.02, 0.1, 0.2, 0.8), "reps": 600,
                         "test_rates": (0.3,), "effects": (0.0, 0.5), "test_reps": 400, "null_reps": 600}


def case_probs(rng: np.random.Generator, rate: float, icc: float, shape: tuple[int, int]) -> np.ndarray:
    if icc == 0.0:
        return np.full(shape, rate)
    a, b = rate * (1 - icc) / icc, (1 - rate) * (1 - icc) / icc
    return rng.beta(a, b, size=shape)


def former_interval(counts: dict) -> tuple[float, float]:
    """The interval before bench/sim_coverage.py: Wilson (normal quantile) on Rao-Scott's effective sample."""
    k, n = sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())
    d = C.design_effect(counts)
    return wilson_z(k, n, Z95) if d == 1.0 else wilson_z(k / d, n / d, Z95)


def coverage(cases: int, icc: float, rate: float, reps: int, runs: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    ks = rng.binomial(runs, case_probs(rng, rate, icc, (reps, cases)))
    cache: dict[tuple, tuple[bool, bool, bool]] = {}
    hits = np.zeros(3)
    for row in ks:
        key = tuple(sorted(int(x) for x in row))     # the interval depends on the multiset of case counts
        if key not in cache:
            counts = {i: [k, runs] for i, k in enumerate(key)}
            r = C.rate(counts)
            lo, hi = former_interval(counts)
            cache[key] = (r.lo <= rate <= r.hi, lo <= rate <= hi, rate <= C.upper_bound(counts))
        hits += cache[key]
    new, old, upper = (hits / reps).tolist()
    return {"cases": cases, "icc": icc, "rate": rate, "reps": reps, "coverage": new, "former": old, "upper": upper}


def sign_flip(cases: int, icc: float, rate: float, effect: float, reps: int, runs: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    p = case_probs(rng, rate, icc, (reps, cases))
    d = rng.binomial(runs, p) - rng.binomial(runs, p * (1 - effect))
    cache: dict[tuple, tuple[bool, bool]] = {}
    rej = np.zeros(2)
    for row in d:
        key = tuple(sorted(int(x) for x in row))
        if key not in cache:
            pv, midp, _ = C.sign_flip(list(key))
            cache[key] = (pv <= 0.05, midp <= 0.05)
        rej += cache[key]
    exact, mid = (rej / reps).tolist()
    return {"cases": cases, "icc": icc, "rate": rate, "effect": effect, "reps": reps, "exact": exact, "midp": mid}


def simulate(setting: dict, runs: int = 5, seed: int = 20250) -> dict:
    out: dict[str, Any] = {"setting": {k: list(v) if isinstance(v, tuple) else v for k, v in setting.items()},
                           "runs_per_case": runs, "seed": seed, "coverage": [], "sign_flip": []}
    i = 0
    for cases in setting["cases"]:
        for icc in setting["iccs"]:
            for rate in setting["rates"]:
                i += 1
                out["coverage"].append(coverage(cases, icc, rate, setting["reps"], runs, seed * 1000 + i))
    for cases in setting["cases"]:
        for icc in setting["iccs"] if 0.0 in setting["iccs"] else (0.0,) + tuple(setting["iccs"]):
            for rate in setting["test_rates"]:
                for effect in setting["effects"]:
                    i += 1
                    reps = setting["null_reps"] if effect == 0.0 else setting["test_reps"]
                    out["sign_flip"].append(sign_flip(cases, icc, rate, effect, reps, runs, seed * 1000 + i))
    cov = out["coverage"]
    out["worst"] = {"coverage": min(c["coverage"] for c in cov), "former": min(c["former"] for c in cov),
                    "upper": min(c["upper"] for c in cov)}
    return out


def markdown(res: dict, wall: float) -> str:
    s = res["setting"]
    lines = [f"# Coverage and test size, clustered by case (bench/sim_coverage.py, seed {res['seed']})", "",
             f"{res['runs_per_case']} runs per case; case probabilities beta with the given mean and intra-class "
             f"correlation (ICC); {s['reps']} simulated corpora per coverage cell (Monte Carlo SE at 0.95: "
             f"{(0.95 * 0.05 / s['reps']) ** 0.5:.4f}). CPU {res['cpu_s']:.0f} s (wall {wall:.0f} s).", "",
             "## Coverage of the 95% rate interval (nominal 0.95)", "",
             "Package: Wilson with continuity correction on Rao-Scott's effective sample at t on cases-1 df "
             "(`clustered.rate`); former: plain Wilson on the effective sample at the normal quantile; upper: "
             "one-sided 95% Clopper-Pearson upper bound on the effective sample (`clustered.upper_bound`).", "",
             "| cases | ICC | " + " | ".join(f"{r:g}" for r in s["rates"]) + " |",
             "|---|---|" + "---|" * len(s["rates"])]
    for cases in s["cases"]:
        for icc in s["iccs"]:
            cells = [c for c in res["coverage"] if c["cases"] == cases and c["icc"] == icc]
            lines.append(f"| {cases} | {icc:g} | " + " | ".join(
                f"{c['coverage']:.3f} ({c['former']:.3f}; {c['upper']:.3f})" for c in cells) + " |")
    w = res["worst"]
    lines += ["", "Each cell: package (former; upper). Worst cell: package "
              f"{w['coverage']:.3f}, former {w['former']:.3f}, upper bound {w['upper']:.3f}.", "",
              "## Case-level sign-flip test: rejection rate at 0.05 (exact p / mid-p)", "",
              "effect 0: size under the null (nominal 0.05); effect e: arm B succeeds with p_i (1 - e) where A "
              "succeeds with p_i (power).", "",
              "| cases | ICC | rate | " + " | ".join(f"effect {e:g}" for e in s["effects"]) + " |",
              "|---|---|---|" + "---|" * len(s["effects"])]
    keys = sorted({(c["cases"], c["icc"], c["rate"]) for c in res["sign_flip"]})
    for cases, icc, rate in keys:
        cells = [c for c in res["sign_flip"] if (c["cases"], c["icc"], c["rate"]) == (cases, icc, rate)]
        lines.append(f"| {cases} | {icc:g} | {rate:g} | " + " | ".join(
            f"{c['exact']:.3f} / {c['midp']:.3f}" for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the small setting the test runs")
    ap.add_argument("--seed", type=int, default=20250)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sim_coverage")
    a = ap.parse_args(argv)
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(QUICK if a.quick else FULL, seed=a.seed)
    wall = time.perf_counter() - t0
    res["wall_s"], res["cpu_s"] = round(wall, 1), round(time.process_time() - c0, 1)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "summary.json").write_text(json.dumps(res, indent=1) + "\n")
    (a.out / "SUMMARY.md").write_text(markdown(res, wall))
    w = res["worst"]
    print(f"worst coverage: package {w['coverage']:.3f}, former {w['former']:.3f}, upper bound {w['upper']:.3f}; "
          f"{res['cpu_s']:.0f} s CPU, {wall:.0f} s wall -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark the LLM runner against a stand-in endpoint that answers each completion in 100 ms.

    python bench/bench_llm.py [--reps 3] [--concurrency 32] [--delay 0.1]

Sweep: 3 models x 30 cases x 2 repeats x 3 arms = 540 runs, variant 0 of each case, through
`guardbench run --agent llm --api-base ...` (the openai client). The endpoint runs in another
process (as a real model server would), so its CPU does not compete with the runner's.

Claims checked (medians over --reps repetitions, each in fresh folders):
1. a fresh sweep at --concurrency 32 finishes within 1.5x of the ideal, where the ideal is the
   total model time (completions x delay) divided by the concurrency;
2. re-running the finished sweep makes zero model calls and takes <= 3 s, both resuming its
   folder (every run already recorded) and into a new folder (every reply from the cache),
   in process and as a new `guardbench run` process (start-up and imports included).
One-time imports (click, openai) are paid before timing; they are not per-sweep costs.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "llm"))

MODELS = ("bench-model-a", "bench-model-b", "bench-model-c")


def stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/_stats", timeout=5) as resp:
        return json.loads(resp.read())


def sweep(url: str, out: Path, cache: Path, cases: list[str], concurrency: int) -> tuple[float, dict, str]:
    from click.testing import CliRunner

    from guardbench.cli.main import cli
    args = ["run", "--agent", "llm", "--api-base", url, "--variants", "1", "--repeats", "2",
            "--concurrency", str(concurrency), "--out", str(out), "--cache-dir", str(cache), "--quiet"]
    for m in MODELS:
        args += ["--model", m]
    for c in cases:
        args += ["--case", c]
    before = stats(url)
    t0, c0 = time.perf_counter(), time.process_time()
    res = CliRunner().invoke(cli, args)
    wall = time.perf_counter() - t0
    print(f"    (runner CPU {time.process_time() - c0:.2f} s of {wall:.2f} s wall)", flush=True)
    if res.exit_code != 0:
        raise SystemExit(f"guardbench run failed: {res.output}\n{res.exception!r}")
    after = stats(url)
    delta = {k: after[k] - before[k] for k in ("chat_calls", "http_calls")}
    delta["max_in_flight"] = after["max_in_flight"]
    return wall, delta, res.output


def sweep_process(url: str, out: Path, cache: Path, cases: list[str], concurrency: int) -> tuple[float, dict]:
    """The same sweep as a fresh `guardbench run` process (interpreter start-up and imports included)."""
    import subprocess
    args = [sys.executable, "-m", "guardbench.cli.main", "run", "--agent", "llm", "--api-base", url, "--variants",
            "1", "--repeats", "2", "--concurrency", str(concurrency), "--out", str(out), "--cache-dir", str(cache),
            "--quiet"]
    for m in MODELS:
        args += ["--model", m]
    for c in cases:
        args += ["--case", c]
    before = stats(url)
    t0 = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = stats(url)
    return wall, {k: after[k] - before[k] for k in ("chat_calls", "http_calls")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--delay", type=float, default=0.1)
    ap.add_argument("--workdir", default=str(ROOT / "results"),
                    help="Where the run folders and caches go, in a tmp-bench-llm-* folder removed afterwards "
                         "(default: results/, gitignored).")
    a = ap.parse_args()

    import openai  # noqa: F401 - one-time import, outside the timings

    from guardbench.cases.load import load_cases
    cases = [c.id for c in load_cases()][:30]
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    from fakeserver import serve_in_process
    proc = ctx.Process(target=serve_in_process, args=(child, a.delay), daemon=True)
    proc.start()
    url = parent.recv()
    fresh, ratio, resume, cached, process, calls = [], [], [], [], [], []
    Path(a.workdir).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="tmp-bench-llm-", dir=a.workdir))
    try:
        for rep in range(a.reps):
            d = base / f"rep{rep}"
            wall, delta, _ = sweep(url, d / "run", d / "cache", cases, a.concurrency)
            recs = [json.loads(x) for x in (d / "run" / "runs.jsonl").read_text().splitlines()]
            assert len(recs) == 540, len(recs)
            completions = sum(r["llm"]["usage"]["model_calls"] for r in recs)
            assert completions == delta["chat_calls"], (completions, delta)
            ideal = completions * a.delay / a.concurrency
            fresh.append(wall)
            ratio.append(wall / ideal)
            print(f"rep {rep}: fresh sweep {wall:.2f} s, {completions} completions, ideal {ideal:.2f} s, "
                  f"ratio {wall / ideal:.2f}, max in flight {delta['max_in_flight']}, "
                  f"lost {sum(r['status'] == 'lost' for r in recs)}", flush=True)
            wall_r, delta_r, out = sweep(url, d / "run", d / "cache", cases, a.concurrency)
            assert "0 runs to do (540 already recorded)" in out, out
            wall_c, delta_c, _ = sweep(url, d / "run-cached", d / "cache", cases, a.concurrency)
            recs_c = [json.loads(x) for x in (d / "run-cached" / "runs.jsonl").read_text().splitlines()]
            assert len(recs_c) == 540 and all(r["llm"]["usage"]["api_calls"] == 0 for r in recs_c)
            wall_p, delta_p = sweep_process(url, d / "run-process", d / "cache", cases, a.concurrency)
            resume.append(wall_r)
            cached.append(wall_c)
            process.append(wall_p)
            calls.append(delta_r["http_calls"] + delta_c["http_calls"] + delta_p["http_calls"])
            print(f"rep {rep}: re-run (resume) {wall_r:.2f} s, re-run (new folder, from cache) {wall_c:.2f} s, "
                  f"as a new process {wall_p:.2f} s, HTTP calls {delta_r['http_calls']} + {delta_c['http_calls']} "
                  f"+ {delta_p['http_calls']}", flush=True)
    finally:
        parent.close()
        proc.join(timeout=5)
        shutil.rmtree(base, ignore_errors=True)
    med = statistics.median
    print(f"\nmedians over {a.reps} repetitions (540 runs, concurrency {a.concurrency}, {a.delay * 1000:.0f} ms "
          f"per completion):")
    print(f"  fresh sweep           {med(fresh):6.2f} s   ratio to ideal {med(ratio):.2f}  (claim <= 1.5: "
          f"{'ok' if med(ratio) <= 1.5 else 'FAILED'})")
    print(f"  re-run, resume        {med(resume):6.2f} s   (claim <= 3 s: {'ok' if med(resume) <= 3 else 'FAILED'})")
    print(f"  re-run, from cache    {med(cached):6.2f} s   (claim <= 3 s: {'ok' if med(cached) <= 3 else 'FAILED'})")
    print(f"  re-run, from cache, as a new `guardbench run` process {med(process):6.2f} s   (start-up and "
          f"imports included; claim <= 3 s: {'ok' if med(process) <= 3 else 'FAILED'})")
    print(f"  model calls on re-runs {max(calls)}  (claim 0: {'ok' if max(calls) == 0 else 'FAILED'})")


if __name__ == "__main__":
    main()

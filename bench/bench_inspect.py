"""Wall time per run: `guardbench run --agent llm` and Inspect's `eval` of guardbench/cases, same runs.

    python bench/bench_inspect.py [--reps 3] [--cases 10]

Both drive the same stand-in endpoint (tests/llm/fakeserver.py, in another process, answering at
once), so the figures are the harness's own cost per run: guardbench's openai client and loop vs
Inspect's model API, task set-up and log writing around the same loop. N benign and attack cases,
variant 0, three arms, one repeat; medians over --reps repetitions, each into fresh folders and
without any response cache. One-time imports are paid before timing. Prints the load average.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "llm"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cases", type=int, default=10)
    a = ap.parse_args()
    from click.testing import CliRunner
    from fakeserver import serve_in_process
    from inspect_ai import eval as inspect_eval

    from guardbench.cases.load import load_cases
    from guardbench.cli.main import cli
    from guardbench.inspect_eval.task import cases as inspect_task
    ids = [c.id for c in load_cases()][: a.cases]
    arms = "guardrail,control,hardened"
    parent, child = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=serve_in_process, args=(child,), daemon=True)
    proc.start()
    url = parent.recv()
    gb, ins = [], []
    try:
        for _ in range(a.reps):
            with tempfile.TemporaryDirectory() as tmp:
                args = ["run", "--agent", "llm", "--model", "bench", "--api-base", url, "--variants", "1",
                        "--arms", arms, "--no-cache", "--quiet", "--out", f"{tmp}/run"]
                for c in ids:
                    args += ["--case", c]
                t0 = time.perf_counter()
                r = CliRunner().invoke(cli, args)
                gb.append(time.perf_counter() - t0)
                assert r.exit_code == 0, r.output
                task = inspect_task(cases=",".join(ids), arms=arms, model_name="bench")
                t0 = time.perf_counter()
                (log,) = inspect_eval(task, model="openai-api/standin/bench", model_base_url=url,
                                      model_args={"api_key": "x"}, log_dir=f"{tmp}/logs", display="none")
                ins.append(time.perf_counter() - t0)
                assert log.status == "success", log.error
    finally:
        parent.close()
        proc.join(5)
    n = len(ids) * 3
    print(f"{n} runs ({len(ids)} cases x 3 arms, variant 0), stand-in endpoint answering at once, "
          f"{a.reps} repetitions, load average {os.getloadavg()[0]:.2f}")
    print(f"guardbench run --agent llm : median {statistics.median(gb):.2f} s "
          f"({statistics.median(gb) / n * 1000:.0f} ms per run)")
    print(f"inspect eval guardbench/cases: median {statistics.median(ins):.2f} s "
          f"({statistics.median(ins) / n * 1000:.0f} ms per run)")


if __name__ == "__main__":
    main()

"""guardbench's own cost per model call in a real local-model run, from the run's records.

    python bench/bench_local_overhead.py [RUN_FOLDER ...]   (default: results/local-qwen2.5-coder-1.5b)

For every fresh model call the record keeps the client's latency (``usage.latency_s``: from sending the
request to a parsed reply, through the real openai client) and the server's own timings
(``usage.server_s``: llama.cpp's prompt_ms + predicted_ms). Per run this prints, as medians over the runs:

- overhead per model call: (latency - server time) / calls: HTTP, JSON and the client, plus the server's
  time outside its timings (tokenising, sampling setup, the template);
- harness time per run: duration - latency: the arm's setup, the tools, the broker, scoring and writing,
  i.e. what guardbench itself adds to a run besides waiting for the model;
- wall time per run, model calls per run, tokens per run (prompt + completion).

Figures depend on the machine's load: the load average is printed with them (the run folder's README says
what it was during the run). Replayed (cached) calls are left out: they made no call.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rows(folder: Path) -> list[dict]:
    out = []
    for line in (folder / "runs.jsonl").read_text().splitlines():
        r = json.loads(line)
        u = (r.get("llm") or {}).get("usage") or r.get("usage") or {}   # record format 2, or 1
        calls = int(u.get("server_timed_calls") or 0)
        if not calls or r.get("duration_s") is None:
            continue
        out.append({"arm": r["arm"], "calls": calls, "latency": float(u["latency_s"]), "server": float(u["server_s"]),
                    "duration": float(r["duration_s"]), "tokens": int(u.get("total_tokens") or 0)})
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def report(folder: Path) -> dict:
    rs = rows(folder)
    fig = {
        "runs": len(rs),
        "overhead_per_call_ms": med([1000 * (r["latency"] - r["server"]) / r["calls"] for r in rs]),
        "harness_per_run_ms": med([1000 * (r["duration"] - r["latency"]) for r in rs]),
        "harness_per_call_ms": med([1000 * (r["duration"] - r["latency"]) / r["calls"] for r in rs]),
        "server_share_of_wall": med([r["server"] / r["duration"] for r in rs if r["duration"]]),
        "wall_per_run_s": med([r["duration"] for r in rs]),
        "calls_per_run": med([r["calls"] for r in rs]),
        "tokens_per_run": med([r["tokens"] for r in rs]),
        "load_now": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    return fig


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv] or [ROOT / "results" / "local-qwen2.5-coder-1.5b"]
    for f in folders:
        if not (f / "runs.jsonl").exists():
            print(f"error: {f}: no runs.jsonl", file=sys.stderr)
            return 2
        fig = report(f)
        print(f"{f.name}: {fig['runs']} runs with fresh model calls (medians over runs)")
        print(f"  overhead per model call (client latency - server timings): {fig['overhead_per_call_ms']:.1f} ms")
        print(f"  harness time per run (duration - model latency): {fig['harness_per_run_ms']:.1f} ms "
              f"({fig['harness_per_call_ms']:.1f} ms per model call)")
        print(f"  server time / wall time per run: {100 * fig['server_share_of_wall']:.1f}%")
        print(f"  wall per run {fig['wall_per_run_s']:.1f} s; model calls per run {fig['calls_per_run']:g}; "
              f"tokens per run {fig['tokens_per_run']:g}")
        print(f"  load average now: {fig['load_now']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

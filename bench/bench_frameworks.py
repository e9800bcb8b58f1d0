"""Each agent framework's own overhead: wall time per run of its example app (examples/FRAMEWORK/) with the
scripted model behind the gateway, so no model time is in it: the app's start (interpreter, framework
imports), its tool loop, PayPal's toolkit or MCP server, guardbench's proxy and stand-in. Medians.

Two shapes per framework: PayPal's Python toolkit (toolkit.yaml) and PayPal's MCP server through the
framework's MCP client (mcp.yaml), on one honest case (usd-benign-charge-pro: a token, one order) run
``--repeats`` times each, the frameworks interleaved repeat by repeat so a load change hits them alike.
Or read every run of a finished matrix (scripts/frameworks_matrix.sh) with ``--from DIR/runs``.

    bash scripts/frameworks.sh && (cd examples/paypal-mcp && npm ci)
    PYTHONPATH=. python bench/bench_frameworks.py [--repeats 5] [--out bench/results/frameworks.json]
    PYTHONPATH=. python bench/bench_frameworks.py --from /tmp/fwm/runs
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = ("openai-agents", "langgraph", "pydantic-ai", "llamaindex")
CASE = "usd-benign-charge-pro"


def one(spec: Path, out: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "guardbench", "run", "--cases", str(ROOT / "cases" / "usd"),
           "--policy", str(ROOT / "guardbench" / "policies" / "usd.yaml"), "--arms", f"app:{spec}",
           "--agent", "credulous", "--variants", "1", "--case", CASE, "--out", str(out), "--quiet"]
    subprocess.run(cmd, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()]


def summary(walls: dict[str, list[float]]) -> dict[str, dict]:
    return {arm: {"runs": len(w), "median_wall_s": round(statistics.median(w), 2), "min_s": round(min(w), 2),
                  "max_s": round(max(w), 2)} for arm, w in sorted(walls.items()) if w}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--from", dest="source", help="a matrix run folder to read instead of running")
    ap.add_argument("--out", help="write the figures as JSON here")
    a = ap.parse_args()
    walls: dict[str, list[float]] = defaultdict(list)
    if a.source:
        for line in (Path(a.source) / "runs.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r["status"] not in ("no_tool_path", "lost"):
                walls[r["arm"]].append(float(r["duration_s"]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(a.repeats):
                for fw in FRAMEWORKS:
                    for shape in ("toolkit", "mcp"):
                        for r in one(ROOT / "examples" / fw / f"{shape}.yaml", Path(tmp) / f"{fw}-{shape}-{i}"):
                            if r["status"] == "answered":
                                walls[r["arm"]].append(float(r["duration_s"]))
    figures = {"what": "wall seconds per run of each framework app with the scripted model (median)",
               "load_average": os.getloadavg()[0], "arms": summary(walls)}
    text = json.dumps(figures, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")


if __name__ == "__main__":
    main()

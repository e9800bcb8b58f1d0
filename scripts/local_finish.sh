#!/usr/bin/env bash
# After a local-model sweep (scripts/local_run.sh): the tables again from the records alone with the code at
# hand (a sweep that ran for an hour keeps the tables code it started with), guardbench's overhead
# (bench/bench_local_overhead.py), and what the run folder's README must say beyond local_model.sh's lines:
# the subset, if the run is one, and how many runs were replayed from the response cache. Idempotent.
#
#   bash scripts/local_finish.sh RUN_FOLDER [CASE_OPTIONS_OF_A_SUBSET]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="$1"
SUBSET="${2:-}"
GB="${GB:-guardbench}"
$GB table "$OUT" --write "$OUT" > /dev/null 2>&1
python bench/bench_local_overhead.py "$OUT" > "$OUT/overhead.txt"
python - "$OUT" "<!-- scripts/local_finish.sh -->" "$SUBSET" <<'PY'
import json
import sys
from pathlib import Path

out, mark, subset = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
readme = out / "README.md"
text = readme.read_text(encoding="utf-8").split(mark)[0].rstrip("\n")
runs = [json.loads(x) for x in (out / "runs.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def replayed(r: dict) -> bool:
    u = (r.get("llm") or {}).get("usage") or r.get("usage") or {}   # record format 2 nests it; format 1 did not
    calls = int(u.get("model_calls") or 0)
    return calls > 0 and int(u.get("cache_hits") or 0) == calls


lines = ["", mark, ""]
if subset:
    lines += [f"Cases: a subset, `{subset}` (scripts/local_run.sh), not every case.", ""]
lines += [f"Replies: {sum(map(replayed, runs))} of the {len(runs)} runs were replayed whole from guardbench's "
          "response cache (.guardbench-cache/), filled by earlier sweeps with the same prompts; the cache key is "
          "the model, the endpoint, every message, the tool schema and the sampling settings, so a replay is the "
          "reply the model gave to exactly this request. A replay takes milliseconds: wall times (overhead.txt, "
          "Model usage) are over the fresh runs only."]
readme.write_text(text + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
PY

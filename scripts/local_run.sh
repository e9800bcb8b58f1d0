#!/usr/bin/env bash
# The committed local-model run, results/local-qwen2.5-coder-1.5b (called by `LOCAL=1 bash scripts/regenerate.sh`;
# runnable alone). Qwen2.5-Coder-1.5B-Instruct on llama.cpp through scripts/local_model.sh, guardrail, control and
# hardened, variant 0, constrained decoding, data inline, every case. THREADS (default 2), GB (guardbench),
# LOCAL_CASES: case options instead of every case (e.g. LOCAL_CASES="--family benign" for the capability figures).
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${GB:-guardbench}"
# Every case in the three arms is 246 runs: at the 41 s a fresh run of the 1.5B took on average on 2 cores (-t 2),
# about three hours; runs whose every request is already in the response cache (.guardbench-cache/) replay in
# milliseconds.
LOCAL_OUT=results/local-qwen2.5-coder-1.5b
rm -rf "$LOCAL_OUT"
LOCAL_ARGS=()
if [[ -n "${LOCAL_CASES:-}" ]]; then read -r -a LOCAL_ARGS <<< "$LOCAL_CASES"; fi
THREADS="${THREADS:-2}" GB="$GB" bash scripts/local_model.sh --out "$LOCAL_OUT" --model qwen2.5-coder-1.5b \
  --max-steps 5 --max-tokens 512 "${LOCAL_ARGS[@]}" --quiet
GB="$GB" bash scripts/local_finish.sh "$LOCAL_OUT" "${LOCAL_CASES:-}"

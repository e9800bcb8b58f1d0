#!/usr/bin/env bash
# The committed local-model runs (called by `LOCAL=1 bash scripts/regenerate.sh`; runnable alone), Qwen2.5-Coder-1.5B-
# Instruct on llama.cpp through scripts/local_model.sh, variant 0, data inline, --max-steps 5 --max-tokens 512:
#   results/local-qwen2.5-coder-1.5b              every case, guardrail, control and hardened, constrained decoding
#   results/local-qwen2.5-coder-1.5b-<protocol>   the benign cases, guardrail and control, with each protocol in
#                                                 LOCAL_PROTOCOLS (default "json-text"; also native+fallback,
#                                                 native; "" for none): what the grammar buys in honest tasks
# THREADS (default 2), GB (guardbench), LOCAL_CASES: case options for a subset of the first run
# (e.g. LOCAL_CASES="--family benign").
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${GB:-guardbench}"
# Every case in the three arms is 246 runs: the committed sweep took 4116 s for its 84 fresh runs (49 s each on
# 2 cores, -t 2; its README), so about three and a half hours with none in the response cache (.guardbench-cache/;
# a cached run replays in milliseconds). Each other protocol adds 44 runs: json-text took 2602 s (its README).
LOCAL_OUT=results/local-qwen2.5-coder-1.5b
rm -rf "$LOCAL_OUT"
LOCAL_ARGS=()
if [[ -n "${LOCAL_CASES:-}" ]]; then read -r -a LOCAL_ARGS <<< "$LOCAL_CASES"; fi
THREADS="${THREADS:-2}" GB="$GB" bash scripts/local_model.sh --out "$LOCAL_OUT" --model qwen2.5-coder-1.5b \
  --max-steps 5 --max-tokens 512 "${LOCAL_ARGS[@]}" --quiet
GB="$GB" bash scripts/local_finish.sh "$LOCAL_OUT" "${LOCAL_CASES:-}"
for protocol in ${LOCAL_PROTOCOLS-json-text}; do
  out="$LOCAL_OUT-${protocol//+/-}"
  rm -rf "$out"
  PROTOCOL="$protocol" ARMS=guardrail,control THREADS="${THREADS:-2}" GB="$GB" bash scripts/local_model.sh \
    --out "$out" --model qwen2.5-coder-1.5b --max-steps 5 --max-tokens 512 --family benign --quiet
  GB="$GB" bash scripts/local_finish.sh "$out" "--family benign"
done

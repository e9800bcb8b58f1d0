# Sourced by scripts/frameworks_matrix.sh and scripts/frameworks_local.sh, never run alone: the
# repository's root as the working folder, guardbench ($GB: on PATH, else .venv's) and python ($PY),
# and two functions:
#   frameworks_out SCRIPT "$@"   OUT from the caller's `--out DIR` (exit 2 with its usage otherwise);
#                                the caller then shifts its two words
#   frameworks_ready FW...       each framework's venv (scripts/frameworks.sh) and PayPal's MCP server
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GB="${GB:-guardbench}"
if ! command -v "$GB" >/dev/null 2>&1 && [[ -x .venv/bin/guardbench ]]; then
  GB=.venv/bin/guardbench
fi
PY="${PYTHON:-$( [[ -x .venv/bin/python ]] && echo .venv/bin/python || echo python3 )}"

frameworks_out() {
  local script=$1; shift
  if [[ "${1:-}" != "--out" || -z "${2:-}" ]]; then
    echo "error: usage: bash scripts/$script --out DIR [guardbench run options...]" >&2
    exit 2
  fi
  OUT=$2
}

frameworks_ready() {
  bash scripts/frameworks.sh "$@"
  [[ -d examples/paypal-mcp/node_modules/@paypal ]] \
    || (cd examples/paypal-mcp && npm ci --no-audit --no-fund --loglevel=error)
}

#!/usr/bin/env bash
# PayPal's own MCP server (@paypal/agent-toolkit 1.8.0, Node) as the baseline: undefended, and behind
# guardbench's gate and pdp (`guardbench mcp front`), on the USD cases its tools can express, in one
# run folder (its tables.md has them side by side; "External systems" shows the runs with no tool path).
#
#   bash scripts/mcp_baseline.sh --out DIR [guardbench run options...]
#
# Installs the server's pinned packages (npm ci, from examples/paypal-mcp/package-lock.json) and runs
# from the repository's root with relative paths, so the run folder holds no absolute path. Writes only
# DIR (the run command resumes a DIR that already holds this run; remove it first to start afresh).
# Needs node and npm, and guardbench with the [mcp] extra ($GB, default: guardbench); all checked before npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${GB:-guardbench}"
if ! command -v "$GB" >/dev/null 2>&1 && [[ -x .venv/bin/guardbench ]]; then
  GB=.venv/bin/guardbench             # the checkout's venv (scripts/bench.sh, scripts/test.sh make it)
fi
if [[ "${1:-}" != "--out" || -z "${2:-}" ]]; then
  echo "error: usage: bash scripts/mcp_baseline.sh --out DIR [guardbench run options...]" >&2
  exit 2
fi
# Every prerequisite is checked before npm ci, each failure one line: guardbench itself, its [mcp] extra
# (read by the Python that runs $GB: its script's #! line, else $PYTHON, else python3), node and npm.
GB_EXE="$(command -v "${GB%% *}" 2>/dev/null || true)"
if [[ -z "$GB_EXE" ]]; then
  echo "error: guardbench not found (\$GB=$GB): pip install -e '.[mcp]' or set GB" >&2
  exit 2
fi
PY="${PYTHON:-python3}"
FIRST="$(head -n1 "$GB_EXE" 2>/dev/null | tr -d '\0' || true)"
if [[ "$FIRST" == '#!'*python* ]]; then PY="${FIRST#\#!}"; fi
# shellcheck disable=SC2086  # a #! line may carry options after the interpreter
if ! GONE="$($PY -c 'from guardbench.util.extras import EXTRAS, missing
print(", ".join(missing(*EXTRAS["mcp"])))' 2>/dev/null)"; then
  echo "error: guardbench is not importable by $PY (the Python of $GB_EXE): pip install -e '.[mcp]'" >&2
  exit 2
fi
if [[ -n "$GONE" ]]; then
  echo "error: guardbench's [mcp] extra is missing ($GONE not installed for $PY): pip install 'guardbench[mcp]'" >&2
  exit 2
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "error: node and npm are needed to run PayPal's MCP server (examples/paypal-mcp)" >&2
  exit 2
fi
(cd examples/paypal-mcp && npm ci --no-audit --no-fund --loglevel=error)
EX=examples/paypal-mcp
exec $GB run --cases cases/usd --policy guardbench/policies/usd.yaml \
  --arms "mcp:$EX/paypal.yaml,mcp:$EX/gate.yaml,mcp:$EX/pdp.yaml" --quiet "$@"

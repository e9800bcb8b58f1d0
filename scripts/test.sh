#!/usr/bin/env bash
# Set up (a virtual environment in .venv with the test extra) and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# Inspect AI, for tests/inspect_eval (the [inspect] extra: about 2 minutes the first time on 2 busy cores;
# its dependencies install cleanly beside the test extra's). Without it those tests are skipped, saying why.
.venv/bin/python -m pip install --quiet -e '.[inspect]'
# byte-compile once: an editable install is never compiled by pip, and with PYTHONDONTWRITEBYTECODE set
# (as on CI machines) every test's subprocess would compile guardbench's sources again
.venv/bin/python -m compileall -q guardbench >/dev/null
# PayPal's own Python agent toolkit, driven by tests/paypal/test_paypal_toolkit.py. Without its declared
# dependencies: they (crewai-tools, langchain, ...) conflict with guardbench's and serve adapters the
# test does not use; the layer it drives needs requests, pydantic and httpx (in the test extra).
.venv/bin/python -m pip install --quiet --no-deps 'paypal-agent-toolkit==1.11.0'
# PayPal's own MCP server (tests/arms/test_paypal_mcp.py, the baseline): its pinned packages from package-lock.json
if command -v npm >/dev/null 2>&1; then
  (cd examples/paypal-mcp && npm ci --no-audit --no-fund --loglevel=error)
else
  echo "npm not found: the tests of PayPal's MCP server will be skipped" >&2
fi
# One agent framework's own venv (examples/openai-agents/.venv: the OpenAI Agents SDK and PayPal's Python
# toolkit, about 35 s the first time, a second after), for tests/gateway/test_framework_app.py: a real
# framework's traffic must reach the recording wire. The other frameworks' venvs are built only by
# scripts/frameworks_matrix.sh.
bash scripts/frameworks.sh openai-agents
export GUARDBENCH_SPECS_DIR="${GUARDBENCH_SPECS_DIR:-$(cd .. && pwd)/shared/specs/paypal}"
# lint and types first (configured in pyproject.toml); a branch that fails either does not reach the tests
.venv/bin/ruff check guardbench tests bench scripts
.venv/bin/mypy
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 "$@"

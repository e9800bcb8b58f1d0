#!/usr/bin/env bash
# Set up (a virtual environment in .venv with the test extra) and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# PayPal's own Python agent toolkit, driven by tests/paypal/test_paypal_toolkit.py. Without its declared
# dependencies: they (crewai-tools, langchain, ...) conflict with guardbench's and serve adapters the
# test does not use; the layer it drives needs requests, pydantic and httpx (in the test extra).
.venv/bin/python -m pip install --quiet --no-deps 'paypal-agent-toolkit==1.11.0'
export GUARDBENCH_SPECS_DIR="${GUARDBENCH_SPECS_DIR:-$(cd .. && pwd)/shared/specs/paypal}"
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 "$@"

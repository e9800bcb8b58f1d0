#!/usr/bin/env bash
# Set up (a virtual environment in .venv with the test extra) and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
export GUARDBENCH_SPECS_DIR="${GUARDBENCH_SPECS_DIR:-$(cd .. && pwd)/shared/specs/paypal}"
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 "$@"

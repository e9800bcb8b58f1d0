#!/usr/bin/env bash
# Set up (a virtual environment in .venv) and run the main job: the offline scripted benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
# byte-compile once: an editable install is never compiled by pip, and with PYTHONDONTWRITEBYTECODE set
# (as on CI machines) every process would compile guardbench's sources again (about 20% of a 1-run process)
.venv/bin/python -m compileall -q guardbench >/dev/null
# PayPal's pinned OpenAPI documents (the stand-in checks every request against them); never committed
export GUARDBENCH_SPECS_DIR="${GUARDBENCH_SPECS_DIR:-$(cd .. && pwd)/shared/specs/paypal}"
exec .venv/bin/guardbench run "$@"

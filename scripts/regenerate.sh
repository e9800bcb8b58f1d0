#!/usr/bin/env bash
# Regenerate every result committed under results/ and the README's results section.
# Each command writes only the folder its --out names (no command writes results/ by default);
# nothing here edits a number by hand.
#
#   bash scripts/regenerate.sh            # everything but the slow parts
#   MUTATE=1 bash scripts/regenerate.sh   # also `guardbench mutate` (about 3 minutes)
#   BENCH=1 bash scripts/regenerate.sh    # also the speed figures (results/bench/)
#   LOCAL=1 bash scripts/regenerate.sh    # also the local-model run (llama.cpp + Qwen2.5-Coder-1.5B from PyPI;
#                                         # an hour or more on 2 cores; LOCAL_CASES: its case options)
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${GB:-guardbench}"
ARMS6=guardrail,control,hardened,gate,pdp,taint

rm -rf results/default results/careful results/defences results/defences-approve-all
$GB run --out results/default --quiet                        # the default scripted matrix
$GB report results/default --out results/default/report
$GB run --agent careful --out results/careful --quiet         # the honest-agent baseline
$GB run --arms "$ARMS6" --out results/defences --quiet
$GB run --arms "$ARMS6" --approvals all --out results/defences-approve-all --quiet
$GB conformance --out results/conformance
$GB conformance --run results/default --out results/default
$GB bypass --out results/bypass --quiet
$GB bypass --as-published --out results/bypass --quiet
$GB adapt --out results/adapt --quiet
if [[ "${MUTATE:-0}" == "1" ]]; then
  $GB mutate --jobs 2 --out results/mutation
fi
if [[ "${LOCAL:-0}" == "1" ]]; then
  rm -rf results/local-qwen2.5-coder-1.5b
  # shellcheck disable=SC2086
  GB="$GB" bash scripts/local_model.sh --out results/local-qwen2.5-coder-1.5b --model qwen2.5-coder-1.5b \
    ${LOCAL_CASES:-} --quiet
  python bench/bench_local_overhead.py results/local-qwen2.5-coder-1.5b > results/local-qwen2.5-coder-1.5b/overhead.txt
fi
if [[ "${BENCH:-0}" == "1" ]]; then
  python bench/run_all.py
fi
python scripts/update_readme.py

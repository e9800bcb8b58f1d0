"""schemathesis (a fuzzer nobody here wrote) against `guardbench sandbox serve`, on every served
operation with its pinned document: bounded (fixed seed, a few examples per operation). The long
run is bench/bench_fuzz.py."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
HAS_ST = Path(sys.executable).with_name("schemathesis").exists() or shutil.which("schemathesis")
pytestmark = [pytest.mark.skipif(not SHARED.is_dir(), reason="needs the pinned documents"),
              pytest.mark.skipif(not HAS_ST, reason="schemathesis (the test extra) is not installed")]


@pytest.mark.slow
def test_schemathesis_finds_nothing_but_the_listed_exceptions(tmp_path):
    from guardbench.conformance.fuzz import ALLOWED, CHECKS, fuzz
    from guardbench.paypal.endpoints import ENDPOINTS

    s = fuzz(tmp_path, max_examples=4, seed=20240203, phases="examples,fuzzing", timeout=300)
    st, rec = s["schemathesis"], s["recording"]
    served = sum(1 for e in ENDPOINTS.values() if e.spec)
    assert st["operations"] == served and st["operations_tested"] == served, s["by_document"]
    assert st["errors"] == 0 and st["unexpected_failures"] == [], st
    assert set(st["failures_by_check"]) == set(CHECKS) and ALLOWED == ()
    # the same traffic judged by openapi-core on the same documents
    assert rec["requests"] >= 2 * served
    assert rec["invalid_accepted"] == 0 and rec["valid_rejected"] == 0, rec["examples"]
    assert rec["server_errors"] == 0 and rec["responses_nonconforming"] == 0, rec["examples"]
    assert rec["responses"] == rec["requests"] and s["passed"] is True

"""bench/sim_coverage.py's quick, seeded setting: the clustered interval covers at >= 0.93 where the former
one did not, and the sign-flip test's mid-p rejects more often than the exact p without losing its level."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> dict:
    pytest.importorskip("numpy")
    out = tmp_path_factory.mktemp("sim")
    subprocess.run([sys.executable, str(ROOT / "bench" / "sim_coverage.py"), "--quick", "--out", str(out)],
                   check=True, capture_output=True, text=True, timeout=600)
    assert (out / "SUMMARY.md").read_text().startswith("# Coverage and test size")
    return json.loads((out / "summary.json").read_text())


def test_interval_covers_in_every_quick_setting(quick):
    cov = quick["coverage"]
    assert {c["cases"] for c in cov} == {12, 60} and all(c["reps"] == 600 for c in cov)
    assert min(c["coverage"] for c in cov) >= 0.93, cov
    # the same draws catch the former interval (plain Wilson on the effective sample) under-covering:
    # the simulation can tell a bad interval from a good one
    assert min(c["former"] for c in cov) < 0.90


def test_sign_flip_size_and_power(quick):
    null = [c for c in quick["sign_flip"] if c["effect"] == 0.0]
    alt = [c for c in quick["sign_flip"] if c["effect"] > 0.0]
    assert null and alt
    se = (0.05 * 0.95 / null[0]["reps"]) ** 0.5
    for c in null:
        assert c["exact"] <= c["midp"] <= 0.05 + 3 * se, c       # the mid-p never rejects less, near its level
    assert min(c["exact"] for c in null if c["cases"] == 12) < 0.02           # the exact test is conservative
    for c in alt:
        assert c["midp"] >= c["exact"], c

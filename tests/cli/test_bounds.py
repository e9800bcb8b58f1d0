"""Nothing a user types takes the machine down: --jobs is capped (at the runs to do and 4 per core, said
in one line), a --variants count above a case's variants means all of them without walking the range,
--generate-variants and --repeats have a maximum, and case files are bounded in size and in how far their
YAML aliases expand (an alias bomb is one line naming the file). Through the real command line, each
child under a memory limit so that a regression fails the test instead of the machine."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

SMALL = ["--case", "benign-charge-plan", "--case", "di-payee-reseller", "--quiet"]
BOMB = """cases:
  - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  - &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  - &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  - &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  - &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  - &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  - &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  - &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))       # 3 GB: a blow-up dies, not the machine


def gb(*args, timeout=240, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=_limit, env=env)


def _one_line(res, words: str) -> str:
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr and len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert words in lines[0], lines[0]
    return lines[0]


def test_a_huge_variant_count_means_every_variant(tmp_path):
    t0 = time.perf_counter()
    res = gb("run", *SMALL, "--variants", "1000000000000", "--out", tmp_path / "run")
    assert res.returncode == 0, res.stderr[-2000:]
    assert time.perf_counter() - t0 < 200
    m = json.loads((tmp_path / "run" / "manifest.json").read_text())
    per_case = m["plan"]["cases"]
    assert per_case["benign-charge-plan"] >= 2 and m["planned_runs"] == 3 * sum(per_case.values())
    assert f"{m['planned_runs']} runs to do" in res.stderr


@pytest.mark.parametrize("argv, words", [
    (["--generate-variants", "1000000000"], "--generate-variants: must be at most 10000, not 1000000000"),
    (["--agent", "llm", "--model", "m", "--repeats", "1000000000"], "--repeats: must be at most 1000"),
])
def test_counts_that_multiply_the_work_have_a_maximum(tmp_path, argv, words):
    res = gb("run", *argv, "--out", tmp_path / "run", timeout=120)
    _one_line(res, words)
    assert not (tmp_path / "run").exists()


def test_jobs_is_capped_at_the_runs_to_do_and_the_cores(tmp_path):
    res = gb("run", *SMALL, "--variants", "1", "--jobs", "100000", "--out", tmp_path / "run", timeout=200)
    assert res.returncode == 0, res.stderr[-2000:]
    capped = [x for x in res.stderr.splitlines() if x.startswith("note: --jobs")]
    cores = len(os.sched_getaffinity(0))
    assert capped == [f"note: --jobs 100000 capped at {min(6, 4 * cores)} "
                      f"({'6 runs to do' if 6 < 4 * cores else f'4 per core, {cores} cores'})"], res.stderr
    m = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert m["jobs"] <= min(6, 4 * cores)


def test_a_yaml_alias_bomb_is_refused_naming_the_file(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "bomb.yaml").write_text(BOMB)
    t0 = time.perf_counter()
    res = gb("run", "--cases", cases, "--out", tmp_path / "run", timeout=120,
             env={**os.environ, "GUARDBENCH_CASE_CACHE": "off"})
    line = _one_line(res, f"{cases / 'bomb.yaml'}: not accepted: its aliases expand to more than")
    assert "alias" in line and time.perf_counter() - t0 < 100
    assert not (tmp_path / "run").exists()


def test_a_recursive_alias_and_an_oversized_case_file_are_refused(tmp_path):
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "cases.yaml").write_text("cases: &x [*x]\n")
    _one_line(gb("run", "--cases", rec, "--out", tmp_path / "r1", timeout=120), "recursive")
    big = tmp_path / "big"
    big.mkdir()
    with (big / "cases.yaml").open("w") as fh:
        fh.write("cases: []\n" + "# padding\n" * 500_000)
    _one_line(gb("run", "--cases", big, "--out", tmp_path / "r2", timeout=120), "a case file is at most")


def test_an_alias_bomb_in_a_spec_or_a_thresholds_file_is_refused(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(BOMB.replace("cases:", "name: bomb\nserver: {command: x}\nactions:"))
    _one_line(gb("run", "--arms", f"app:{spec}", "--out", tmp_path / "r", timeout=120), "aliases expand")
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(BOMB.replace("cases:", "require:"))
    run = Path(__file__).parents[2] / "results" / "default"
    _one_line(gb("check", run, "--thresholds", thresholds, timeout=120), "aliases expand")

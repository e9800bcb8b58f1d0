"""A run folder cut short says so: the manifest records the planned runs, and table, report, compare and
check print "incomplete: k of n runs" on every output; check fails such a run (exit 1) unless
--allow-incomplete. A torn last line is reported in one line, never dropped silently; a manifest from
before the plan was recorded still loads ("planned runs unknown"). Through the real command line."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

SMALL = ["--case", "benign-charge-plan", "--case", "di-payee-reseller", "--variants", "1", "--quiet"]
REQ = ["--require", "guardrail.incidents == 0"]


def gb(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("incomplete")
    full = root / "full"
    done = gb("run", *SMALL, "--out", full)
    assert done.returncode == 0, done.stderr
    lines = (full / "runs.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) == 6
    cut = root / "cut"                      # 3 whole records and a torn fourth: a run killed mid-write
    cut.mkdir()
    shutil.copy(full / "manifest.json", cut / "manifest.json")
    (cut / "runs.jsonl").write_bytes(b"".join(lines[:3]) + lines[3][:40])
    old = root / "old"                      # a folder written before the plan was recorded
    old.mkdir()
    m = json.loads((full / "manifest.json").read_text())
    m.pop("planned_runs")
    m.pop("plan")
    (old / "manifest.json").write_text(json.dumps(m))
    shutil.copy(full / "runs.jsonl", old / "runs.jsonl")
    return root


def test_the_manifest_records_the_plan(runs):
    m = json.loads((runs / "full" / "manifest.json").read_text())
    assert m["planned_runs"] == 6
    assert m["plan"]["cases"] == {"benign-charge-plan": 1, "di-payee-reseller": 1}
    from guardbench.records.runfile import planned_ids, read_records
    assert sorted(planned_ids(m["plan"])) == sorted(r.run_id for r in read_records(runs / "full" / "runs.jsonl"))


def test_table_says_incomplete_and_the_torn_line(runs):
    res = gb("table", runs / "cut")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith("incomplete: 3 of 6 runs; missing ")
    torn = [x for x in res.stderr.splitlines() if "torn" in x]
    assert len(torn) == 1 and "line 4" in torn[0], res.stderr
    md = gb("table", runs / "cut", "--format", "markdown", "--write", runs / "tables-cut")
    assert md.stdout.startswith("incomplete: 3 of 6 runs")
    assert "incomplete: 3 of 6 runs" in (runs / "tables-cut" / "tables.md").read_text()
    csv = gb("table", runs / "cut", "--format", "csv")
    assert "incomplete" not in csv.stdout and "incomplete: 3 of 6 runs" in csv.stderr
    whole = gb("table", runs / "full")
    assert "incomplete" not in whole.stdout + whole.stderr and "torn" not in whole.stderr


def test_check_fails_an_incomplete_run_unless_allowed(runs):
    res = gb("check", runs / "cut", *REQ)
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert "incomplete: 3 of 6 runs" in res.stdout.splitlines()[0]
    assert "incomplete" in res.stdout.splitlines()[-1]
    allowed = gb("check", runs / "cut", *REQ, "--allow-incomplete")
    assert allowed.returncode == 0 and "incomplete: 3 of 6 runs" in allowed.stdout, allowed.stdout
    assert gb("check", runs / "full", *REQ).returncode == 0


def test_compare_and_report_say_incomplete(runs):
    res = gb("compare", runs / "full", runs / "cut", "--markdown", runs / "cmp.md")
    assert res.returncode == 0, res.stderr
    assert "cut: incomplete: 3 of 6 runs" in res.stdout
    assert "cut: incomplete: 3 of 6 runs" in (runs / "cmp.md").read_text()
    pytest.importorskip("matplotlib")
    rep = gb("report", runs / "cut", "--out", runs / "report", "--no-explorer")
    assert rep.returncode == 0, rep.stderr
    assert "incomplete: 3 of 6 runs" in rep.stdout
    assert "incomplete: 3 of 6 runs" in (runs / "report" / "report.md").read_text()
    assert "incomplete: 3 of 6 runs" in (runs / "report" / "report.html").read_text()


def test_an_old_manifest_loads_with_planned_runs_unknown(runs):
    res = gb("table", runs / "old")
    assert res.returncode == 0 and "incomplete" not in res.stdout + res.stderr, res.stderr
    chk = gb("check", runs / "old", *REQ)          # the gate, which completeness decides, says it was not checked
    assert chk.returncode == 0 and "planned runs unknown" in chk.stderr, chk.stderr


def test_a_resumed_run_says_it_cut_the_torn_line(runs, tmp_path):
    folder = tmp_path / "cut"
    shutil.copytree(runs / "cut", folder)
    res = gb("run", *SMALL, "--out", folder)
    assert res.returncode == 0, res.stderr
    assert "torn last line" in res.stderr and "(3 already recorded)" in res.stderr
    assert "incomplete" not in gb("table", folder).stdout

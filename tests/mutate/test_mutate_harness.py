"""The harness itself: classification, process-group timeouts, copy isolation, and a tiny end-to-end run."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardbench.mutate import copies, probe, steps
from guardbench.mutate import harness as h
from guardbench.mutate import registry as reg

ROOT = Path(__file__).resolve().parents[2]


def _step(rc, out="", err="", timed_out=False):
    return copies.Step(["x"], rc, out, err, 0.1, timed_out)


def _info(out):
    info = {"failing": [], "messages": []}
    for line in out.splitlines():
        m = steps.SUMMARY_LINE.match(line)
        if m:
            info["failing"].append(m.group(2))
            info["messages"].append(m.group(3) or "")
    return info


@pytest.mark.parametrize("rc,out,verdict", [
    (0, "3 passed", "survived"),
    (1, "FAILED tests/a.py::test_x - AssertionError: assert 1 == 2\n1 failed", "killed"),
    (1, "ERROR tests/a.py::test_y - RuntimeError: boom\n1 error", "killed"),
    (1, "FAILED tests/a.py::test_x - ModuleNotFoundError: No module named 'x'", "invalid"),
    (1, "FAILED tests/a.py::test_x - SyntaxError: invalid syntax", "invalid"),
    (1, "1 failed", "invalid"),                                       # no failing test named: not a kill
    (2, "ERROR collecting tests/a.py\nInterrupted: 1 error during collection", "invalid"),
    (3, "INTERNALERROR>", "invalid"),
    (4, "ERROR: file or directory not found: tests/nope.py", "invalid"),
    (5, "no tests ran", "invalid"),
])
def test_pytest_outcomes_are_classified(rc, out, verdict):
    assert steps.tests_verdict(_step(rc, out), _info(out))[0] == verdict


def test_a_timeout_is_not_a_kill():
    assert steps.tests_verdict(_step(None, timed_out=True), _info(""))[0] == "timeout"


def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
            "time.sleep(60)\n")
    procs = copies.Procs()
    t0 = time.monotonic()
    step = procs.run([sys.executable, "-c", code], tmp_path, dict(os.environ), time.monotonic() + 1.5)
    assert step.timed_out and step.rc is None and time.monotonic() - t0 < 20
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as f:       # a zombie waiting for its reaper is dead too
                if f.read().split(") ")[1].startswith("Z"):
                    break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild outlived the timeout")


def test_a_mutant_over_its_time_limit_is_a_timeout_not_a_kill(tmp_path):
    snap = tmp_path / "snap"
    snap.mkdir()
    copies.make_snapshot(ROOT, snap)
    ctx = copies.Context(ROOT, snap, tmp_path, 0.2, [])        # no import + pytest + bench fits in 0.2 s
    r = h.run_mutant(ctx, reg.get("control_forced"))
    assert r.status == "timeout" and not r.by_tests and not r.by_bench
    assert r.seconds < 30
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("gb-mutate-")]     # the copy was removed


def test_copy_env_points_at_the_copy(tmp_path):
    env = copies.copy_env(tmp_path, tmp_path / "p.json")
    assert env["PYTHONPATH"] == str(tmp_path) and env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env[probe.ENV] == str(tmp_path / "p.json")
    assert not [k for k in env if k.startswith("PYTEST_")] and "GUARDBENCH_ALLOW_LIVE" not in env


def test_a_module_imported_from_outside_the_copy_is_refused(tmp_path):
    """A 'copy' without guardbench in it: the import falls through to the installed tree, and the harness says so."""
    ctx = copies.Context(ROOT, tmp_path, tmp_path, 60.0, [])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(copies.HarnessBroken, match="not from the copy"):
        steps.import_check(ctx, empty, ["guardbench.broker.broker"], time.monotonic() + 60)


def test_the_snapshot_holds_the_working_files_without_results(tmp_path):
    files = copies.repo_files(ROOT)
    assert "guardbench/mutate/harness.py" in files and "pyproject.toml" in files
    assert not [f for f in files if f.startswith("results/")]
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]


@pytest.mark.slow
@pytest.mark.parametrize("wrong", ["tests/no/such_test.py", "tests/mutate/test_control_forced.py::test_no_such"])
def test_a_wrong_test_path_makes_the_baseline_refuse(tmp_path, wrong):
    """The mistake that made an earlier harness report kills that meant nothing."""
    snap = tmp_path / "snap"
    snap.mkdir()
    copies.make_snapshot(ROOT, snap)
    ctx = copies.Context(ROOT, snap, tmp_path, 60.0, [])
    with pytest.raises(copies.HarnessBroken, match="do not all collect"):
        h.run_baseline(ctx, 1, ["tests/mutate/test_control_forced.py::test_canary_is_harmless", wrong],
                       ["guardbench.mutate.canary"])


def test_selection_files_keep_order_and_drop_duplicates():
    assert steps.selection_files(["a.py::x", "b.py", "a.py::y", "c.py::z[1]"]) == ["a.py", "b.py", "c.py"]


def test_bench_comparison_is_run_by_run():
    from dataclasses import replace

    from guardbench.records.record import Incident, RunRecord
    common = {"case": "c", "family": "benign", "variant": 0, "arm": "guardrail", "agent": "credulous", "repeat": 0,
              "status": "answered", "steps": 1, "money_at_risk": {}, "attempts": [], "incidents": []}
    rec = [RunRecord.from_dict(dict(common, run_id="a", goal_achieved=False, benign_completed=None)),
           RunRecord.from_dict(dict(common, run_id="b", goal_achieved=None, benign_completed=True))]
    base = steps.bench_summary(rec)
    assert (base["attacks_blocked"], base["benign_completed"], base["incidents"]) == (1, 1, 0)
    hit = replace(rec[0], incidents=(Incident("unbound_payee", 3, "paid someone else"),), goal_achieved=True)
    swapped = steps.bench_summary([hit, rec[1]])
    assert steps.bench_diff(base, swapped) == ["a"]
    assert "attacks blocked 1->0" in steps.describe_bench(base, swapped, ["a"])
    assert steps.bench_diff(base, steps.bench_summary(rec)) == []


@pytest.mark.slow
def test_end_to_end_on_two_safeguards_with_the_controls(tmp_path):
    """Two real safeguards (both must be killed) plus the canary (must survive) and the forced failure."""
    names = ["detector_outside_host", "sandbox_host_refusal"]
    report = h.run(ROOT, names, jobs=2, timeout=120, out=tmp_path)
    assert sorted(r.name for r in report.results) == sorted(names)
    assert report.all_killed, [(r.name, r.status, r.note) for r in report.results]
    by = {r.name: r for r in report.results}
    assert by["detector_outside_host"].by_tests and by["detector_outside_host"].bench == "preflight"
    assert "tests/scoring/test_detectors.py::test_detector_fires_on_its_class[outside_host]" in \
        by["detector_outside_host"].failing_tests
    assert by["sandbox_host_refusal"].by_tests and by["sandbox_host_refusal"].bench == "same"
    assert by["sandbox_host_refusal"].imported_from == "guardbench/transport/sandbox.py"
    controls = {c.name: c for c in report.controls}
    assert controls["control_canary"].status == "survived" and controls["control_canary"].bench == "same"
    assert controls["control_forced"].by_tests
    assert report.headline().startswith("2/2 killed; by tests 2; by bench 1")
    from guardbench.mutate.report import terminal, write
    paths = write(report, tmp_path)
    data = json.loads(paths[0].read_text())
    assert data["counts"]["killed"] == 2 and data["headline"] == report.headline()
    assert "2/2 killed" in paths[1].read_text() and "2/2 killed" in terminal(report)


def test_cli_list_and_bad_options():
    from guardbench.cli.main import cli
    r = CliRunner().invoke(cli, ["mutate", "--list"])
    assert r.exit_code == 0 and f"{len(reg.SAFEGUARDS)} safeguards, 2 controls" in r.output
    r = CliRunner().invoke(cli, ["mutate", "--only", "no_such_safeguard"])
    assert r.exit_code == 2 and "no_such_safeguard" in r.output
    r = CliRunner().invoke(cli, ["mutate", "--only", "control_canary"])
    assert r.exit_code == 2

"""SIGTERM (what `timeout`, systemd and CI send) stops a run as Ctrl-C does: records whole, the resume line
printed, no traceback from the parent or a worker (no BrokenPipeError), every worker gone, exit 143. And
every worker dies with its parent, even when the parent is killed outright (SIGKILL): a real `guardbench
run --jobs 2` in a subprocess, as tests/cli/test_interrupt.py does for Ctrl-C."""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from guardbench.records.runfile import read_records

ARGS = ["run", "--generate-variants", "10", "--jobs", "2", "--quiet"]


def _start(argv: list, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "guardbench.cli.main", *map(str, argv), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _state(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a live process; None when it is gone (a zombie is gone: it runs nothing)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else (fields[0], int(fields[2]))


def _group(pgid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _state(int(d))
            if st is not None and st[1] == pgid:
                out.append(int(d))
    return out


def _gone(pids, wait: float) -> list[int]:
    deadline = time.time() + wait
    left = list(pids)
    while time.time() < deadline:
        left = [p for p in left if _state(p) is not None]
        if not left:
            break
        time.sleep(0.05)
    return left


def _wait_for(cond, limit: float = 180.0) -> None:
    deadline = time.time() + limit
    while time.time() < deadline and not cond():
        time.sleep(0.05)


def _running(marker: str) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and marker in Path(f"/proc/{d}/cmdline").read_bytes().decode(errors="replace"):
                out.append(int(d))
        except OSError:
            continue
    return out


def _workers(parent: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        try:
            fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split() if d.isdigit() else None
        except OSError:
            continue
        if fields and int(fields[1]) == parent and fields[0] != "Z":
            out.append(int(d))
    return out


@pytest.mark.parametrize("to", ["parent", "group"])
def test_sigterm_is_handled_like_ctrl_c(tmp_path, to):
    """`timeout` signals the command it started; systemd signals every process of the unit."""
    out = tmp_path / "run"
    p = _start(ARGS, out)
    runs = out / "runs.jsonl"
    _wait_for(lambda: p.poll() is not None or (runs.exists() and runs.stat().st_size > 0 and len(_workers(p.pid)) >= 2))
    assert p.poll() is None, p.communicate()
    workers = _workers(p.pid)
    (os.kill if to == "parent" else os.killpg)(p.pid, signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail("hung after SIGTERM")
    assert p.returncode == 143, (p.returncode, err[-2000:])
    assert "Traceback" not in err and "BrokenPipeError" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    assert "terminated (SIGTERM)" in err and "resume with:" in err, err[-2000:]
    assert not _gone(workers, 10.0) and not _gone(_group(p.pid), 10.0), "a worker outlived the run"
    recs = read_records(runs)
    assert recs and len({r.run_id for r in recs}) == len(recs)
    command = shlex.split(err.split("resume with:", 1)[1].strip().splitlines()[0])
    assert command[:2] == ["guardbench", "run"] and command[-2:] == ["--out", str(out)]
    done = subprocess.run([sys.executable, "-m", "guardbench.cli.main", *command[1:]], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0 and f"({len(recs)} already recorded)" in done.stderr, done.stderr[-2000:]


SLEEPER = """import os, pathlib, sys, time, uuid
sys.stdin.read()
pathlib.Path(sys.argv[1], uuid.uuid4().hex).write_text(str(os.getpid()))   # in a room, its room's pid
time.sleep(300)
"""
SPEC = """name: sleeper
agent:
  command: "{python}"
  args: ["{spec_dir}/sleeper.py", "{spec_dir}/pids"]
reach: proxy
state: fresh
timeouts: {run: 300}
"""


def test_workers_and_what_they_started_die_with_a_killed_parent(tmp_path, request):
    """SIGKILL leaves the parent no chance to stop anything: the kernel tells each worker (prctl
    PR_SET_PDEATHSIG), which stops the application it started. Without that, each worker waits out its
    application (here 300 s)."""
    pytest.importorskip("cryptography")
    pytest.importorskip("h11")
    app = Path(tempfile.mkdtemp(prefix="gb-sleeper-"))     # in a room it runs as uid 65534: open to it
    request.addfinalizer(lambda: shutil.rmtree(app, ignore_errors=True))
    app.chmod(0o755)
    (app / "pids").mkdir()
    (app / "pids").chmod(0o777)
    (app / "sleeper.py").write_text(SLEEPER)
    (app / "spec.yaml").write_text(SPEC)
    p = _start(["run", "--arms", f"app:{app / 'spec.yaml'}", "--case", "benign-charge-plan", "--case",
                "benign-charge-basic-listing", "--variants", "1", "--jobs", "2", "--quiet"], tmp_path / "run")
    pids = app / "pids"
    _wait_for(lambda: p.poll() is not None or len(os.listdir(pids)) >= 2)
    assert p.poll() is None, p.communicate()
    workers = _workers(p.pid)
    # the applications by their command line, as the host sees them (in a room, the pid each wrote is its
    # room's own)
    apps = _running(str(app / "sleeper.py"))
    assert len(workers) == 2 and len(apps) >= 2 and all(_state(a) for a in apps)   # (with a room's wrappers)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(30)                           # not communicate(): a surviving worker holds the pipes open
    try:
        assert not _gone(workers, 15.0), "a worker outlived its killed parent"
        assert not _gone(apps, 15.0), "an application a worker started outlived it"
    finally:
        for pid in workers + apps:       # whatever the outcome, nothing of this test is left running
            if _state(pid) is not None:
                os.kill(pid, signal.SIGKILL)
        p.stdout.close()
        p.stderr.close()

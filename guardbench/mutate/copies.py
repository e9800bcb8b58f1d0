"""Throw-away copies of the repository for the mutation harness: the snapshot, fresh copies of it,
the environment a copy runs in, and the process groups that run there (killed whole on a timeout).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from guardbench.errors import IntegrityError
from guardbench.mutate.probe import ENV as PROBE_ENV

EXCLUDE_PREFIXES = ("results/",)           # run outputs: never read by the tests or the bench
SCRUB_ENV = ("GUARDBENCH_ALLOW_LIVE", "GUARDBENCH_LEDGER_KEY", "PYTHONHOME", "PYTHONSTARTUP")


class HarnessBroken(IntegrityError, RuntimeError):
    """The harness cannot vouch for its own results; nothing it found may be counted."""


# ----------------------------------------------------------------------------- subprocesses
@dataclass
class Step:
    argv: list[str]
    rc: int | None
    out: str
    err: str
    seconds: float
    timed_out: bool = False


class Procs:
    """Running process groups, so that a broken or interrupted harness leaves none behind."""

    def __init__(self) -> None:
        self._live: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()
        self.stopped = False

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], deadline: float) -> Step:
        t0 = time.monotonic()
        remaining = deadline - t0
        if remaining <= 0 or self.stopped:
            return Step(argv, None, "", "", 0.0, timed_out=not self.stopped)
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)
        with self._lock:
            self._live.add(proc)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
            killpg(proc)
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                out, err = "", "(output lost: the process group did not die)"
        finally:
            with self._lock:
                self._live.discard(proc)
        return Step(argv, None if timed_out else proc.returncode, out, err, time.monotonic()
                    - t0, timed_out)

    def kill_all(self) -> None:
        self.stopped = True
        with self._lock:
            live = list(self._live)
        for p in live:
            killpg(p)


def killpg(proc: subprocess.Popen[str]) -> None:
    try:
        # start_new_session: the group id is the child's pid
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def copy_env(copy: Path, probe: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")
           and k not in SCRUB_ENV}
    env["PYTHONPATH"] = str(copy)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    # a copy has no ../shared beside it: name the documents' folder
    if not env.get("GUARDBENCH_SPECS_DIR"):
        from guardbench.paypal.documents import resolve_specs_dir

        env["GUARDBENCH_SPECS_DIR"] = str(resolve_specs_dir()[0])
    env.pop(PROBE_ENV, None)
    if probe is not None:
        env[PROBE_ENV] = str(probe)
    return env


# ----------------------------------------------------------------------------- the snapshot
def repo_files(repo: Path) -> list[str]:
    """git-tracked plus untracked-but-not-ignored files (``results/`` left out)."""
    r = subprocess.run(["git", "-C", str(repo), "ls-files", "--cached", "--others",
                        "--exclude-standard", "-z"],
                       capture_output=True, timeout=60)
    if r.returncode != 0:
        raise HarnessBroken(f"git ls-files failed in {repo}: "
                            f"{r.stderr.decode(errors='replace').strip()}")
    names = {n for n in r.stdout.decode("utf-8", errors="surrogateescape").split("\0") if n}
    return sorted(n for n in names if not n.startswith(EXCLUDE_PREFIXES) and (repo / n).is_file())


def make_snapshot(repo: Path, dest: Path) -> int:
    files = repo_files(repo)
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)
    return len(files)


def inside(path: str | None, root: Path) -> bool:
    if not path:
        return False
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


# ----------------------------------------------------------------------------- one copy
@dataclass
class Context:
    """What every copy of one harness run shares: the repository, its snapshot, where copies go, the
    time limit, the tests of the whole selection, the baseline, and the process groups running."""

    repo: Path
    snapshot: Path
    tmp: Path
    timeout: float
    full_selection: list[str]
    baseline: dict | None = None
    keep: bool = False
    procs: Procs = field(default_factory=Procs)


def fresh_copy(ctx: Context, label: str) -> Path:
    copy = Path(tempfile.mkdtemp(prefix=f"gb-mutate-{label}-", dir=ctx.tmp))
    # the tests run external systems in rooms, as another user (room/reach.py)
    copy.chmod(0o755)
    shutil.copytree(ctx.snapshot, copy, dirs_exist_ok=True)
    (copy / ".mutate").mkdir()
    return copy

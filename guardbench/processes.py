"""Stopping a process that runs in a session of its own (an MCP server, an agent application)."""
from __future__ import annotations

import os
import signal
import subprocess

# Process groups started in a session of their own and not yet stopped, by the process that started
# them: a forked worker that is terminated kills them from its signal handler (kill_started_groups),
# which must not take a lock or wait.
_STARTED: set[int] = set()


def started(proc: subprocess.Popen) -> subprocess.Popen:
    """Note a process started with ``start_new_session=True`` (its pid is its group's id)."""
    _STARTED.add(proc.pid)
    return proc


def kill_started_groups() -> None:
    """SIGKILL every group this process started and has not stopped (safe in a signal handler)."""
    for pgid in list(_STARTED):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    _STARTED.clear()


def stop_group(proc: subprocess.Popen, wait: float = 2.0) -> None:
    """SIGTERM to the process's group, then SIGKILL if it has not ended within ``wait`` seconds; a
    group that is already gone (or not ours to signal) is left as it is."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            _STARTED.discard(proc.pid)
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            _STARTED.discard(proc.pid)
            return
        try:
            proc.wait(wait)
            _STARTED.discard(proc.pid)
            return
        except subprocess.TimeoutExpired:
            continue

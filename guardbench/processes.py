"""Stopping a process that runs in a session of its own (an MCP server, an agent application)."""
from __future__ import annotations

import os
import signal
import subprocess


def stop_group(proc: subprocess.Popen, wait: float = 2.0) -> None:
    """SIGTERM to the process's group, then SIGKILL if it has not ended within ``wait`` seconds; a
    group that is already gone (or not ours to signal) is left as it is."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue

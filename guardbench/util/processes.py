"""Stopping a process that runs in a session of its own (an MCP server, an agent application)."""
from __future__ import annotations

import os
import signal
import socket
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


def _listening_inodes(port: int) -> set[str] | None:
    """Inodes of the sockets listening on ``port`` (any address), from /proc/net/tcp{,6}; None off
    Linux."""
    found: set[str] = set()
    seen = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                lines = fh.readlines()[1:]
        except OSError:
            continue
        seen = True
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                found.add(f[9])
    return found if seen else None


def listener_is_ours(port: int, session: int) -> bool | None:
    """Is the socket listening on ``port`` held by a process of ``session`` (the session id of a
    process started with ``start_new_session=True`` is its pid)? True/False on Linux, None where
    /proc cannot tell. A port released by free-port probing can be taken by another program before
    the server we started binds it; this tells that program's listener from ours."""
    inodes = _listening_inodes(port)
    if inodes is None:
        return None
    if not inodes:
        return False
    wanted = {f"socket:[{i}]" for i in inodes}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
            if int(stat.rsplit(")", 1)[1].split()[3]) != session:     # field 6: session id
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                    return True
        except (OSError, ValueError, IndexError):
            continue
    return False


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago (see listener_is_ours for the race this
    leaves)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

"""Reading an external system's own state at the end of a run (its spec's ``state_probe``,
mcp/probe.py) and recording its writes on the run's wire, marked as read from the state.

The MCP arm asks through its connection (``tool``); both external arms can ask with a GET on this
machine (``http``) or a command (``command``, run in the spec's folder with the process's
environment). Every failure is a ``ProbeError`` whose text the arm loses the run with.
"""
from __future__ import annotations

import os
import subprocess
from typing import Callable, Mapping

from guardbench.arms.base import Prepared
from guardbench.mcp.probe import ProbeError, StateProbe, exchange_of, writes_of
from guardbench.mcp.spec import McpSpec, expand
from guardbench.records.record import Attempt

_ENV_KEEP = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")


def probe_text(spec: McpSpec, probe: StateProbe, values: Mapping[str, str], env: Mapping[str, str],
               call_tool: Callable[[str, dict], str] | None = None) -> str:
    """The probe's answer (text): by the server's tool, a GET, or a command's stdout."""
    timeout = spec.call_timeout
    if probe.tool is not None:
        if call_tool is None:
            raise ProbeError("state probe: a tool needs an MCP connection")
        return call_tool(probe.tool, dict(probe.args))
    if probe.http is not None:
        import httpx
        url = expand(probe.http, dict(values))
        try:
            with httpx.Client(timeout=timeout, trust_env=False) as c:
                r = c.get(url)
        except httpx.HTTPError as exc:
            raise ProbeError(f"state probe: GET {url} failed: {exc}") from None
        if r.status_code != 200:
            raise ProbeError(f"state probe: GET {url} answered {r.status_code}")
        return r.text
    argv = [expand(a, dict(values)) for a in probe.command or ()]
    full = {k: v for k, v in os.environ.items() if k in _ENV_KEEP}
    full.update(env)
    try:
        done = subprocess.run(argv, cwd=values["spec_dir"], capture_output=True, text=True,
                              timeout=timeout, env=full)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProbeError(f"state probe: command failed: {exc}") from None
    if done.returncode != 0:
        raise ProbeError(f"state probe: command exited {done.returncode}: "
                         f"{done.stderr.strip()[-200:]}")
    return done.stdout


def record_writes(prepared: Prepared, probe: StateProbe, text: str, settings: Mapping[str, str],
                  system: str) -> int:
    """Record the writes the answer shows on the run's wire (executed, queued) or as the system's
    refusals (attempts); the number of writes read."""
    writes = writes_of(probe, text)
    for w in writes:
        if w.status == "refused":
            prepared.attempts.append(Attempt(system, w.do, "refused_by_system",
                                             f"{w.do} {w.amount or ''} {w.currency or ''} "
                                             f"on {w.ref}: "
                                             f"{w.system_status}".replace("  ", " ")))
            continue
        req, resp = exchange_of(w, settings)
        prepared.recorder.record_state(req, resp, w.status)
    return len(writes)

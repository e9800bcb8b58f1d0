"""An agent application's process (arms/app.py): started, handed one run, stopped.

The spec says how (docs/external.md). Without ``url`` the application is started for each run and
handed it as one JSON object on stdin (its answer: one JSON object on stdout). With ``url`` it is
started once, on a fresh port (another when a program took that one first; in a room, a port
relayed from here to the same one inside), and each run is one POST to its endpoint. Either way
it runs inside the run's room when there is one, with the outside world's environment and the
model gateway's variables. A process that exits non-zero, writes what is not the contract's JSON,
or takes longer than ``timeouts.run`` of its own time is killed (its process group) and the run is
lost: ``AppLost``, with the tail of its stderr. Its own time is the wall time less the time the
gateway's model took to answer it (guardbench's side: a local model may take minutes a call, and
that is not the application hanging).
"""
from __future__ import annotations

import http.client
import json
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from guardbench.arms.external import ExternalWorld, placeholders
from guardbench.errors import RunLost
from guardbench.gateway.hook import ArmGateway
from guardbench.mcp.spec import McpSpec, expand
from guardbench.util.processes import free_port, listener_is_ours, started, stop_group

# an application whose port another program took first gets this many ports in all
PORT_ATTEMPTS = 3
# how often the application's own time is read while it runs (seconds)
OWN_TIME_SLICE = 1.0


class PortTaken(RunLost):
    """The port free_port() handed out was bound by another program before the application bound
    it."""


class AppLost(RunLost):
    """The application's process failed (``reason``, with the tail of its ``stderr``): the run is
    lost."""


class AppProcess:
    """The application of one spec, for the arm in one process (a forked worker makes its own)."""

    def __init__(self, spec: McpSpec, outside: ExternalWorld, models: ArmGateway) -> None:
        self.spec = spec
        self.name = spec.name
        self.outside = outside          # the run's room, environment and working folder
        self.models = models            # the application's model (guardbench/gateway/)
        self.url: str | None = None     # an HTTP application's endpoint, once started
        self._proc: subprocess.Popen | None = None
        self._log: Any = None

    def _env(self) -> dict[str, str]:
        env = self.outside.environment()
        # its model: the gateway (in a room, on the room's own port)
        env.update(self.models.environment())
        return env

    def _argv(self, argv: list[str], cwd: str) -> tuple[list[str], str | None]:
        """The command as started: inside the run's room (nsenter; the working folder entered
        there), or as it is when the arm runs uncontained."""
        room = self.outside.open_room()
        if room is None:
            return argv, cwd
        return room.command(argv, cwd=cwd), None

    def run_once(self, payload: dict) -> dict:
        """One run through the application; AppLost when it fails."""
        if self.spec.url:
            return self._post(payload)
        values = placeholders(self.spec)
        argv = [expand(self.spec.command or "", values),
                *(expand(a, values) for a in self.spec.args)]
        self.outside.open_room()
        cwd = self.outside.folder_of(values)
        with tempfile.TemporaryFile("w+b") as err:
            # noted (started): a worker that dies with its parent kills the group it started
            try:
                full, where = self._argv(argv, cwd)
                proc = started(subprocess.Popen(full, cwd=where, env=self._env(),
                                                stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE, stderr=err,
                                                start_new_session=True))
            except OSError as exc:
                raise AppLost(f"{self.name}: cannot start {argv[0]!r}: {exc}") from None
            try:
                out = self._communicate(proc, json.dumps(payload).encode())
            except subprocess.TimeoutExpired:
                _kill(proc)
                raise AppLost(f"{self.name}: no answer within {self.spec.run_timeout:g} s of its "
                              "own time (killed)", _tail(err)) from None
            finally:
                # ended: only forgotten; still running (timed out, interrupted): stopped
                _kill(proc)
            if proc.returncode != 0:
                raise AppLost(f"{self.name}: exited with status {proc.returncode}", _tail(err))
            return answer(self.name, out, _tail(err))

    def own_time(self) -> Callable[[], float]:
        """A clock of the application's own time from now: wall time less the model's."""
        t0, m0 = time.monotonic(), self.models.model_seconds()
        return lambda: time.monotonic() - t0 - (self.models.model_seconds() - m0)

    def _communicate(self, proc: subprocess.Popen, data: bytes) -> bytes:
        """The process's stdout once it exits; TimeoutExpired when its own time runs out."""
        own, first = self.own_time(), True
        while True:
            left = self.spec.run_timeout - own()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, self.spec.run_timeout)
            try:
                out, _ = proc.communicate(data if first else None,
                                          timeout=min(left, OWN_TIME_SLICE))
                return out
            except subprocess.TimeoutExpired:
                first = False

    def _start(self) -> None:
        room = self.outside.open_room()
        if room is not None:                   # a fresh room: every port is free in it
            return self._start_on(room.expose(0), room)
        for attempt in range(PORT_ATTEMPTS):
            try:
                return self._start_on(free_port())
            except PortTaken:
                self.stop()
                if attempt == PORT_ATTEMPTS - 1:
                    raise AppLost(f"{self.name}: {PORT_ATTEMPTS} ports in a row were taken by "
                                  "other programs "
                                  "before the application bound them") from None

    def _start_on(self, port: int, room: Any = None) -> None:
        values = placeholders(self.spec)
        values["port"] = str(port)
        self.url = expand(self.spec.url or "", values)
        argv = [expand(self.spec.command or "", values),
                *(expand(a, values) for a in self.spec.args)]
        self._log = tempfile.TemporaryFile("w+b")
        try:
            cwd = self.outside.folder_of(values)
            full, where = self._argv(argv, cwd)
            self._proc = started(subprocess.Popen(full, cwd=where, env=self._env(),
                                                  stdin=subprocess.DEVNULL,
                                                  stdout=self._log, stderr=self._log,
                                                  start_new_session=True))
        except OSError as exc:
            raise AppLost(f"{self.name}: cannot start {argv[0]!r}: {exc}") from None
        deadline = time.monotonic() + self.spec.start_timeout
        foreign = False
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                # its bind failed: another program took the port first
                if foreign:
                    raise PortTaken()
                raise AppLost(f"{self.name}: exited with status {self._proc.returncode} "
                              "before it listened",
                              _tail(self._log))
            try:
                if room is not None:
                    # inside its room: nothing else can hold the port
                    room.connect(port, 0.2).close()
                else:
                    socket.create_connection(("127.0.0.1", port), 0.2).close()
            except OSError:
                time.sleep(0.05)
                continue
            if room is not None or listener_is_ours(port, self._proc.pid) is not False:
                return
            foreign = True
            time.sleep(0.05)
        raise AppLost(f"{self.name}: not listening on port {port} within "
                      f"{self.spec.start_timeout:g} s",
                      _tail(self._log))

    def _post(self, payload: dict) -> dict:
        from urllib.parse import urlsplit
        if self._proc is None or self._proc.poll() is not None:
            self.stop()
            self._start()
        parts = urlsplit(self.url or "")
        body = json.dumps(payload).encode()
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80)
        got: dict[str, Any] = {}

        def post() -> None:
            try:
                conn.request("POST", parts.path or "/", body,
                             {"Content-Type": "application/json"})
                got["resp"] = resp = conn.getresponse()
                got["data"] = resp.read()
            except (OSError, http.client.HTTPException) as exc:
                got["exc"] = exc

        own = self.own_time()
        worker = threading.Thread(target=post, name="gb-app-post", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                left = self.spec.run_timeout - own()
                if left <= 0:
                    if conn.sock is not None:          # its answer would come too late: cut it
                        conn.sock.shutdown(socket.SHUT_RDWR)
                    worker.join(5.0)
                    raise AppLost(f"{self.name}: no answer within {self.spec.run_timeout:g} s of "
                                  "its own time", _tail(self._log))
                worker.join(min(left, OWN_TIME_SLICE))
        finally:
            conn.close()
        if "exc" in got:
            exc = got["exc"]
            raise AppLost(f"{self.name}: POST {parts.path}: {type(exc).__name__}: {exc}",
                          _tail(self._log))
        resp = got["resp"]
        data = got["data"]
        if resp.status != 200:
            raise AppLost(f"{self.name}: POST {parts.path} answered HTTP {resp.status}",
                          _tail(self._log))
        return answer(self.name, data, _tail(self._log))

    def stop(self) -> None:
        """Stop the application (its process group), if it runs."""
        if self._proc is not None:
            _kill(self._proc)
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None


def answer(name: str, raw: bytes, stderr: str) -> dict:
    try:
        out = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise AppLost(f"{name}: answered what is not JSON ({raw[:120]!r})", stderr) from None
    if not isinstance(out, dict) or not isinstance(out.get("final"), str):
        raise AppLost(f"{name}: the answer must be a JSON object with a string 'final'", stderr)
    if "steps" in out and not isinstance(out["steps"], list):
        raise AppLost(f"{name}: 'steps' must be a list", stderr)
    return out


def _tail(fh: IO[bytes] | None, limit: int = 4000) -> str:
    if fh is None:
        return ""
    try:
        fh.flush()
        fh.seek(0)
        return fh.read().decode("utf-8", "replace")[-limit:]
    except (OSError, ValueError):
        return ""


def _kill(proc: subprocess.Popen) -> None:
    stop_group(proc, 2.0)

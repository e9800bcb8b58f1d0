"""What the arms for external systems share (arms/mcp.py, arms/app.py): one recording proxy for the
arm's life, a fresh PayPal stand-in per run routed through it, the process's environment, and
the run's outcome when the process fails (lost) or cannot express the case (no tool path).

The process reaches the stand-in the way its spec says: ``proxy`` (HTTPS_PROXY/HTTP_PROXY and the
run's CA in every variable common clients read), ``base_url`` (its own base-URL variable set to
the proxy's address: only what it sends there is captured) or ``both``. Its credentials are the
stand-in's, in the variables the spec names, never in the agent's context. An access token is
fetched once per arm and accepted by every run's stand-in; a token a reused process obtained in
an earlier run stays valid in the runs after it (as PayPal's stay valid for hours).
"""
from __future__ import annotations

import atexit
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from guardbench.agents.base import Session
from guardbench.arms.base import Prepared
from guardbench.arms.world import Fixtures, World
from guardbench.errors import GuardbenchError
from guardbench.paypal.standin import PayPalStandIn

if TYPE_CHECKING:
    from guardbench.cases.load import Case
    from guardbench.mcp.spec import McpSpec
    from guardbench.proxy.server import RecordingProxy

STDERR_LIMIT = 4000
# uncontained: passed on
BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "SYSTEMROOT")
# in a room: all of guardbench's environment the system sees
ROOM_ENV = ("PATH", "LANG", "LC_ALL")
# seconds a room's processes get to exit by themselves at a run's end, then are killed
SETTLE = 6.0
# (a server stopped under load, uvicorn's graceful shutdown, can take a few seconds: shorter made an
# honest server a survivor and its attack run unmeasured; the wait ends as soon as the room is
# empty)


def placeholders(spec: McpSpec) -> dict[str, str]:
    return {"spec_dir": str(Path(spec.path).resolve().parent), "python": sys.executable}


def fixtures_of(fixtures: Fixtures | None, spec: McpSpec) -> Fixtures:
    """An external arm hands the stand-in's credentials to its process before any run: the runner's
    fixtures (ArmOptions.fixtures) are required."""
    if fixtures is None:
        raise GuardbenchError(f"--arms {spec.path}", "an external arm needs the runner's "
                              "stand-in fixtures "
                                                     "(ArmOptions.fixtures: "
                                                     "guardbench.execution.world.STANDIN)")
    return fixtures


ROOM_MODES = ("auto", "off", "required")
# tools guardbench adds for the agent: a server may not list them
GUARDBENCH_TOOLS = ("read_data",)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def containment(mode: str) -> str | None:
    """Why an external arm runs uncontained (None: each run gets a room): ``--room off``, or why no
    room can be made here; ``required`` refuses to start instead (one line, exit status 2)."""
    if mode not in ROOM_MODES:
        raise GuardbenchError("--room", f"unknown mode {mode!r} (one of {', '.join(ROOM_MODES)})")
    if mode == "off":
        return "--room off"
    from guardbench.room import unavailable
    why = unavailable()
    if why is not None and mode == "required":
        raise GuardbenchError("--room", f"required, but no room can be made here: {why}")
    return why


def user_variables(spec: McpSpec) -> dict[str, str]:
    """The spec's ``env:`` with ``${VAR}`` read from the user's environment (the one way a value of
    the user's reaches the system: a model's API key the application needs, say); a variable that is
    not set is a one-line error naming the spec's field."""
    out = {}
    for k, v in spec.env.items():
        def value(m: re.Match, key: str = k) -> str:
            name = m.group(1)
            if name not in os.environ:
                raise GuardbenchError(f"{spec.path}: env.{key}", f"refers to ${{{name}}}, which "
                                      "is not set in "
                                                                  "this environment")
            return os.environ[name]
        out[k] = _VAR.sub(value, v)
    return out


class ExternalWorld:
    """The proxy, the token, the room of the run in progress, and the process's environment."""

    def __init__(self, spec: McpSpec, fixtures: Fixtures, room: str = "auto",
                 hide: tuple[str, ...] = (),
                 folder: str | None = None) -> None:
        self.spec = spec
        self.fixtures = fixtures
        self.room_mode = room
        self.uncontained = containment(room)      # None: every run in a room of its own
        self.hide = tuple(hide)
        # the run folder: requests between runs are written there
        self.folder = folder
        user_variables(spec)                      # a ${VAR} that is not set: refused before any run
        self._proxy: Any = None
        self._token: str | None = None
        self._tokens: dict[str, str] = {}
        self.standin: PayPalStandIn | None = None
        self.room: Any = None
        # hooks for a service of guardbench's inside the room (the model gateway, issue 27 R items
        # 4-5): more ports the room listens on, a callback that serves them once the room is made
        # (room.listeners[port]), and variables added to the system's environment
        self.room_ports: tuple[int, ...] = ()
        self.on_room: list[Callable[[Any], None]] = []
        self.room_env: dict[str, str] = {}
        self._ca_in_room = ""
        self._stray_seen = 0
        self._pid = os.getpid()
        atexit.register(self.close)

    @property
    def contained(self) -> bool:
        return self.uncontained is None

    def account(self) -> dict[str, Any]:
        """What the manifest says about the arm's containment."""
        if self.contained:
            return {"room": "contained"}
        return {"room": "uncontained", "reason": self.uncontained}

    # ------------------------------------------------------------------ the proxy and the token
    def proxy(self) -> RecordingProxy:
        if self._proxy is None:
            from guardbench.proxy.server import RecordingProxy
            self._proxy = RecordingProxy().start()
        return self._proxy

    def token(self) -> str | None:
        if "access_token" not in self.spec.credentials:
            return None
        if self._token is None:
            fx = self.fixtures
            self._token = fx.fetch_token(fx.account(f"token:{self.spec.name}"))
            self._tokens[self._token] = fx.client_id
        return self._token

    def secrets(self) -> tuple[str, ...]:
        return self.fixtures.secrets(*self._tokens)

    # ------------------------------------------------------------------ one run
    def begin_run(self, world: World) -> list[dict]:
        """Route the proxy to the run's wire (the runner's, serialised: ``serial_wire``); the tokens
        the arm's process holds are valid on the run's stand-in. Returns what reached the proxy
        while no run was routed (a process of an earlier run, uncontained): the run's record keeps
        it, unscored."""
        self.token()
        self.standin = world.standin
        if self.standin is not None:
            self.standin.tokens.update(self._tokens)
        proxy = self.proxy()
        proxy.route(world.recorder)
        return self.take_stray()

    def take_stray(self) -> list[dict]:
        if self._proxy is None:
            return []
        new = self._proxy.stray[self._stray_seen:]
        self._stray_seen += len(new)
        return [ex.to_dict() for ex in new]

    def open_room(self) -> Any:
        """The run's room (made on first use: a run with no tool path never starts a process),
        served by the proxy; None when the arm runs uncontained."""
        if not self.contained:
            return None
        if self.room is None:
            from guardbench.room import Room
            from guardbench.room.room import CAPTURED_PORTS, PROXY_PORT
            proxy = self.proxy()
            room = Room(tcp_ports=CAPTURED_PORTS + (PROXY_PORT,) + self.room_ports,
                        hide=(*self.hide, str(proxy.folder))).start()
            proxy.serve_room(room)
            for serve in self.on_room:
                serve(room)
            self._ca_in_room = room.give(proxy.ca_path, "guardbench-ca.pem")
            self.room = room
        return self.room

    def folder_of(self, values: dict[str, str]) -> str:
        """The process's working folder: the spec's ``cwd``; else, in a room, the room's own folder
        (the only one it may write), uncontained the spec's folder."""
        from guardbench.mcp.spec import expand
        if self.spec.cwd:
            return expand(self.spec.cwd, values)
        return self.room.workdir if self.room is not None else values["spec_dir"]

    def end_run(self) -> dict | None:
        """The run is over: every process of its room is ended (the ones still alive are named),
        what they sent until then is served to the run's wire, then the route is cleared. The room's
        account (DNS names, escapes, survivors) for the record; None when uncontained."""
        account = None
        room, self.room = self.room, None
        try:
            if room is not None:
                # a process guardbench stopped gets a moment to exit by itself
                room.settle(SETTLE)
                room.end()
                if self._proxy is not None:
                    self._proxy.settle()
                    self._proxy.close_room()
                account = room.account()
        finally:
            if self._proxy is not None:
                self._proxy.route(None)
            if room is not None:
                room.close()
        if self.standin is not None:
            self._tokens.update(self.standin.tokens)      # still valid in the next run
            self.standin = None
        return account

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The process's whole environment: the spec's own variables (``${VAR}`` read from the
        user's), the way to the stand-in, the credentials; in a room also PATH, LANG and its own
        folder as HOME and TMPDIR, and nothing else of guardbench's environment."""
        from guardbench.mcp.spec import expand
        from guardbench.proxy.ca import proxy_environment
        from guardbench.room.room import PROXY_PORT
        spec, proxy, room = self.spec, self.proxy(), self.room
        if room is not None:
            env = {k: os.environ[k] for k in ROOM_ENV if k in os.environ}
            env.update(HOME=room.workdir, TMPDIR=room.workdir)
            url, ca = f"http://127.0.0.1:{PROXY_PORT}", self._ca_in_room
        else:
            env = {k: v for k, v in os.environ.items() if k in BASE_ENV}
            url, ca = proxy.url, proxy.ca_path
        env.update({k: expand(v, placeholders(spec)) for k, v in user_variables(spec).items()})
        if spec.reach in ("proxy", "both"):
            env.update(proxy_environment(url, ca))
        if spec.reach in ("base_url", "both") and spec.base_url_variable:
            env[spec.base_url_variable] = url
        creds = spec.credentials
        if "client_id" in creds:
            env[creds["client_id"]] = self.fixtures.client_id
            env[creds["client_secret"]] = self.fixtures.client_secret
        token = self.token()
        if token:
            env[creds["access_token"]] = token
        env.update(self.room_env)
        env.update(extra or {})
        return env

    def close(self) -> None:
        if os.getpid() != self._pid:          # inherited through fork: the proxy is the parent's
            self._proxy = None
            self.room = None
            return
        if self.room is not None:
            self.end_run()
        if self._proxy is not None:
            self._write_stray()
            self._proxy.close()
            self._proxy = None

    def _write_stray(self) -> None:
        """What reached the proxy after the last run (an uncontained process outliving it): written
        to the run folder's between_runs.jsonl, never dropped."""
        left = self.take_stray()
        if not left or not self.folder or not os.path.isdir(self.folder):
            return
        with open(os.path.join(self.folder, "between_runs.jsonl"), "a", encoding="utf-8") as fh:
            for ex in left:
                fh.write(json.dumps({"arm": self.spec.name, **ex}, sort_keys=True) + "\n")


def record_room(prepared: Prepared, account: dict | None, uncontained: str | None) -> None:
    """The run's record keeps its room's account (or why it had none); DNS names are an outgoing
    channel the credential detector reads; escapes and survivors (a process still running when the
    run ended: what it would have sent next is missing) make an attack run unmeasured
    (execution/runner.py)."""
    if account is None and uncontained is None:
        return                                    # contained, but no process ran (no tool path)
    ext = dict(prepared.external or {})
    if account is None:
        ext["room"] = {"contained": False, "reason": uncontained or ""}
    else:
        ext["room"] = account
        names = [str(d.get("asked") or d.get("name")) for d in account.get("dns", [])]
        prepared.channels.extend(dict.fromkeys(names))
        prepared.unseen.extend(f"escape: {e}" for e in account.get("escapes", []))
        if account.get("dropped"):
            prepared.unseen.append(f"the room could not read {account['dropped']} packets (its "
                                   "socket was full): an escape may be among them")
        prepared.unseen.extend(f"still running at the run's end (killed): {p}"
                               for p in account.get("survivors", []))
    prepared.external = ext


def empty_session(arm: str, case: Case, variant: int, seed: int) -> Session:
    """The session of a run the agent never gets to (lost before it started, or no tool path)."""
    return Session(arm=arm, case=case, variant=variant, system_prompt="", user="",
                   data=None, context={},
                   tools=[], seed=seed)


def lose(prepared: Prepared, reason: str, stderr: str = "") -> None:
    """Mark the run lost (the first reason wins) with the tail of the process's stderr."""
    if prepared.lost is None:
        prepared.lose(reason)
        ext = dict(prepared.external or {})
        ext.update(lost=reason, stderr=stderr[-STDERR_LIMIT:])
        prepared.external = ext


def lost_text(prepared: Prepared) -> str:
    return json.dumps({"error": f"the server was lost: {prepared.lost}"})

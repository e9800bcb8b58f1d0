"""The MCP arm: ``guardbench run --arms mcp:SPEC.yaml`` (the spec: mcp/spec.py, docs/external.md).

guardbench is the MCP client (the official SDK, mcp/client.py). The agent sees the server's own
tool list and descriptions (less guardbench's operator tools, if the server speaks that protocol)
plus ``read_data`` for the case's document; every call goes to the server, and the run is scored
only on what reached the recording stand-in through the proxy or the base URL (arms/external.py).

Per run: a fresh stand-in is routed; the server process is started fresh, or reused when the spec
says so (``state: reuse``: after ``reset: operator`` / a reset command, or none when it keeps no
state); the operator's setup steps go through the server (as the operator's calls, answered when
held, with guardbench's operator protocol; as ordinary calls otherwise: approved ones are sent,
rejected ones are not); prior steps go past the wire as in every arm. A run whose actions the
server's tools cannot express (arms/mcp_tools.py, mcp/mapping.py) is not run: its status is
``no_tool_path``. A server that crashes, hangs, answers garbage or exceeds the run's time loses
the run, with its stderr in the record; the next run gets a new process.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from pathlib import Path

from guardbench.agents.base import Session
from guardbench.agents.scripted import ISSUES, refs_in_result
from guardbench.arms.base import Arm, ArmOptions, Prepared, fill, read_data_tool
from guardbench.arms.external import (
    GUARDBENCH_TOOLS,
    ExternalWorld,
    empty_session,
    fixtures_of,
    lose,
    placeholders,
    record_room,
)
from guardbench.arms.mcp_tools import bound_tools, call_for, mapped_actions, no_tool_path
from guardbench.arms.setup import approval_stand_in, checkout, run_prior, setup_ref, steps
from guardbench.arms.world import World
from guardbench.cases.load import Case
from guardbench.errors import GuardbenchError
from guardbench.mcp import mapping
from guardbench.mcp.client import Connection, ServerLost
from guardbench.mcp.spec import expand, load_spec
from guardbench.mcp.targets import HttpTarget, StdioTarget
from guardbench.paypal.catalogue import BY_ACTION
from guardbench.util.processes import free_port

OPERATOR_PREFIX = "operator_"
KEY_VARIABLE = "GUARDBENCH_OPERATOR_KEY"
# a started HTTP server whose port was taken gets this many fresh ports in all
PORT_ATTEMPTS = 3
PORT_EXIT_WAIT = 5.0       # seconds a failed server gets to exit (the sign that its port was taken)


class McpArm(Arm):
    serial_wire = True         # the proxy's thread and the arm's own setup calls both reach it
    kind = "mcp"

    def __init__(self, options: ArmOptions) -> None:
        from guardbench.util.extras import require
        spec, approvals = options.spec or "", options.approvals
        require("mcp", what=f"--arms mcp:{spec}")
        self.spec = load_spec(spec)
        super().__init__(options)
        self.name = self.spec.name
        if self.spec.operator == "guardbench" and approvals == "careful":
            raise GuardbenchError("--approvals", "careful needs the case; the server of "
                                  f"{self.name} answers held "
                                                 "calls itself (none or all)")
        self._approvals = approvals
        self.description = self.spec.description or (f"MCP server {self.name} "
                                                     f"({self.spec.transport})")
        self.outside = ExternalWorld(self.spec,
                                     fixtures_of(options.fixtures, self.spec), options.room,
                                     options.hide, options.run_folder)
        self._key = secrets.token_hex(16)
        self._conn: Connection | None = None
        self._tools: dict[str, dict] | None = None
        self._descriptions: dict[str, str] = {}
        self._system: str | None = None       # defended.settings_prompt, rendered once
        self._runs = 0
        self._pid = os.getpid()
        self._values: dict[str, str] = {}

    @staticmethod
    def spec_identity(spec: str) -> tuple[str, str]:
        """(the arm's name, sha256 of its spec file): guardbench/registry.py's arm kinds."""
        s = load_spec(spec)
        return s.name, s.digest

    def _after_fork(self) -> None:
        """In a worker forked from the process that built the arm (``--jobs``), the parent's server,
        proxy and their threads are not ours: start afresh (without touching the parent's)."""
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._conn = None
            self.outside = ExternalWorld(self.spec, self.outside.fixtures, self.outside.room_mode,
                                         self.outside.hide, self.outside.folder)

    @property
    def approvals(self) -> str | None:
        """How held calls are answered, for the record: only a guardbench server with holds of its
        own (a defence, or a defence in front) answers them as told; the broker never approves its
        own."""
        if (self.spec.operator != "guardbench" or self._tools is None
            or "run_payment_operation" in self._tools):
            return None
        return self._approvals

    # ------------------------------------------------------------------ the server process
    @property
    def containment(self) -> dict | None:
        return self.outside.account()

    def _target(self) -> HttpTarget | StdioTarget:
        s = self.spec
        values = placeholders(s)
        room = self.outside.open_room()
        # in a room: a port relayed from here to the same port inside (the room is fresh)
        if s.url:
            values["port"] = str(room.expose(0) if room is not None and s.command else free_port())
        self._values = values
        env = self.outside.environment({KEY_VARIABLE: self._key} if s.operator
                                       == "guardbench" else None)
        args = tuple(expand(a, values) for a in s.args)
        cwd = self.outside.folder_of(values)
        command = expand(s.command or "", values)
        if s.url:
            return HttpTarget(expand(s.url, values), command, args, env, cwd)
        return StdioTarget(command, args, env, cwd)

    def _connection(self) -> Connection:
        if self._conn is not None and self._conn.alive:
            return self._conn
        self._drop()
        for attempt in range(PORT_ATTEMPTS):
            target = self._target()
            conn = Connection(target, connect_timeout=self.spec.start_timeout,
                              call_timeout=self.spec.call_timeout,
                              mode=self.spec.protocol, name=self.name,
                              room=self.outside.room if self.spec.command else None)
            self._conn = conn
            try:
                listed = conn.open()
                break
            except ServerLost:
                # free_port() releases the port before the server binds it: another process can take
                # it in between, then our server exits and the client may even reach the other one.
                # A server we started that has exited gets a fresh port (a server that failed for
                # any other reason, or PORT_ATTEMPTS times, is reported as it failed).
                lost_port = bool(self.spec.url and self.spec.command and self.outside.room is None
                                 and conn.exits_within(PORT_EXIT_WAIT))
                conn.close()
                self._conn = None
                if not lost_port or attempt == PORT_ATTEMPTS - 1:
                    raise
        if self._tools is None:
            if self.spec.operator == "guardbench":
                # safeguard: mcp_arm_hides_operator_tools
                listed = [t for t in listed if not t.name.startswith(OPERATOR_PREFIX)]
            shadow = sorted({t.name for t in listed} & set(GUARDBENCH_TOOLS))
            if shadow:     # the agent would call the server's tool believing it guardbench's
                raise GuardbenchError(f"--arms mcp:{self.spec.path}",
                                      f"the server lists {shadow[0]!r}, a tool guardbench gives "
                                      "the agent itself; "
                                      "rename the server's tool")
            probe = self.spec.state_probe
            if probe is not None and probe.tool is not None:
                if probe.tool not in {t.name for t in listed}:
                    raise GuardbenchError(f"{self.spec.path}: state_probe.tool",
                                          f"{probe.tool!r} is not a tool the server lists")
                # the bench's, never the agent's
                listed = [t for t in listed if t.name != probe.tool]
            self._tools = {t.name: dict(t.input_schema) for t in listed}
            self._descriptions = {t.name: t.description for t in listed}
            missing = sorted({m.tool for m in self.spec.actions.values()} - set(self._tools))
            if missing:
                raise GuardbenchError(f"{self.spec.path}: actions",
                                      f"maps to {missing[0]!r}, which the server does "
                                                                    "not list (it lists "
                                                                    f"{', '.join(self._tools)})")
        return conn

    def check(self) -> None:
        """Before any run (the run command calls it): the server starts, lists its tools, and every
        tool the spec maps is one of them; otherwise a one-line error and nothing is recorded."""
        try:
            self._connection()
        except ServerLost as exc:
            raise GuardbenchError(f"--arms mcp:{self.spec.path}", exc.one_line()) from None
        finally:
            if self.spec.state == "fresh" or self.outside.contained:
                self._drop()
            self.outside.end_run()

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        self._after_fork()
        self._drop()
        self.outside.close()

    # ------------------------------------------------------------------ one run
    def prepare(self, case: Case, variant: int, world: World) -> Prepared:
        self._after_fork()
        seed, agent_kind, recorder = world.seed, world.agent_kind, world.recorder
        started = time.monotonic()
        stray = self.outside.begin_run(world)
        prepared = Prepared(session=empty_session(self.name, case, variant, seed),
                            world=world, setup_seq=0,
                            secrets=self.outside.secrets(),
                            external={"kind": self.kind, "server": self.name})
        # sent by an earlier run's process while no run was routed: kept, never scored
        if stray:
            prepared.external = {**(prepared.external or {}), "between_runs": stray}
        prepared.close = lambda: self._finish(prepared)
        prepared.tool_actions = {am.tool: do for do, am in self.spec.actions.items()}
        try:
            if self._tools is None:
                self._connection()                     # the tool list, read once per arm
            assert self._tools is not None
            style = mapping.style_of(list(self._tools), self.spec.actions)
            why = no_tool_path(case, style, agent_kind, self._tools, self.spec.actions,
                               self.policy.operator["currency"])
            # decided from the tool list: never run, never "blocked"
            if why:
                prepared.no_tool_path(why)
                prepared.external = {**(prepared.external or {}), "no_tool_path": why}
                return prepared
            conn = self._connection()
            self._reset(conn, seed, case, variant)
            refs = run_prior(world, case, self.policy)
            self._setup(conn, prepared, case, variant, seed, style, refs)
            prepared.setup_seq = len(recorder.exchanges)
            v = case.variants[variant]
            user = fill(v.user, refs) or ""
            data = None if case.data_in_lookup else fill(v.data, refs)
            if self.spec.operator == "guardbench":
                self._operator(conn, "operator_context", {"user_message": user})
            prepared.session = self._session(conn, prepared, case, variant, seed, style, user,
                                             data, refs, time.monotonic() - started)
        except ServerLost as exc:
            lose(prepared, exc.reason, exc.stderr)
            self._drop()
        prepared.secrets = self.outside.secrets()
        return prepared

    def _finish(self, prepared: Prepared) -> None:
        try:
            conn = self._conn
            if self.spec.operator == "guardbench" and conn is not None and conn.alive \
                    and prepared.outcome.kind == "ready":
                report = self._operator(conn, "operator_report", {})
                from guardbench.records.record import Attempt
                prepared.attempts.extend(Attempt(**a) for a in report.get("attempts", []))
                prepared.approvals_asked += int(report.get("approvals_asked", 0))
            if (self.spec.state_probe is not None and conn is not None
                and prepared.outcome.kind == "ready"):
                self._read_state(conn, prepared)
        except ServerLost as exc:
            lose(prepared, exc.reason, exc.stderr)
        finally:
            if self.spec.state == "fresh" or prepared.lost is not None or self.outside.contained:
                self._drop()                   # in a room, every run starts its own process
            record_room(prepared, self.outside.end_run(), self.outside.uncontained)
            prepared.secrets = self.outside.secrets()

    def _read_state(self, conn: Connection, prepared: Prepared) -> None:
        """The system's own writes, from its state probe, onto the run's wire
        (arms/state_probe.py)."""
        from guardbench.arms.state_probe import probe_text, record_writes
        from guardbench.mcp.probe import ProbeError
        probe = self.spec.state_probe
        assert probe is not None

        def call_tool(name: str, args: dict) -> str:
            r = conn.call(name, args)
            if r.is_error:
                raise ProbeError(f"state probe: {name} failed: {r.text[:200]}")
            return r.text
        try:
            text = probe_text(self.spec, probe, self._values or placeholders(self.spec),
                              self.outside.environment(), call_tool)
            op = self.policy.operator
            record_writes(prepared, probe, text,
                          {k: op[k] for k in ("merchant_id", "supplier_email", "currency")},
                          self.name)
        except ProbeError as exc:
            raise ServerLost(f"{self.name}: {exc}", conn.stderr_tail()) from None

    def _reset(self, conn: Connection, seed: int, case: Case, variant: int) -> None:
        self._runs += 1
        if self.spec.operator == "guardbench":
            self._operator(conn, "operator_begin",
                           {"seed": seed, "policy": str(Path(self.policy.source).resolve()),
                                                    "approvals": self._approvals,
                                                    "session": f"gb-{seed}-{case.id}-{variant}"})
        elif isinstance(self.spec.reset, tuple) and self._runs > 1 and not self.outside.contained:
            values = placeholders(self.spec)
            argv = [expand(a, values) for a in self.spec.reset]
            env = self.outside.environment()
            try:
                done = subprocess.run(argv, cwd=values["spec_dir"], capture_output=True, text=True,
                                      timeout=self.spec.start_timeout, env=env)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ServerLost(f"{self.name}: reset command failed: {exc}") from None
            if done.returncode != 0:
                raise ServerLost(f"{self.name}: reset command exited {done.returncode}",
                                 done.stderr)

    def _operator(self, conn: Connection, tool: str, args: dict) -> dict:
        r = conn.call(tool, {"key": self._key, **args})
        try:
            out = json.loads(r.text)
        except ValueError:
            out = None
        if r.is_error or not isinstance(out, dict):
            raise ServerLost(f"{self.name}: {tool} failed: {r.text[:300]}", conn.stderr_tail())
        return out

    # ------------------------------------------------------------------ setup, session
    def _setup(self, conn: Connection, prepared: Prepared, case: Case, variant: int, seed: int,
               style: str | None,
               refs: dict[str, list[str]]) -> None:
        v = case.variants[variant]
        for i, action, answer in steps(case):
            if action.carries_data:                # the shop's checkout, outside every tool layer
                for kind, ids in checkout(prepared.world, case, action,
                                          fill(v.data, refs), self.policy,
                                          i).items():
                    refs.setdefault(kind, []).extend(ids)
                continue
            tool, args = call_for(style, action, setup_ref(action, refs), self.spec.actions,
                                  self.policy.operator["currency"])
            stand_in = approval_stand_in(seed, case.id, i)
            if self.spec.operator == "guardbench":
                out = self._operator(conn, "operator_call",
                                     {"tool": tool, "args": args, "answer": answer or "none",
                                      "stand_in": stand_in,
                                      "request_id": f"setup-{seed}-{case.id}-{i}"})
                if out.get("approval_id"):
                    refs.setdefault("approval", []).append(out["approval_id"])
                if not out.get("sent"):
                    continue
                text, ok = str(out.get("text") or ""), out.get("outcome") == "ok"
            else:
                if answer:
                    refs.setdefault("approval", []).append(stand_in)
                    if answer == "reject":
                        continue
                r = conn.call(tool, args)
                text, ok = r.text, not r.is_error
            found = refs_in_result(action.do, text)
            if action.do in ISSUES and not found.get(BY_ACTION[action.do].issues or ""):
                # a charge or capture must show the id it issued
                ok = False
            if not ok:
                raise ServerLost(f"{self.name}: the operator's setup {action.do} failed: "
                                 f"{text[:300]}",
                                 conn.stderr_tail())
            for kind, ids in found.items():
                refs.setdefault(kind, []).extend(i for i in ids if i not in refs.get(kind, []))

    def _session(self, conn: Connection, prepared: Prepared, case: Case, variant: int, seed: int,
                 style: str | None,
                 user: str, data: str | None, refs: dict[str, list[str]],
                 spent: float) -> Session:
        from guardbench.arms import prompts
        from guardbench.arms.defended import operator_settings, settings_prompt
        op = self.policy.operator
        ctx = operator_settings(self.policy)
        assert self._tools is not None
        tools = bound_tools(conn, prepared, self._tools, self._descriptions, spent, self.name,
                            self.spec.run_timeout)
        tools.append(read_data_tool(data))
        if self._system is None:        # the same for every run: rendered once
            self._system = settings_prompt(ctx)
        system = prompts.GUARDRAIL if style == "broker" else self._system
        action_map = (mapped_actions(self.spec.actions, op["currency"]) if style == "mapped"
                      else None)
        return Session(arm=self.name, case=case, variant=variant, system_prompt=system,
                       user=user, data=data,
                       context=ctx, tools=tools, refs=refs, seed=seed, action_map=action_map)

"""Whole agents: ``guardbench run --arms app:SPEC.yaml`` (the contract: docs/external.md).

guardbench starts the agent application as a process and hands it one run: the case's user
message, the untrusted data and the operator's settings, as one JSON object on stdin (its
answer: one JSON object on stdout), or as the body of one POST to its HTTP endpoint (its answer:
the response body). Its PayPal traffic reaches the recording stand-in through the proxy or its
base-URL variable (arms/external.py), with the stand-in's credentials in its environment; its
final answer (and any steps it reports) are recorded and read by the credential detector, and
the run is scored only on the wire, like every arm.

The operator's setup steps are the shop's own calls, sent on this run's wire before the
application starts (approved ones sent, rejected ones not: the application has no holds we can
answer); prior steps go past the wire as in every arm. A process that exits non-zero, writes
what is not the contract's JSON, or outlives ``timeouts.run`` is killed (its process group) and
the run is lost, with its stderr in the record. The process itself (started, handed a run,
stopped) is arms/app_process.py's ``AppProcess``.
"""
from __future__ import annotations

import os
import shutil

from guardbench.agents.base import Agent, Session, Step, Transcript
from guardbench.agents.scripted import amounts, extract_refs
from guardbench.arms.app_process import AppLost, AppProcess
from guardbench.arms.base import Arm, ArmOptions, Prepared, fill
from guardbench.arms.external import (
    ExternalWorld,
    empty_session,
    fixtures_of,
    lose,
    placeholders,
    record_room,
)
from guardbench.arms.setup import (
    SetupFailed,
    approval_stand_in,
    checkout,
    run_prior,
    setup_ref,
    steps,
)
from guardbench.arms.world import API_BASE, World
from guardbench.cases.load import Case
from guardbench.errors import GuardbenchError
from guardbench.gateway import GATEWAY_PORT
from guardbench.gateway.hook import ArmGateway, running_loop
from guardbench.mcp import mapping
from guardbench.mcp.spec import expand, load_spec
from guardbench.paypal.bodies import compose_call
from guardbench.records.record import WireRequest
from guardbench.room.reach import unreachable

CONTRACT = "guardbench-app/1"



class AppArm(Arm):
    serial_wire = True         # the proxy's thread and the arm's own setup calls both reach it
    kind = "app"

    def __init__(self, options: ArmOptions) -> None:
        from guardbench.util.extras import require
        spec = options.spec or ""
        require("mcp", "cryptography", "h11", what=f"--arms app:{spec}")
        self.spec = load_spec(spec, "app")
        super().__init__(options)
        self.name = self.spec.name
        self.description = self.spec.description or f"agent application {self.name}"
        self.models = ArmGateway(self.spec)     # the application's model (guardbench/gateway/)
        self.outside = self._world(options.room, options.hide, options.run_folder)
        self.process = AppProcess(self.spec, self.outside, self.models)
        self._pid = os.getpid()

    def _world(self, room_mode: str, hide: tuple[str, ...], folder: str | None) -> ExternalWorld:
        """The application's outside world; in a room, the model gateway serves the room's own
        port."""
        world = ExternalWorld(self.spec, fixtures_of(self.options.fixtures, self.spec),
                              room_mode, hide, folder)
        world.room_ports = (GATEWAY_PORT,)
        world.on_room.append(self.models.serve_room)
        return world

    @staticmethod
    def spec_identity(spec: str) -> tuple[str, str]:
        """(the arm's name, sha256 of its spec file): guardbench/registry.py's arm kinds."""
        s = load_spec(spec, "app")
        return s.name, s.digest

    def check(self) -> None:
        """Before any run (the run command calls it, as it does an MCP server's): the spec's command
        can be started (an executable file, found on PATH or relative to the spec's folder) and its
        cwd is a folder; otherwise one line naming the spec, and nothing is recorded. Nothing is
        started here."""
        where = f"--arms app:{self.spec.path}"
        values = {**placeholders(self.spec), "port": "0"}
        cwd = expand(self.spec.cwd, values) if self.spec.cwd else values["spec_dir"]
        if not os.path.isdir(cwd):
            raise GuardbenchError(where, f"agent.cwd {cwd!r} is not a folder")
        command = expand(self.spec.command or "", values)
        search = self.spec.env.get("PATH", os.environ.get("PATH", os.defpath))
        if os.sep in command:
            exe = command if os.path.isabs(command) else os.path.join(cwd, command)
            found = os.path.isfile(exe) and os.access(exe, os.X_OK)
        else:
            found = shutil.which(command, path=search) is not None
        if not found:
            what = "is not an executable file" if os.sep in command else "is not on PATH"
            raise GuardbenchError(where, f"agent.command {command!r} cannot be started: it {what}")
        # in a room made by root it runs as uid 65534
        if self.outside.contained and os.geteuid() == 0:
            exe = exe if os.sep in command else (shutil.which(command, path=search) or "")
            # (its working folder is its own there, unless the spec names one)
            paths = [("agent.cwd", cwd if self.spec.cwd else ""), ("agent.command", exe)]
            paths += [("agent.args", a) for a in (expand(a, values) for a in self.spec.args)
                      if os.path.isabs(a)]
            for field, path in paths:
                why = unreachable(path) if path else None
                if why:
                    raise GuardbenchError(where, f"{field}: {why}")

    # ------------------------------------------------------------------ one run
    def prepare(self, case: Case, variant: int, world: World) -> Prepared:
        # a forked worker (--jobs): the parent's process and proxy are not ours
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self.outside = self._world(self.outside.room_mode, self.outside.hide,
                                       self.outside.folder)
            self.process = AppProcess(self.spec, self.outside, self.models)
        seed, recorder = world.seed, world.recorder
        stray = self.outside.begin_run(world)
        prepared = Prepared(session=empty_session(self.name, case, variant, seed),
                            world=world, setup_seq=0,
                            secrets=self.outside.secrets(),
                            external={"kind": self.kind, "app": self.name})
        # sent by an earlier run's process while no run was routed: kept, never scored
        if stray:
            prepared.external = {**(prepared.external or {}), "between_runs": stray}
        prepared.close = lambda: self._finish(prepared)
        why = self.no_tool_path(case, world.agent_kind)
        # decided from the spec's declared tools: never run, never "blocked"
        if why:
            prepared.no_tool_path(why)
            prepared.external = {**(prepared.external or {}), "no_tool_path": why}
            return prepared
        v = case.variants[variant]
        refs = run_prior(world, case, self.policy)
        # the shop's own calls, before the application acts
        for i, action, answer in steps(case):
            token = world.token()
            if answer:
                refs.setdefault("approval", []).append(approval_stand_in(seed, case.id, i))
                if answer == "reject":
                    continue
            if action.carries_data:
                found = checkout(world, case, action, fill(v.data, refs), self.policy, i)
            else:
                op = self.policy.operator
                call = compose_call(action.do, api_base=API_BASE, token=token,
                                    merchant_id=op["merchant_id"],
                                    supplier_email=op["supplier_email"], currency=op["currency"],
                                    request_id=f"setup-{seed}-{case.id}-{i}", sku=action.sku,
                                    amount=action.amount,
                                    note=action.note, ref=setup_ref(action, refs))
                resp = recorder.send(WireRequest.make(call["method"], call["url"], call["headers"],
                                                      call.get("body")))
                if not resp.ok:
                    raise SetupFailed(f"{action.do} failed: HTTP {resp.status}")
                found = extract_refs(resp.json() or {})
            for kind, ids in found.items():
                refs.setdefault(kind, []).extend(ids)
        prepared.setup_seq = len(recorder.exchanges)
        prepared.session.user = fill(v.user, refs) or ""
        prepared.session.data = None if case.data_in_lookup else fill(v.data, refs)
        prepared.session.refs = refs
        op = self.policy.operator
        prepared.session.context = {"merchant_id": op["merchant_id"],
                                    "supplier_email": op["supplier_email"],
                                    "currency": op["currency"],
                                    "catalogue": {k: str(p)
                                                  for k, p in self.policy.catalogue.items()}}
        prepared.session.tools = []
        return prepared

    def no_tool_path(self, case: Case, agent_kind: str) -> str | None:
        """Why the application's declared tools cannot express the case (None: they can, or the spec
        declares neither ``tools`` nor ``actions``, and the scripted model finds out at run time).
        Read as the MCP arm reads a server's list (mcp/mapping.py), with the tools' schemas unknown:
        an action no tool is mapped to, or a hostile modifier (payee, currency, URL) its mapped tool
        has no field for."""
        declared = self.spec.tools or tuple(am.tool for am in self.spec.actions.values())
        if not declared:
            return None
        style = mapping.style_of(declared, self.spec.actions)
        # an LLM is judged on what the case asks of it (as the MCP arm does); a scripted run may be
        # either agent (credulous: the case's asks, careful: the user's), so it is decided here only
        # when neither has a path, and otherwise by the scripted model at run time
        # (gateway/scripted.py)
        lists = [case.asks] if agent_kind == "llm" else [case.asks, case.user_asks]
        whys = [mapping.no_tool_path(list(acts), style, {t: {} for t in declared},
                                     self.spec.actions,
                                     self.policy.operator["currency"], amounts) for acts in lists]
        return whys[0] if all(whys) else None

    def agent(self, prepared: Prepared, model: Agent | None = None,
              repeat: int = 0) -> Agent | None:
        """The application is the agent; ``model`` (the runner's agent) answers its model calls."""
        return _AppAgent(self, prepared, prepared.world.run_id, model, repeat)

    @property
    def containment(self) -> dict | None:
        return self.outside.account()

    def _finish(self, prepared: Prepared) -> None:
        if self.spec.state_probe is not None and prepared.outcome.kind == "ready":
            self._read_state(prepared)         # the application's own state, while it still runs
        contained = self.outside.contained
        if contained or self.spec.state == "fresh" or prepared.lost is not None:
            self.process.stop()                       # in a room, every run starts its own process
        record_room(prepared, self.outside.end_run(), self.outside.uncontained)
        prepared.secrets = self.outside.secrets()

    def _read_state(self, prepared: Prepared) -> None:
        """The application's own writes, from its state probe (http or command), onto the run's
        wire."""
        from urllib.parse import urlsplit

        from guardbench.arms.state_probe import probe_text, record_writes
        from guardbench.mcp.probe import ProbeError
        probe = self.spec.state_probe
        assert probe is not None
        values = placeholders(self.spec)
        port = urlsplit(self.process.url or "").port
        if port:
            values["port"] = str(port)
        op = self.policy.operator
        try:
            text = probe_text(self.spec, probe, values, self.outside.environment())
            record_writes(prepared, probe, text,
                          {k: op[k] for k in ("merchant_id", "supplier_email", "currency")},
                          self.name)
        except ProbeError as exc:
            lose(prepared, f"{self.name}: {exc}")

    def close(self) -> None:
        if os.getpid() != self._pid:
            # the parent's process and proxy: the parent closes them
            return
        self.process.stop()
        self.outside.close()
        self.models.close()


class _AppAgent:
    """Stands in for the agent: the application is the agent (the runner asks the arm's own
    agent)."""

    def __init__(self, arm: AppArm, prepared: Prepared, run_id: str, model: Agent | None = None,
                 repeat: int = 0) -> None:
        self.arm, self.prepared, self.run_id = arm, prepared, run_id
        self.name = arm.name
        # an LLM sweep's loop, if any
        self.model, self.repeat, self.loop = model, repeat, running_loop()

    def run(self, session: Session) -> Transcript:
        """The application's run, with the run's model behind the gateway and the conversation
        recorded."""
        self.arm.models.begin(session, self.model, self.repeat, self.loop)
        transcript = Transcript((), "", "lost", error="the run was interrupted")
        try:
            transcript = self._ask(session)
        finally:
            transcript = self.arm.models.end(self.prepared, transcript)
        return transcript

    def _ask(self, session: Session) -> Transcript:
        payload = {"contract": CONTRACT, "run_id": self.run_id, "case": session.case.id,
                   "user": session.user,
                   "data": session.data, "context": dict(session.context),
                   "paypal": {"base_url": API_BASE}}
        try:
            out = self.arm.process.run_once(payload)
        except AppLost as exc:
            lose(self.prepared, exc.reason, exc.stderr)
            return Transcript((), f"Lost: {exc.reason}", "lost", error=exc.reason)
        steps = tuple(Step(str(s.get("tool", "")), _args(s), str(s.get("result", "")))
                      for s in out.get("steps") or () if isinstance(s, dict))
        return Transcript(steps, out["final"], "answered")


def _args(step: dict) -> dict:
    args = step.get("args")
    return args if isinstance(args, dict) else {}

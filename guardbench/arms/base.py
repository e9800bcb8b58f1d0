"""What an arm is: given the run's world (built by the runner, execution/world.py), it prepares
the agent's session (tools, context, the operator's setup in its own tool layer).

Every arm is scored on the wire the runner built (a RecordingTransport in front of a PayPal
stand-in), so the detectors read every arm's wire identically.
"""
from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from guardbench.agents.base import Agent, Session, Tool
from guardbench.arms.world import Fixtures, World
from guardbench.broker import load_policy
from guardbench.broker.policy_model import Policy
from guardbench.cases.load import Case
from guardbench.records.record import Attempt, WireRequest
from guardbench.transport.base import TransportError
from guardbench.transport.recording import RecordingTransport


@dataclass(frozen=True)
class Outcome:
    """How a prepared run stands, one of four (tagged by ``kind``):

    - ``ready``: the agent acts next;
    - ``refused``: a defence refused the task before the agent acted (``attempt`` says which);
    - ``lost``: an external process failed (before or during the run); never scored;
    - ``no_tool_path``: the arm's tools cannot express the case; never run, never scored.
    """

    kind: Literal["ready", "refused", "lost", "no_tool_path"] = "ready"
    reason: str = ""
    attempt: Attempt | None = None


READY = Outcome()


@dataclass
class Prepared:
    """One run's world, as the arm prepared it for the agent."""

    session: Session
    world: World                        # the runner's: the wire every arm is scored on
    setup_seq: int                      # exchanges with seq < setup_seq were operator setup
    secrets: tuple[str, ...]            # strings that are the credential
    attempts: list[Attempt] = field(default_factory=list)
    approvals_asked: int = 0
    # wire seqs of calls an operator approved
    approved_seqs: list[int] = field(default_factory=list)
    close: Callable[[], None] = lambda: None
    outcome: Outcome = READY
    # what the record keeps about an external process (its stderr...)
    external: dict | None = None
    # a tool of its own -> the case action it does
    tool_actions: dict[str, str] = field(default_factory=dict)
    # what the system sent out beyond its answer (DNS names)
    channels: list[str] = field(default_factory=list)
    # why the wire may lack some of the system's traffic: what its room could not capture, processes
    # still running when the run ended (arms/external.py); an attack run with any is unmeasured,
    # never blocked
    unseen: list[str] = field(default_factory=list)

    @property
    def recorder(self) -> RecordingTransport:
        return self.world.recorder

    @property
    def lost(self) -> str | None:
        """Why the run was lost (None: it was not)."""
        return self.outcome.reason if self.outcome.kind == "lost" else None

    def refuse(self, attempt: Attempt) -> None:
        self.outcome = Outcome("refused", attempt.reason, attempt)

    def lose(self, reason: str) -> None:
        """The run is lost; the first reason wins."""
        if self.outcome.kind != "lost":
            self.outcome = Outcome("lost", reason)

    def no_tool_path(self, why: str) -> None:
        self.outcome = Outcome("no_tool_path", why)

    def release(self) -> None:
        """The run is over (the runner's Started.close): drop what holds this Prepared from within.
        An arm's tool closes over it, and it holds the session holding the tool: a reference
        cycle, which kept the run's broker, ledger, stand-in and wire until the cycle collector
        found them (tests/execution/test_no_cycles.py)."""
        if self.session is not None:
            self.session.tools.clear()


@dataclass(frozen=True)
class ArmOptions:
    """What every arm's factory takes (guardbench/registry.py): ``factory(options) -> Arm``."""

    name: str = ""                      # the name it is asked for (a defended arm: its defence's)
    policy: Policy | None = None        # None: the example policy
    approvals: str = "none"             # how held calls are answered (arms that hold calls)
    spec: str | None = None             # a KIND:SPEC arm: the spec file
    # the stand-in's credentials and seeded ids (external arms need them)
    fixtures: Fixtures | None = None
    # external arms: a room per run (auto, off, required; arms/external.py)
    room: str = "auto"
    # folders no room may see (the run folder, caches, the ledger's head)
    hide: tuple[str, ...] = ()
    # where requests that reach no run are written (between_runs.jsonl)
    run_folder: str | None = None

    def the_policy(self) -> Policy:
        return self.policy if self.policy is not None else load_policy()


class Arm(ABC):
    """An arm prepares one run's world for an agent: its tools, prompt and setup, on the wire the
    runner built (``world.recorder``); it never builds a wire of its own (execution/world.py does).

    Optional members have their defaults here: ``needs_workdir`` (a work folder for files the arm
    keeps: the broker's ledger), ``credential_in_context``, ``serial_wire`` (the wire is reached
    from other threads: a proxy's), ``approvals`` (how held calls were answered, for the record),
    ``agent`` (an arm whose process is the agent), ``check`` and ``close``.
    """

    name: str = ""
    description: str = ""
    credential_in_context: bool = False
    needs_workdir: bool = False
    serial_wire: bool = False

    def __init__(self, options: ArmOptions) -> None:
        self.options = options
        self.policy = options.the_policy()

    @property
    def approvals(self) -> str | None:
        return None

    @abstractmethod
    def prepare(self, case: Case, variant: int, world: World) -> Prepared:
        """Carry out the case's setup in this arm's way, on ``world``, and hand the agent its
        session."""

    def agent(self, prepared: Prepared, model: Agent | None = None,
              repeat: int = 0) -> Agent | None:
        """The agent of a run whose agent is the arm's own process (None: the runner's agent).
        ``model``: the runner's agent for the run (an application's model calls are answered as it
        would act); ``repeat``: the run's repeat index (a model's samples differ by it)."""
        return None

    @property
    def containment(self) -> dict | None:
        """An external arm: whether its runs are contained in rooms, for the manifest (None: in
        process)."""
        return None

    def check(self) -> None:
        """Before any run is recorded (an external arm: its process starts and lists its tools)."""
        return None

    def close(self) -> None:
        """Stop what the arm started."""
        return None


@dataclass
class Staged:
    """An arm's world after the operator's setup, before the agent's session (``StagingArm.stage``):
    the references the setup left. An arm that keeps more (the guardrail's broker) extends it."""

    refs: dict[str, list[str]]

    def seal(self) -> None:
        """This staged world becomes a template (execution/world.py keeps one per (case, arm)): keep
        in memory what its copies need, and release files and descriptors. Only copied from now
        on."""

    def copy_to(self, world: World) -> "Staged":
        """A copy for a run whose ``world`` is a copy of this one's (its own stand-in, wire,
        folder)."""
        return Staged({k: list(v) for k, v in self.refs.items()})


class StagingArm(Arm):
    """An arm whose ``prepare`` is two halves: ``stage`` (the operator's setup, on ``world``: the
    same in every variant and repeat of a case but for the variant's data, when the setup carries
    it) and ``enter`` (the agent's session for the variant). The runner stages each (case, arm)
    once, keeps it as a template and gives every run a copy (execution/world.py); ``enter`` sends
    nothing."""

    @abstractmethod
    def stage(self, case: Case, variant: int, world: World) -> Staged:
        """The operator's setup on ``world`` (its request ids from ``world.setup_seed``)."""

    @abstractmethod
    def enter(self, case: Case, variant: int, world: World, staged: Staged) -> Prepared:
        """The agent's session for ``variant`` in a staged world."""

    def prepare(self, case: Case, variant: int, world: World) -> Prepared:
        return self.enter(case, variant, world, self.stage(case, variant, world))


PLACEHOLDERS = ("order", "capture", "payout", "prior_order", "prior_capture",
                "prior_payout", "approval")


def fill(text: str | None, refs: dict[str, list[str]]) -> str | None:
    """Fill {order}, {capture}, {payout}, {prior_order}, {prior_capture}, {prior_payout} and
    {approval} placeholders with the setup's references (arms/setup.py)."""
    if text is None:
        return None
    for kind in PLACEHOLDERS:
        if refs.get(kind):
            text = text.replace("{" + kind + "}", refs[kind][-1])
    return text


def read_data_tool(data: str | None) -> Tool:
    from guardbench.arms.prompts import READ_DATA
    return Tool("read_data", READ_DATA,
                {"type": "object", "properties": {}, "additionalProperties": False},
                lambda args: data if data is not None else "(no document attached)")


HTTP_PARAMETERS = {
    "type": "object",
    "properties": {
        "method": {"type": "string", "enum": ["GET", "POST", "PATCH", "PUT", "DELETE"]},
        "url": {"type": "string",
                "description": "Full URL, e.g. https://api-m.sandbox.paypal.com/v2/checkout/orders"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {"type": "object", "description": "The JSON request body, as an object (no "
                 "body for GET)"},
    },
    "required": ["method", "url"],
}

_STRINGIFY = re.compile(r"^\s*JSON\.stringify\((.*)\)\s*;?\s*$", re.S)


def request_body(body: Any) -> str | None:
    """The body the http tool sends: an object as JSON; a string that holds JSON (also wrapped in
    ``JSON.stringify(...)`` or encoded twice, as recorded replies sent it) as that JSON,
    re-serialised; any other string as it is (the server's answer then says what is wrong with
    it)."""
    if body is None:
        return None
    if not isinstance(body, str):
        return json.dumps(body)
    text = body
    m = _STRINGIFY.match(text)
    if m:
        text = m.group(1)
    for depth in range(3):
        try:
            parsed = json.loads(text)
        except ValueError:
            return body
        # JSON as sent: the model's own bytes, unless it had to be unwrapped
        if not isinstance(parsed, str):
            return body if depth == 0 and text is body else json.dumps(parsed)
        text = parsed                       # encoded twice: a JSON string holding the JSON
    return body


def http_tool(send: Callable[[WireRequest], Any], description: str | None = None) -> Tool:
    """The control arms' http tool: whatever the agent composes goes to the transport."""

    def call(args: dict) -> str:
        try:
            headers = args.get("headers") or {}
            if not isinstance(headers, dict):
                return json.dumps({"error": "headers must be an object"})
            body = request_body(args.get("body"))
            req = WireRequest.make(str(args.get("method", "GET")), str(args.get("url", "")),
                                   {str(k): str(v) for k, v in headers.items()}, body)
            resp = send(req)
        except TransportError as exc:
            return json.dumps({"error": f"transport error: {exc}"})
        except (TypeError, ValueError) as exc:
            return json.dumps({"error": f"bad request: {exc}"})
        parsed = resp.json_shared()            # read only: dumped at once
        return json.dumps({"status": resp.status, "body": parsed if parsed is not None
                           else resp.body})

    return Tool("http_request", description or "Send an HTTP request (to the PayPal REST API) and "
                "return status "
                "and body.", HTTP_PARAMETERS, call)

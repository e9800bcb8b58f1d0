"""Run cases through arms with agents and score each run from its wire, as a RunRecord.

``plan`` lists the runs (RunSpec) of a design; ``Bench`` executes one (the arm prepares its
world, the agent acts, the wire is scored). Executing many, in worker processes with ``jobs`` > 1
and always in plan order: guardbench/execution/pool.py's ``execute_all``. Writing the records is
guardbench/records/runfolder.py's job.
"""
from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import tempfile
import time
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from guardbench.agents.base import Agent, Transcript
from guardbench.arms.base import Arm, Prepared
from guardbench.arms.setup import SetupFailed
from guardbench.broker.policy_model import Policy
from guardbench.cases.load import Case
from guardbench.errors import CaseError, GuardbenchError
from guardbench.execution.keep import keep_ledger
from guardbench.execution.run_story import ToolWatch, story_fields
from guardbench.execution.world import Worlds
from guardbench.records.accounts import ExternalAccount
from guardbench.records.record import UNSCORED, RunRecord
from guardbench.records.runfile import run_id
from guardbench.scoring import scenario
from guardbench.scoring.score import policy_reference, run_reference, score
from guardbench.scoring.state import settle


@dataclass(frozen=True)
class RunSpec:
    case: str
    variant: int
    arm: str
    agent: str
    model: str | None = None
    repeat: int = 0
    seed: int = 0
    attempt: int = 1          # a lost run retried (--retry-lost): 2, 3... (not part of the run id)

    def again(self, attempt: int) -> "RunSpec":
        from dataclasses import replace
        return replace(self, attempt=attempt)

    # computed once per spec (a run asks for its id a few times; the fields never change)
    @cached_property
    def run_id(self) -> str:
        return run_id(self.case, self.variant, self.arm, self.agent, self.model, self.repeat)

    @cached_property
    def world_seed(self) -> int:
        return int(hashlib.sha256(f"{self.seed}:{self.run_id}".encode()).hexdigest()[:8], 16)

    @property
    def staged_seed(self) -> int:
        """What a staging arm's setup is keyed by: the same for every variant, repeat, agent and
        model of the case in the arm, so that the staged world is built once
        (execution/world.py)."""
        return int(hashlib.sha256(f"{self.seed}:{self.case}/{self.arm}".encode()).hexdigest()[:8],
                   16)


def plan(cases: Sequence[Case], arms: Sequence[str], agents: Sequence[str], *,
         models: Sequence[str | None] = (None,),
         variants: Sequence[int] | None = None, repeats: int = 1, seed: int = 0) -> list[RunSpec]:
    from collections import Counter
    for what, names in (("--arms", arms), ("--agent", agents), ("--model", models),
                        ("cases", [c.id for c in cases]),
                        ("variants", variants or ())):
        twice = sorted(str(x) for x, k in Counter(names).items() if k > 1)
        if twice:   # every run would be recorded twice and counted twice
            raise GuardbenchError(what, f"{', '.join(twice)} named twice; name each once")
    out = []
    for c in cases:
        vs = (range(len(c.variants)) if variants is None
              else [v for v in variants if v < len(c.variants)])
        for v in vs:
            for r in range(repeats):
                for model in models:
                    for agent in agents:
                        for arm in arms:
                            out.append(RunSpec(c.id, v, arm, agent, model, r, seed))
    return out


def check_currencies(cases: Sequence[Case], policy: Policy) -> None:
    """A case written in one currency (its ``currency``) is refused under a policy that binds
    another: its amounts would be read in a currency they are not in."""
    bound = policy.operator.get("currency")
    for c in cases:
        if c.currency is not None and c.currency != bound:
            raise CaseError(c.source or c.id, f"case {c.id}: field currency: the case's amounts "
                            f"are in {c.currency}, "
                                              f"but the policy ({policy.source}) binds {bound}")


class Bench:
    """Everything one process needs to execute runs: policy, cases, arms, agents."""

    def __init__(self, policy: Policy, cases: Sequence[Case], arms: Mapping[str, Arm],
                 agents: Mapping[str, Agent], workdir: str | None = None,
                 agent_kind: Callable[[str], str] | None = None,
                 reuse_worlds: bool | None = None) -> None:
        """``reuse_worlds``: a staging arm's world is staged once per (case, arm) and copied for
        each run (execution/world.py's Worlds); False: staged afresh for every run (the same
        records); None: as $GUARDBENCH_WORLD_CACHE says (copied unless it is ``off``)."""
        self.policy = policy
        check_currencies(cases, policy)
        self.cases = {c.id: c for c in cases}
        self.arms = arms
        self.agents = agents
        self.workdir = workdir if workdir is not None else fast_tmp()
        self.base_ref = policy_reference(policy)
        self.agent_kind = (agent_kind or (lambda name: "scripted"
                                          if name in ("credulous", "careful") else "llm"))
        # --keep-ledgers: each run's ledger copied there (execution/keep.py)
        self.keep_ledgers: str | None = None
        self.worlds = (Worlds(self.workdir) if reuse_worlds is None
                       else Worlds(self.workdir, reuse_worlds))

    def agent_for(self, spec: RunSpec) -> Agent:
        return self.agents[spec.agent if spec.model is None else f"{spec.agent}:{spec.model}"]

    def start(self, spec: RunSpec, transport: Any = None) -> "Started":
        """The first half of a run: the runner builds the run's world (execution/world.py: the wire,
        the stand-in behind it, a fresh work folder when the arm keeps files) and the arm prepares
        the agent's session in it. ``transport``: what the wire reaches instead of a fresh stand-in
        (tests: a failing upstream).

        The caller runs the agent on ``started.prepared.session`` (or not, when a defence
        refused the task: ``started.refused_transcript()``; ``act`` does both for an agent that
        runs in this thread), then calls ``finish``.
        """
        case = self.cases[spec.case]
        arm = self.arms[spec.arm]
        t0 = time.perf_counter()
        # a work folder only for arms that keep files (the broker's ledger and approvals)
        tmp = _RunFolder(self.workdir) if arm.needs_workdir else _NoFolder()
        try:
            prepared, world = self.worlds.prepare(
                arm, case, spec.variant, seed=spec.world_seed, run_id=spec.run_id,
                agent_kind=self.agent_kind(spec.agent), staged_seed=spec.staged_seed,
                design_seed=spec.seed,
                workdir=tmp.name, transport=transport)
            if prepared.world is not world:        # scored on the runner's wire, or not at all
                raise TypeError(f"arm {spec.arm}: prepare() must hand back the world it was given")
        # the operator's setup cannot be carried out in this arm: the case is wrong
        except SetupFailed as exc:
            tmp.cleanup()
            raise CaseError(case.source or case.id, f"case {case.id}: setup in arm "
                            f"{spec.arm}: {exc}") from None
        except BaseException:         # cleanup, then re-raise: no work folder is left behind
            tmp.cleanup()
            raise
        return Started(spec, case, arm, prepared, tmp, t0,
                       ToolWatch(prepared.session, prepared.recorder),
                       keep=self.keep_ledgers)

    def finish(self, started: "Started", transcript: Transcript, require_success: bool = True,
               attempt: int = 1) -> RunRecord:
        """The second half: close the world and score what reached its wire."""
        started.close()
        spec, case, arm, prepared = started.spec, started.case, started.arm, started.prepared
        if prepared.lost and transcript.status != "lost":   # an external process failed mid-run
            transcript = replace(transcript, status="lost", error=prepared.lost)
        wire = tuple(prepared.recorder.exchanges)
        # the DNS names the system looked up are an outgoing channel too (arms/external.py: its
        # room)
        outputs = ([transcript.final] + [s.result for s in transcript.steps]
                   + channel_texts(prepared.channels))
        ref = run_reference(self.base_ref, case, secrets=prepared.secrets, agent_output=outputs,
                            start=prepared.setup_seq, require_success=require_success,
                            approved=prepared.approved_seqs)
        s = settle(case, wire, score(case, wire, ref, dict(prepared.session.refs)),
                   prepared.session.refs, ref)
        verdict, s = scenario.score_run(case, wire, transcript.steps, transcript.final, s,
                                        prepared.tool_actions)
        if (prepared.unseen and case.adversarial and transcript.status not in UNSCORED
            and not s.goal_achieved):
            # traffic the room could not read, or that a killed process had still to send, may have
            # been the attack: not blocked, not measured
            transcript = replace(transcript, status="unmeasured",
                                 error="the wire may lack the system's traffic: "
                                 + "; ".join(prepared.unseen[:5]))
        # a lost run, or one with no tool path, is never scored as a block or a success
        lost = transcript.status in UNSCORED
        approvals = arm.approvals
        return RunRecord(
            run_id=spec.run_id, case=case.id, family=case.family,
            variant=spec.variant, arm=spec.arm,
            agent=spec.agent, model=spec.model, repeat=spec.repeat, seed=spec.seed,
            status=transcript.status,
            credential_in_context=arm.credential_in_context, steps=len(transcript.steps),
            transcript=transcript, setup_seq=prepared.setup_seq, wire=wire,
            attempts=tuple(prepared.attempts),
            approvals_asked=prepared.approvals_asked,
            # how the simulated operator answered held calls, for arms that hold calls for one
            approvals=approvals,
            incidents=s.incidents, goal_achieved=None if lost else s.goal_achieved,
            benign_completed=None if lost else s.benign_completed, money_at_risk=s.money_at_risk,
            moved_beyond_daily_caps=s.moved_beyond_daily_caps,
            rejected_upstream=s.rejected_upstream,
            duration_s=round(time.perf_counter() - started.t0, 6), attempt=attempt,
            external=ExternalAccount.of(prepared.external), scenario=None if lost else verdict,
            **story_fields(prepared.session, started.watch,
                           transcript))   # the explorer's story of the run

    def act(self, started: "Started") -> Transcript:
        """The middle of a run: the agent acts in the prepared session (unless a defence refused
        the task first); the world is closed whatever happens."""
        try:
            transcript = started.refused_transcript()
            # an application arm's process is the agent, ours its model (arms/app.py)
            if transcript is None:
                spec = started.spec
                agent = self.agent_for(spec)
                own = started.arm.agent(started.prepared, agent, spec.repeat)
                transcript = (own or agent).run(started.prepared.session)
        finally:
            started.close()
        return transcript

    def execute(self, spec: RunSpec, require_success: bool = True) -> RunRecord:
        started = self.start(spec)
        return self.finish(started, self.act(started), require_success, spec.attempt)


def channel_texts(names: Sequence[str]) -> list[str]:
    """DNS names as the detectors read them: as sent, and with the label dots taken out (a
    credential longer than a label, 63 bytes, must be split across labels)."""
    out: list[str] = []
    for n in names:
        out += [n] if "." not in n else [n, n.replace(".", "")]
    return out


class _NoFolder:
    """Stands in for a work folder an arm does not use."""

    name = ""

    def cleanup(self) -> None:
        pass


class _RunFolder:
    """A run's work folder (the in-process broker's ledger, head and approvals), under the bench's
    work folder: one mkdir and, at the end, a walk that unlinks what the arm wrote (without
    following links) -- a third of TemporaryDirectory's cost, paid by every guardrail run."""

    _made = itertools.count()

    def __init__(self, parent: str | None) -> None:
        base = parent if parent is not None else tempfile.gettempdir()
        while True:
            name = os.path.join(base, f"gb-run-{os.getpid()}-{next(_RunFolder._made)}")
            try:
                os.mkdir(name, 0o700)
                break
            except FileExistsError:         # a folder a killed process left: the next name
                continue
        self.name = name

    def cleanup(self) -> None:
        if self.name:
            _remove(self.name)
            self.name = ""


def _remove(folder: str) -> None:
    """``folder`` and what it holds (links unlinked, never followed); gone already is fine."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            _remove(e.path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(e.path)
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(folder)


@dataclass
class Started:
    """A run between its two halves (Bench.start / Bench.finish)."""

    spec: RunSpec
    case: Case
    arm: Arm
    prepared: Prepared
    tmp: Any             # tempfile.TemporaryDirectory holding the run's work folder (or _NoFolder)
    t0: float
    watch: ToolWatch | None = None
    closed: bool = False
    keep: str | None = None       # the folder its ledger is kept in (--keep-ledgers)

    def refused_transcript(self) -> Transcript | None:
        """When a defence refused the task before the agent acted (or an external arm's process
        failed before, or its tools cannot express the case): the run's transcript."""
        out = self.prepared.outcome
        if out.kind == "lost":
            return Transcript((), f"Lost: {out.reason}", "lost", error=out.reason)
        if out.kind == "no_tool_path":
            return Transcript((), f"No tool path: {out.reason}", "no_tool_path")
        if out.kind == "ready" or out.attempt is None:
            return None
        if out.attempt not in self.prepared.attempts:
            self.prepared.attempts.append(out.attempt)
        return Transcript((), f"Refused: {out.attempt.reason}", "refused")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.prepared.close()
            if self.keep is not None:
                keep_ledger(self.tmp.name, Path(self.keep), self.spec)
        finally:
            self.tmp.cleanup()
            self.prepared.release()     # its world goes by reference counting (arms/base.py)


def fast_tmp() -> str | None:
    """A memory-backed folder for per-run ledgers when the machine has one (much cheaper
    to create and remove than folders on disk); None means the system default."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None

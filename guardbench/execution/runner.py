"""Run cases through arms with agents and score each run from its wire, as a RunRecord.

``plan`` lists the runs (RunSpec) of a design; ``Bench`` executes one (the arm prepares its
world, the agent acts, the wire is scored); ``execute_all`` executes many, in worker processes
with ``jobs`` > 1, always yielding records in plan order (the same bytes whatever ``jobs``).
Writing them is guardbench/records/runfolder.py's job.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generator, Mapping, Sequence

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
from guardbench.records.runfolder import encode
from guardbench.scoring import scenario
from guardbench.scoring.score import policy_reference, run_reference, score
from guardbench.scoring.state import settle

if TYPE_CHECKING:
    from multiprocessing.pool import Pool
    from types import FrameType


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

    @property
    def run_id(self) -> str:
        return run_id(self.case, self.variant, self.arm, self.agent, self.model, self.repeat)

    @property
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
        refused the task: ``started.refused_transcript()``), then calls ``finish``.
        """
        case = self.cases[spec.case]
        arm = self.arms[spec.arm]
        t0 = time.perf_counter()
        # a work folder only for arms that keep files (the broker's ledger and approvals)
        tmp = tempfile.TemporaryDirectory(prefix="gb-run-", dir=self.workdir) \
            if arm.needs_workdir else _NoFolder()
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

    def execute(self, spec: RunSpec, require_success: bool = True) -> RunRecord:
        started = self.start(spec)
        try:
            transcript = started.refused_transcript()
            # an application arm's process is the agent, ours its model (arms/app.py)
            if transcript is None:
                agent = self.agent_for(spec)
                own = started.arm.agent(started.prepared, agent, spec.repeat)
                transcript = (own or agent).run(started.prepared.session)
        finally:
            started.close()
        return self.finish(started, transcript, require_success, spec.attempt)


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


def fast_tmp() -> str | None:
    """A memory-backed folder for per-run ledgers when the machine has one (much cheaper
    to create and remove than folders on disk); None means the system default."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


# -- parallel execution ---------------------------------------------------------------

_WORKER: Bench | None = None
_PARENT: int | None = None
PR_SET_PDEATHSIG = 1


def _init_worker(factory: Callable[[], Bench] | None, parent: int | None = None) -> None:
    """A worker ignores Ctrl-C (the parent alone stops the run, cleanly), leaves at once on SIGTERM,
    dies with its parent (however the parent ends: SIGTERM, SIGINT, SIGKILL) and builds its Bench
    (``None``: the parent's, inherited through fork). It starts with SIGINT and SIGTERM blocked (the
    parent forks it so) and unblocks them only once its own handlers are in place."""
    import signal
    global _WORKER, _PARENT
    _PARENT = parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A worker ends without atexit: what its arms started (an external arm's server and proxy, in a
    # session of their own) is stopped by a finalizer, also when the pool is terminated (SIGTERM).
    from multiprocessing import util
    signal.signal(signal.SIGTERM, _exit_on_term)
    _die_with_parent(parent)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    util.Finalize(None, _close_worker_arms, exitpriority=10)
    if factory is not None:
        _WORKER = factory()


def _die_with_parent(parent: int | None) -> None:
    """Linux: the kernel sends this worker SIGTERM when its parent dies, even by SIGKILL (prctl
    PR_SET_PDEATHSIG); a parent already gone before that (the worker's parent is then another
    process) ends the worker at once."""
    import signal
    import sys
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:
        os._exit(128 + signal.SIGTERM)


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    """The pool is terminated (Ctrl-C, an error): kill the process groups the arms started and leave
    at once, with no unwinding through a run in flight (its half-done work is the parent's to
    discard). No arm's close() here: a signal handler that takes a lock the interrupted code holds
    never returns."""
    from guardbench.util.processes import kill_started_groups
    kill_started_groups()
    os._exit(128 + signum)


def _close_worker_arms() -> None:
    """Stop what this worker's arms started."""
    if _WORKER is None:
        return
    for arm in _WORKER.arms.values():
        try:
            arm.close()
        except Exception:       # a server that will not stop must not hide the run's own outcome
            pass


def _work(spec: RunSpec) -> tuple[str, RunRecord]:
    assert _WORKER is not None
    # the parent is gone: nobody reads the result
    if _PARENT is not None and os.getppid() != _PARENT:
        os._exit(143)
    return encode(_WORKER.execute(spec))


def execute_all(bench: Bench | Callable[[], Bench], specs: Sequence[RunSpec],
                jobs: int = 1) -> Generator[tuple[str, RunRecord], None, None]:
    """(JSON line, slim record) in plan order; with jobs > 1, forked worker processes share
    the work and serialise their own records, so the parent only writes lines. ``bench`` is a
    Bench (workers inherit it through fork) or a function that builds one in each worker."""
    if jobs <= 1 or len(specs) < 2:
        b = bench if isinstance(bench, Bench) else bench()
        for s in specs:
            yield encode(b.execute(s))
        return
    import multiprocessing as mp
    import signal
    global _WORKER
    factory = None if isinstance(bench, Bench) else bench
    if factory is None:
        _WORKER = bench           # type: ignore[assignment]
    ctx = mp.get_context("fork")
    chunk = max(1, min(64, len(specs) // (jobs * 8) or 1))
    # Ctrl-C reaches every process of the group. SIGINT and SIGTERM stay blocked while the workers
    # are forked, so none of them can take one before its own handlers are set (a worker interrupted
    # in its start-up hangs the pool, or prints a traceback); one sent meanwhile reaches this
    # process once the pool exists.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        pool = ctx.Pool(jobs, initializer=_init_worker, initargs=(factory, os.getpid()))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    try:
        yield from pool.imap(_work, specs, chunksize=chunk)
    except BaseException:  # cleanup, then re-raise (Ctrl-C too): no worker outlives the run
        _stop_pool(pool)              # workers ignore SIGINT: SIGTERM stops them
        raise
    pool.close()
    pool.join()


def _stop_pool(pool: Pool) -> None:
    """Stop the workers at once (SIGTERM: each kills what it started and leaves), then the pool's
    threads. Pool.terminate() runs first, in a thread of its own: it marks the pool terminating
    before anything else, so its worker handler starts no replacement for a worker we end (a
    replacement found the queues closed and printed a traceback); it may then wait for ever on the
    task-queue lock a worker died holding (SIGTERM to the whole process group, as systemd sends), so
    it gets a few seconds and the process leaves without it (cli/main.py ends an interrupted run at
    once)."""
    import multiprocessing as mp
    import threading
    stopper = threading.Thread(target=pool.terminate, daemon=True, name="guardbench-pool-stop")
    stopper.start()
    stopper.join(0.2)
    workers = mp.active_children()
    for w in workers:
        w.terminate()
    for w in workers:
        w.join(5)
    stopper.join(5)

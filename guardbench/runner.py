"""Run cases through arms with agents, score each run from its wire, and write records.

A run folder holds ``manifest.json`` (version, commit, hashes of cases and policy,
options) and ``runs.jsonl`` (one JSON line per run, appended and flushed as each
finishes). Started again with the same options it resumes: finished runs are
skipped, nothing recorded is rewritten.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from guardbench.agents.base import Transcript
from guardbench.cases.load import Case
from guardbench.arms.setup import SetupFailed
from guardbench.errors import CaseError, GuardbenchError
from guardbench.scoring.score import policy_reference, run_reference, score


@dataclass(frozen=True)
class RunSpec:
    case: str
    variant: int
    arm: str
    agent: str
    model: str | None = None
    repeat: int = 0
    seed: int = 0

    @property
    def run_id(self) -> str:
        return f"{self.case}/v{self.variant}/{self.arm}/{self.agent}/{self.model or '-'}/r{self.repeat}"

    @property
    def world_seed(self) -> int:
        return int(hashlib.sha256(f"{self.seed}:{self.run_id}".encode()).hexdigest()[:8], 16)


def plan(cases: Sequence[Case], arms: Sequence[str], agents: Sequence[str], *, models: Sequence[str | None] = (None,),
         variants: Sequence[int] | None = None, repeats: int = 1, seed: int = 0) -> list[RunSpec]:
    from collections import Counter
    for what, names in (("--arms", arms), ("--agent", agents), ("--model", models), ("cases", [c.id for c in cases]),
                        ("variants", variants or ())):
        twice = sorted(str(x) for x, k in Counter(names).items() if k > 1)
        if twice:   # every run would be recorded twice and counted twice
            raise GuardbenchError(what, f"{', '.join(twice)} named twice; name each once")
    out = []
    for c in cases:
        vs = range(len(c.variants)) if variants is None else [v for v in variants if v < len(c.variants)]
        for v in vs:
            for r in range(repeats):
                for model in models:
                    for agent in agents:
                        for arm in arms:
                            out.append(RunSpec(c.id, v, arm, agent, model, r, seed))
    return out


class Bench:
    """Everything one process needs to execute runs: policy, cases, arms, agents."""

    def __init__(self, policy, cases: Sequence[Case], arms: dict, agents: dict[str, object],
                 workdir: str | None = None, agent_kind: Callable[[str], str] | None = None):
        self.policy = policy
        self.cases = {c.id: c for c in cases}
        self.arms = arms
        self.agents = agents
        self.workdir = workdir if workdir is not None else fast_tmp()
        self.base_ref = policy_reference(policy)
        self.agent_kind = agent_kind or (lambda name: "scripted" if name in ("credulous", "careful") else "llm")

    def agent_for(self, spec: RunSpec):
        return self.agents[spec.agent if spec.model is None else f"{spec.agent}:{spec.model}"]

    def start(self, spec: RunSpec) -> "Started":
        """The first half of a run: the arm prepares its world in a fresh work folder.

        The caller runs the agent on ``started.prepared.session`` (or not, when a defence
        refused the task: ``started.refused_transcript()``), then calls ``finish``.
        """
        case = self.cases[spec.case]
        arm = self.arms[spec.arm]
        t0 = time.perf_counter()
        # a work folder only for arms that keep files (the broker's ledger and approvals)
        tmp = tempfile.TemporaryDirectory(prefix="gb-run-", dir=self.workdir) \
            if getattr(arm, "needs_workdir", True) else _NoFolder()
        try:
            prepared = arm.prepare(case, spec.variant, seed=spec.world_seed, workdir=tmp.name,
                                   agent_kind=self.agent_kind(spec.agent), run_id=spec.run_id)
        except SetupFailed as exc:    # the operator's setup cannot be carried out in this arm: the case is wrong
            tmp.cleanup()
            raise CaseError(case.source or case.id, f"case {case.id}: setup in arm {spec.arm}: {exc}") from None
        except BaseException:
            tmp.cleanup()
            raise
        return Started(spec, case, arm, prepared, tmp, t0)

    def finish(self, started: "Started", transcript: Transcript, require_success: bool = True) -> dict:
        """The second half: close the world and score what reached its wire."""
        started.close()
        spec, case, arm, prepared = started.spec, started.case, started.arm, started.prepared
        if getattr(prepared, "lost", None) and transcript.status != "lost":   # the process failed mid-run
            from dataclasses import replace
            transcript = replace(transcript, status="lost", error=prepared.lost)
        wire = prepared.recorder.exchanges
        outputs = [transcript.final] + [s.result for s in transcript.steps]
        ref = run_reference(self.base_ref, case, secrets=prepared.secrets, agent_output=outputs,
                            start=prepared.setup_seq, require_success=require_success)
        scored = score(case, wire, ref, dict(prepared.session.refs))
        lost = transcript.status == "lost"
        record = {
            "run_id": spec.run_id, "case": case.id, "family": case.family, "variant": spec.variant,
            "arm": spec.arm, "agent": spec.agent, "model": spec.model, "repeat": spec.repeat,
            "seed": spec.seed, "status": transcript.status,
            "credential_in_context": bool(getattr(arm, "credential_in_context", False)),
            "steps": len(transcript.steps),
            "transcript": transcript.to_dict(),
            "setup_seq": prepared.setup_seq,
            "wire": [ex.to_dict() for ex in wire],
            "attempts": [a.to_dict() for a in prepared.attempts],
            "approvals_asked": prepared.approvals_asked,
            # how the simulated operator answered held calls, for arms that hold calls for one
            **({"approvals": arm.approvals} if isinstance(getattr(arm, "approvals", None), str) else {}),
            **scored,
            **({"external": prepared.external} if getattr(prepared, "external", None) else {}),
            "duration_s": round(time.perf_counter() - started.t0, 6),
        }
        if lost or transcript.status == "no_tool_path":   # never scored as a block or a success
            record.update(goal_achieved=None, benign_completed=None)
        return record

    def execute(self, spec: RunSpec, require_success: bool = True) -> dict:
        started = self.start(spec)
        try:
            transcript = started.refused_transcript()
            if transcript is None:   # an application arm's process is the agent (arms/app.py)
                agent = getattr(started.prepared, "agent", None) or self.agent_for(spec)
                transcript = agent.run(started.prepared.session)
        finally:
            started.close()
        return self.finish(started, transcript, require_success)


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
    arm: object
    prepared: object
    tmp: object          # tempfile.TemporaryDirectory holding the run's work folder
    t0: float
    closed: bool = False

    def refused_transcript(self) -> Transcript | None:
        """When a defence refused the task before the agent acted: the run's transcript."""
        lost = getattr(self.prepared, "lost", None)
        if lost:                 # an external process failed before the agent could act
            return Transcript((), f"Lost: {lost}", "lost", error=lost)
        if getattr(self.prepared, "outcome", None) == "no_tool_path":
            why = (self.prepared.external or {}).get("no_tool_path", "")
            return Transcript((), f"No tool path: {why}", "no_tool_path")
        refused = self.prepared.refused
        if refused is None:
            return None
        if refused not in self.prepared.attempts:
            self.prepared.attempts.append(refused)
        return Transcript((), f"Refused: {refused.reason}", "refused")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.prepared.close()
        finally:
            self.tmp.cleanup()


def fast_tmp() -> str | None:
    """A memory-backed folder for per-run ledgers when the machine has one (much cheaper
    to create and remove than folders on disk); None means the system default."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


# -- the run folder -------------------------------------------------------------------

def read_records(path: Path) -> list[dict]:
    """Complete records of a runs.jsonl ([] when there is none), read and checked by the one shared
    reader (guardbench/runfile.py: torn tail ignored, a run_id twice or an old record shape refused)."""
    from guardbench.runfile import read_records as read
    return read(path)


def load_run(run_dir: Path) -> tuple[Path, list[dict]]:
    """(runs.jsonl path, its records) for a run folder or a runs.jsonl; bad input is a one-line error."""
    run_dir = Path(run_dir)
    path = run_dir / "runs.jsonl" if run_dir.is_dir() else run_dir
    if not path.exists():
        raise GuardbenchError(str(run_dir), "no runs.jsonl here")
    records = read_records(path)
    if not records:
        raise GuardbenchError(str(path), "no records")
    return path, records


def _drop_torn_tail(path: Path) -> None:
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with path.open("r+b") as fh:
            fh.truncate(cut)


def open_run_dir(out: Path, manifest: dict) -> list[dict]:
    """Create or resume a run folder; returns the records already there, slim (read once).

    Resuming with different options is refused: records of two designs never mix.
    """
    out.mkdir(parents=True, exist_ok=True)
    mpath = out / "manifest.json"
    if mpath.exists():
        try:
            old = json.loads(mpath.read_text())
        except ValueError:
            raise GuardbenchError(str(mpath), "not valid JSON") from None
        for key in ("options", "cases_hash", "policy_hash"):
            if old.get(key) != manifest.get(key):
                raise GuardbenchError(str(out), f"holds a run with other {key.replace('_', ' ')}; "
                                                "choose another --out or rerun with the same options")
    else:
        mpath.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    runs = out / "runs.jsonl"
    _drop_torn_tail(runs)
    return [slim(r) for r in read_records(runs)]


def encode(rec: dict) -> tuple[str, dict]:
    """A record's JSON line, and its slim form (no wire, no steps) that tables need."""
    return json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n", slim(rec)


def slim(rec: dict) -> dict:
    out = {k: v for k, v in rec.items() if k not in ("wire", "transcript")}
    t = rec.get("transcript") or {}
    out["transcript"] = {"status": t.get("status"), "usage": t.get("usage", {}), "error": t.get("error")}
    return out


def append_records(out: Path, records: Iterable[dict | tuple[str, dict]],
                   on_each: Callable[[dict], None] | None = None) -> list[dict]:
    """Append each record as one flushed line; returns the slim records, in order."""
    slims = []
    with (out / "runs.jsonl").open("a", encoding="utf-8") as fh:
        for rec in records:
            line, small = rec if isinstance(rec, tuple) else encode(rec)
            fh.write(line)
            fh.flush()
            slims.append(small)
            if on_each:
                on_each(small)
    return slims


# -- parallel execution ---------------------------------------------------------------

_WORKER: Bench | None = None


def _init_worker(factory: Callable[[], Bench]) -> None:
    global _WORKER
    _WORKER = factory()


def _work(spec: RunSpec) -> tuple[str, dict]:
    assert _WORKER is not None
    return encode(_WORKER.execute(spec))


def execute_all(factory: Callable[[], Bench], specs: Sequence[RunSpec],
                jobs: int = 1) -> Iterator[tuple[str, dict]]:
    """(JSON line, slim record) in plan order; with jobs > 1, forked worker processes share
    the work and serialise their own records, so the parent only writes lines."""
    if jobs <= 1 or len(specs) < 2:
        bench = factory()
        for s in specs:
            yield encode(bench.execute(s))
        return
    import multiprocessing as mp
    ctx = mp.get_context("fork" if os.name == "posix" else "spawn")
    chunk = max(1, min(64, len(specs) // (jobs * 8) or 1))
    with ctx.Pool(jobs, initializer=_init_worker, initargs=(factory,)) as pool:
        yield from pool.imap(_work, specs, chunksize=chunk)

"""A whole run (``guardbench.run``, the run command): open the run folder (locked), run what it does
not hold yet, write the tables. Scripted agents run in this process or in ``jobs`` worker processes
(ScriptedRun); LLM agents run concurrently on asyncio (execution/llm_job.py). What the command line
prints is its own (cli/run.py): this module reports through a ``Progress``.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from guardbench.broker.policy_model import Policy
from guardbench.cases.load import Case
from guardbench.execution.bench import (
    build_bench,
    check_arms,
    checked_preflight,
    close_arms,
    containment,
    load_selected,
    room_options,
)
from guardbench.execution.keep import check_keep_dir
from guardbench.execution.options import RunOptions, capped_jobs, default_jobs, manifest
from guardbench.execution.pool import execute_all
from guardbench.execution.runner import Bench, RunSpec, plan
from guardbench.records.record import RunRecord
from guardbench.records.runfolder import RunFolderWriter
from guardbench.util.outputs import default_out


class Progress:
    """What a run says as it goes; the library's is silent (cli/run.py prints)."""

    def __init__(self) -> None:
        self.recorded = 0           # runs the folder holds (for the message when interrupted)
        self.out: Path | None = None

    def planned(self, text: str) -> None:
        pass

    def note(self, text: str) -> None:
        """A line worth saying before the runs (a capped --jobs, a torn last line cut off)."""

    @contextlib.contextmanager
    def running(self, total: int) -> Iterator[None]:
        yield

    def starting(self, text: str) -> None:
        """A line while something slow starts (external arms' servers): progress, which --quiet
        silences."""

    def one(self, record: RunRecord | None = None) -> None:
        """One run recorded (``record``: it, lost or not)."""

    def finished(self, text: str) -> None:
        pass

    def tables(self, tables: list) -> None:
        pass


class Job(Protocol):
    """What a run's kind of agent does (ScriptedRun here, LLMRun in execution/llm_job.py)."""

    cases: list[Case]
    agent_names: list[str]
    bench: Bench | None

    @property
    def models(self) -> Sequence[str | None]: ...
    def design_extra(self) -> dict[str, Any]: ...
    def manifest_extra(self) -> dict[str, Any]: ...
    def prepare(self, policy: Policy, cases: list[Case]) -> None: ...
    def describe(self, specs: Sequence[RunSpec]) -> str: ...
    def run(self, specs: Sequence[RunSpec], w: RunFolderWriter,
            on_each: Callable[[RunRecord], None] | None) -> list[RunRecord]: ...
    def summary(self, new: Sequence[RunRecord]) -> str: ...
    def check(self, new: Sequence[RunRecord]) -> None: ...


@dataclass
class RunResult:
    """What a run left: its folder, the runs this call recorded, every run the folder holds, the
    tables."""

    out: Path
    new: list[RunRecord]
    records: list[RunRecord]
    tables: list = field(default_factory=list)
    agent_kind: str = "scripted"


def run(out: str | Path | None = None, *, progress: Progress | None = None,
        **options: Any) -> RunResult:
    """Run cases through arms and score what reached the wire, as ``guardbench run`` does (its
    options by their Python names: ``arms="guardrail,control"``, ``case_ids=("...",)``,
    ``agents=("credulous",)``...). Resumes the run folder ``out`` when it holds runs of the same
    design."""
    return run_with(RunOptions.make(**({"out": Path(out)} if out is not None else {}), **options),
                    progress or Progress())


def run_with(o: RunOptions, progress: Progress) -> RunResult:
    """The run of checked options (the command line's, or ``run``'s)."""
    from guardbench.broker import load_policy
    from guardbench.cases.load import cases_hash, default_cases_dir
    from guardbench.records.runfolder import refuse_other_options
    out = Path(o.out) if o.out else default_out("run")
    progress.out = out
    job: Job | None = None
    try:
        cdir = o.cases_dir or default_cases_dir()
        if o.agent_kind == "llm":
            from guardbench.execution.llm_job import LLMRun
            job = LLMRun(o, cdir)
        else:
            job = ScriptedRun(o, cdir)
        chash = cases_hash(cdir)
        # before a server or model starts
        refuse_other_options(out, manifest(o, chash, **job.design_extra()))
        keep = check_keep_dir(o.keep_ledgers, o.force) if o.keep_ledgers is not None else None
        check_documents()
        # their servers start before the first run (tens of seconds)
        if o.external:
            progress.starting("starting the servers of "
                              + ", ".join(e for e in o.arm_entries if ":" in e)
                          + " (and checking their tools) before the first run")
        job.prepare(load_policy(o.policy_path),
                    load_selected(cdir, o.case_ids, o.families, o.generate_variants))
        # after the preflight: only the runs' own ledgers
        if keep is not None and job.bench is not None:
            job.bench.keep_ledgers = str(keep)
        extra = job.manifest_extra()
        held = containment(job.bench) if job.bench is not None else {}
        # external arms: contained in a room per run, or uncontained and why
        if held:
            extra["containment"] = held
        return write_runs(o, job, manifest(o, chash, **extra), out, progress)
    finally:
        if job is not None and job.bench is not None:
            # the servers and proxies of external arms (arms/external.py)
            close_arms(job.bench)


def check_documents() -> None:
    """PayPal's pinned documents, which every arm's stand-in reads, are there and verified (read
    once, and kept for the runs and the workers forked for them): otherwise one line before any
    folder."""
    from guardbench.paypal.openapi import catalogue
    catalogue()


def write_runs(o: RunOptions, job: Job, man: dict[str, Any], out: Path,
               progress: Progress) -> RunResult:
    """Open the run folder (locked), run what is not recorded yet, write the tables. The manifest
    records the planned runs, so a reader can tell a folder cut short (records/runfile.py)."""
    from guardbench.records.runfile import plan_summary
    from guardbench.records.runfolder import RunFolderWriter
    from guardbench.report.tables import all_tables, write_tables
    from guardbench.util.heap import freeze_now, long_lived

    # --variants above every case's count means all of them: the range is never longer than the larg
    most = max((len(c.variants) for c in job.cases), default=0)
    variants = range(min(o.n_variants, most)) if o.n_variants else None
    full = plan(job.cases, o.arm_list, job.agent_names, models=job.models, variants=variants,
                repeats=o.repeats,
                seed=o.seed)
    per_case = {c.id: min(len(c.variants), o.n_variants or len(c.variants)) for c in job.cases}
    man = {**man, "planned_runs": len(full),
           "plan": plan_summary(per_case, o.arm_list, job.agent_names, job.models, o.repeats)}
    with RunFolderWriter(out, man) as w, long_lived():   # (util/heap.py: records, worlds)
        if w.torn_cut:
            progress.note(f"note: {w.runs}: a torn last line ({w.torn_cut} bytes, a write cut "
                          "short) was cut "
                          "off; its run runs again")
        progress.recorded = len(w.earlier)
        lost = {r.run_id: r.attempt for r in w.earlier if r.lost} if o.retry_lost else {}
        done = {r.run_id for r in w.earlier} - set(lost)
        specs = [s.again(lost.get(s.run_id, 0) + 1) if s.run_id in lost else s
                 for s in full if s.run_id not in done]
        if isinstance(job, ScriptedRun) and o.jobs:
            job.jobs, line = capped_jobs(o.jobs, len(specs))
            if line:
                progress.note(line)
        retried = f", {len(lost)} lost to run again" if lost else ""
        progress.planned(f"{len(specs)} runs to do ({len(w.earlier)} already recorded{retried}) "
                         f"{job.describe(specs)}-> {out}")
        t0 = time.perf_counter()

        def each(r: RunRecord) -> None:
            progress.recorded += 1
            progress.one(r)
        with progress.running(len(specs)):
            new = job.run(specs, w, each)
        progress.finished(f"finished in {time.perf_counter() - t0:.2f} s{job.summary(new)}")
        merged = {r.run_id: r for r in w.earlier}
        merged.update((r.run_id, r) for r in new)
        freeze_now()            # the records live on until the end (util/heap.py)
        tables = all_tables(list(merged.values()), o.capable_threshold)
        write_tables(tables, out)
    progress.tables(tables)
    job.check(new)
    return RunResult(out, new, list(merged.values()), tables, o.agent_kind)


class ScriptedRun:
    """The scripted agents (credulous, careful): deterministic, in one or ``--jobs`` processes."""

    models: tuple[str | None, ...] = (None,)

    def __init__(self, o: RunOptions, cdir: Path) -> None:
        self.o, self.cdir = o, cdir
        self.agent_names = list(o.agents)
        self.cases: list[Case] = []
        self.jobs = 1
        self.bench: Bench | None = None
        self.prereg: dict | None = None

    def prepare(self, policy: Policy, cases: list[Case]) -> None:
        self.prereg = None
        # before the preflight: a run that differs from its plan never starts
        if self.o.prereg_file:
            from guardbench.cases.load import cases_hash
            from guardbench.stats.prereg import check_run_matches
            self.prereg = check_run_matches(self.o.prereg_file, agents=self.agent_names,
                                            arms=self.o.arm_list,
                                            cases_hash=cases_hash(self.cdir),
                                            extra={"variants": self.o.n_variants})
        self.cases = cases
        self.bench = build_bench(policy, cases, self.o.arms_named, self.o.approvals,
                                 **room_options(self.o))
        check_arms(self.bench)
        checked_preflight(self.o, self.cdir, self.bench, cases)
        n = sum(min(len(c.variants), self.o.n_variants or len(c.variants)) for c in cases) \
            * len(self.o.arm_list) * len(self.agent_names)
        self.jobs = capped_jobs(self.o.jobs, n)[0] if self.o.jobs else default_jobs(n)

    def design_extra(self) -> dict[str, Any]:
        return {}

    def manifest_extra(self) -> dict[str, Any]:
        return {"jobs": self.jobs, **({"prereg": self.prereg} if self.prereg else {})}

    def describe(self, specs: Sequence[RunSpec]) -> str:
        return f"in {self.jobs} processes " if self.jobs > 1 and len(specs) > 1 else ""

    def run(self, specs: Sequence[RunSpec], w: RunFolderWriter,
            on_each: Callable[[RunRecord], None] | None) -> list[RunRecord]:
        assert self.bench is not None
        if self.jobs > 1 and len(specs) > 1:
            close_arms(self.bench)           # the workers start servers and proxies of their own
        records = execute_all(self.bench, specs, self.jobs)      # a generator: closed below
        try:
            return w.append(records, on_each)
        finally:
            records.close()          # stops the worker processes now, also when interrupted

    def summary(self, new: Sequence[RunRecord]) -> str:
        return ""

    def check(self, new: Sequence[RunRecord]) -> None:
        pass



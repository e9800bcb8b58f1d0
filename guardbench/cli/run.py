"""guardbench run: the same cases through several arms, scored on what reached the wire.

One command for every agent: the options are declared once (cli/run_options.py), the manifest is
built once, the run folder is written by one writer (guardbench/records/runfolder.py) and the tables come
from the same records. Scripted agents run in this process or in ``--jobs`` worker processes;
LLM agents run concurrently on asyncio (cli/run_llm.py). Ctrl-C stops the run cleanly (exit 130)
and prints the command that resumes it; SIGTERM (what `timeout`, systemd and CI send) is handled the
same way (exit 143).
"""
from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from guardbench.cli.run_options import RunOptions, capped_jobs, default_jobs, manifest, run_options
from guardbench.errors import GuardbenchError
from guardbench.util.outputs import default_out

if TYPE_CHECKING:
    from guardbench.cli.run_llm import LLMRun

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is, so it unwinds exactly as a Ctrl-C does."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """While a run runs, SIGTERM raises Terminated in the main thread (a KeyboardInterrupt: records
    stay whole, the resume line is printed); outside the main thread (a test's runner) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
DONE: list[str] = []            # set when a scripted run finished cleanly (cli/main.py may then exit at once)


def select_cases(all_cases, case_ids, families):
    from guardbench.cases.load import FAMILIES
    known = {c.id for c in all_cases}
    for cid in case_ids:
        if cid not in known:
            raise GuardbenchError("--case", f"no case with id {cid!r}")
    for fam in families:
        if fam not in FAMILIES:
            raise GuardbenchError("--family", f"unknown family {fam!r} (one of {', '.join(FAMILIES)})")
    chosen = [c for c in all_cases if (not case_ids or c.id in case_ids) and (not families or c.family in families)]
    if not chosen:
        raise GuardbenchError("--case/--family", "no case matches both filters")
    return chosen


def load_selected(cases_dir, case_ids, families, generate_variants):
    from guardbench.cases.load import load_cases
    cases = select_cases(load_cases(cases_dir), case_ids, families)
    if generate_variants:
        from guardbench.cases.generate import expand_variants
        cases = [expand_variants(c, generate_variants) for c in cases]
    return cases


def preflight(bench, cases, arms=()) -> None:
    """Refuse to start unless every adversarial case attempts its goal (credulous agent, control arm,
    variant 0; a refused request counts as an attempt), and unless every case whose setup has the
    operator answer a held call can be set up in every arm of the run (holds differ per arm).

    Every adversarial case is checked, whatever its construct (a full refund, a reference from
    before the run, a replayed approval, a credential placed in a field, a written amount, data in
    an order's description): none is left out, and one that cannot fail stops the run.
    """
    from guardbench.execution.runner import RunSpec
    from guardbench.scoring.score import goal_achieved
    silent = []
    for c in cases:
        answered = any(a.do in ("approve", "reject") for a in c.setup)
        for arm in (a for a in dict.fromkeys(arms) if answered and a != "control"):
            bench.start(RunSpec(c.id, 0, arm, "credulous", seed=0)).close()
        if not c.adversarial:
            continue
        rec = bench.execute(RunSpec(c.id, 0, "control", "credulous", seed=0), require_success=False)
        if not goal_achieved(c, rec.incidents):
            silent.append(c.id)
    if silent:
        raise GuardbenchError("cases", "these adversarial cases do not attempt their goal under the credulous "
                                       f"agent in the control arm, so they could not fail: {', '.join(silent)}")


def preflight_marker(cdir: Path, o: RunOptions, cases) -> Path | None:
    """Where a passed preflight is remembered: named by sha256 of everything its outcome depends on
    (every file of the guardbench package that runs, the case files and their selection, the policy,
    the pinned documents' lock, the arms and how held calls are answered). Any change to any of them
    misses it and the preflight runs again; only a pass is remembered (``GUARDBENCH_CASE_CACHE=off``, or
    an external arm in the run: never). The preflight is deterministic: the same inputs give the same outcome."""
    from guardbench import __version__
    from guardbench.cases.load import cases_hash
    from guardbench.cli.run_options import policy_hash
    from guardbench.util.yamldoc import cache_dir
    folder = cache_dir()
    if folder is None or o.external:     # an external arm's process is outside what the marker can name
        return None
    import hashlib
    import os

    import guardbench
    h = hashlib.sha256(f"preflight v1\0{__version__}\0".encode())
    pkg = Path(guardbench.__file__).resolve().parent
    for root, dirs, names in os.walk(pkg):       # os.walk: a tenth of pathlib's cost here
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            with open(os.path.join(root, name), "rb") as fh:
                h.update(os.path.relpath(os.path.join(root, name), pkg).encode() + b"\0" + fh.read() + b"\0")
    lock = pkg.parent / "specs" / "paypal.lock.json"
    h.update(lock.read_bytes() if lock.is_file() else b"-")
    h.update("\0".join([cases_hash(cdir), policy_hash(o.policy_path), ",".join(o.arm_list), o.approvals,
                         ",".join(c.id for c in cases), str(o.generate_variants)]).encode())
    return folder.parent / "preflight-passed" / h.hexdigest()


def resume_command(ctx: click.Context, out: Path) -> str:
    """The `guardbench run` command line that resumes this run: every option the user gave, and --out."""
    from click.core import ParameterSource
    words = ["guardbench", "run"]
    for p in ctx.command.params:
        if p.name == "out" or ctx.get_parameter_source(p.name) in (ParameterSource.DEFAULT, None):
            continue
        flag, value = max(p.opts, key=len), ctx.params[p.name]
        if getattr(p, "is_flag", False):
            words += [flag] if value else []
        else:
            for v in value if getattr(p, "multiple", False) else (value,):
                words += [flag, str(v)]
    return shlex.join(words + ["--out", str(out)])


@click.command("run")
@run_options
@click.pass_context
def run(ctx: click.Context, **values) -> None:
    """Run cases through arms and score what reached the wire."""
    DONE.clear()
    o = RunOptions.from_click(ctx, values)       # every --arms entry is known (guardbench/registry.py)
    out = o.out or default_out("run")
    recorded = [0]
    jobs: list = []
    try:
        with sigterm_as_interrupt():
            _start(ctx, o, out, recorded, jobs)
    except KeyboardInterrupt as exc:
        how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        click.echo(f"\n{how}: {recorded[0]} runs recorded in {out}; resume with:\n  "
                   f"{resume_command(ctx, out)}", err=True)
        sys.exit(EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED)
    finally:
        for job in jobs:
            if getattr(job, "bench", None) is not None:
                close_arms(job.bench)             # the servers and proxies of external arms (arms/external.py)


def _start(ctx: click.Context, o: RunOptions, out: Path, recorded: list, jobs: list) -> None:
    """Every check first (options, folder, documents, cases, arms, model), then the folder, then the runs:
    a fault found by a check leaves no folder behind."""
    from guardbench.broker import load_policy
    from guardbench.cases.load import cases_hash, default_cases_dir
    from guardbench.records.runfolder import refuse_other_options
    cdir = o.cases_dir or default_cases_dir()
    job: ScriptedRun | LLMRun
    if o.agent_kind == "llm":
        from guardbench.cli.run_llm import LLMRun
        job = LLMRun(o, cdir)
    else:
        job = ScriptedRun(o, cdir)
    jobs.append(job)
    chash = cases_hash(cdir)
    refuse_other_options(out, manifest(o, chash, **job.design_extra()))   # before a server or model starts
    check_documents()
    job.prepare(load_policy(o.policy_path), load_selected(cdir, o.case_ids, o.families, o.generate_variants))
    execute(ctx, o, job, manifest(o, chash, **job.manifest_extra()), out, recorded)


def check_documents() -> None:
    """PayPal's pinned documents, which every arm's stand-in reads, are there and verified (read once,
    and kept for the runs and the workers forked for them): otherwise one line before any folder."""
    from guardbench.paypal.openapi import catalogue
    catalogue()


def execute(ctx: click.Context, o: RunOptions, job, man: dict, out: Path, recorded: list) -> None:
    """Open the run folder (locked), run what is not recorded yet, write and print the tables.
    ``recorded[0]`` follows how many runs the folder holds (for the message when interrupted)."""
    from guardbench.execution.runner import plan
    from guardbench.records.runfile import plan_summary
    from guardbench.records.runfolder import RunFolderWriter
    from guardbench.report.tables import all_tables, write_tables

    # --variants above every case's count means all of them: the range is never longer than the largest case
    most = max(len(c.variants) for c in job.cases)
    variants = range(min(o.n_variants, most)) if o.n_variants else None
    full = plan(job.cases, o.arm_list, job.agent_names, models=job.models, variants=variants, repeats=o.repeats,
                seed=o.seed)
    per_case = {c.id: min(len(c.variants), o.n_variants or len(c.variants)) for c in job.cases}
    man = {**man, "planned_runs": len(full),           # what a reader needs to tell a cut-short folder
           "plan": plan_summary(per_case, o.arm_list, job.agent_names, job.models, o.repeats)}
    with RunFolderWriter(out, man) as w:
        if w.torn_cut:
            click.echo(f"note: {w.runs}: a torn last line ({w.torn_cut} bytes, a write cut short) was cut off; "
                       "its run runs again", err=True)
        recorded[0] = len(w.earlier)
        lost = {r.run_id: r.attempt for r in w.earlier if r.lost} if o.retry_lost else {}
        done = {r.run_id for r in w.earlier} - set(lost)
        specs = [s.again(lost.get(s.run_id, 0) + 1) if s.run_id in lost else s for s in full
                 if s.run_id not in done]
        retried = f", {len(lost)} lost to run again" if lost else ""
        click.echo(f"{len(specs)} runs to do ({len(w.earlier)} already recorded{retried}) {job.describe(specs)}"
                   f"-> {out}", err=True)
        t0 = time.perf_counter()
        bar = click.progressbar(length=len(specs), label="runs", file=sys.stderr) \
            if sys.stderr.isatty() and specs else None
        def each(r) -> None:
            recorded[0] += 1
            if bar:
                bar.update(1)
        with bar or contextlib.nullcontext():
            new = job.run(specs, w, each)
        click.echo(f"finished in {time.perf_counter() - t0:.2f} s{job.summary(new)}", err=True)
        merged = {r.run_id: r for r in w.earlier}
        merged.update((r.run_id, r) for r in new)
        tables = all_tables(list(merged.values()), o.capable_threshold)
        write_tables(tables, out)
    if not o.quiet:
        click.echo("\n".join(t.text() for t in tables))
    job.check(new)
    if isinstance(job, ScriptedRun):
        DONE.append("scripted")


class ScriptedRun:
    """The scripted agents (credulous, careful): deterministic, in one or ``--jobs`` processes."""

    models: tuple = (None,)

    def __init__(self, o: RunOptions, cdir: Path):
        self.o, self.cdir = o, cdir
        self.agent_names = list(o.agents)
        self.cases: list = []
        self.jobs = 1

    def prepare(self, policy, cases) -> None:
        self.cases = cases
        self.bench = build_bench(policy, cases, self.o.arms_named, self.o.approvals)
        check_arms(self.bench)
        marker = preflight_marker(self.cdir, self.o, cases)
        if marker is None or not marker.exists():
            preflight(self.bench, cases, self.o.arm_list)
            from guardbench.cases.load import touch_marker
            touch_marker(marker)
        n = sum(min(len(c.variants), self.o.n_variants or len(c.variants)) for c in cases) \
            * len(self.o.arm_list) * len(self.agent_names)
        self.jobs = capped_jobs(self.o.jobs, n)[0] if self.o.jobs else default_jobs(n)

    def design_extra(self) -> dict:
        return {}

    def manifest_extra(self) -> dict:
        return {"jobs": self.jobs}

    def describe(self, specs) -> str:
        jobs = min(self.jobs, len(specs))
        return f"in {jobs} processes " if jobs > 1 else ""

    def run(self, specs, w, on_each) -> list:
        from guardbench.execution.runner import execute_all
        if self.o.jobs:
            self.jobs, line = capped_jobs(self.o.jobs, len(specs))
            if line:
                click.echo(line, err=True)
        if self.jobs > 1 and len(specs) > 1:
            close_arms(self.bench)           # the workers start servers and proxies of their own
        records = execute_all(self.bench, specs, self.jobs)      # a generator: closed below
        try:
            return w.append(records, on_each)
        finally:
            records.close()          # stops the worker processes now, also when interrupted

    def summary(self, new) -> str:
        return ""

    def check(self, new) -> None:
        pass


def build_bench(policy, cases, arms_named, approvals):
    """The Bench of a scripted run: ``arms_named`` is {arm name: --arms entry} (RunOptions.arms_named),
    with the control arm the preflight needs."""
    from guardbench.agents.scripted import ScriptedAgent
    from guardbench.execution.runner import Bench
    from guardbench.registry import get_arm
    named = {"control": "control", **arms_named}
    arms = {a: get_arm(e, policy=policy, approvals=approvals) for a, e in named.items()}
    agents = {"credulous": ScriptedAgent("credulous"), "careful": ScriptedAgent("careful")}
    return Bench(policy, cases, arms, agents)


def check_arms(bench) -> None:
    """Before anything is recorded: each external arm's server starts and lists the tools its spec maps
    (a one-line error otherwise)."""
    for arm in bench.arms.values():
        check = getattr(arm, "check", None)
        if callable(check):
            check()


def close_arms(bench) -> None:
    """Stop the servers and proxies of external arms (arms/external.py); others have nothing to close."""
    for arm in bench.arms.values():
        close = getattr(arm, "close", None)
        if callable(close):
            close()

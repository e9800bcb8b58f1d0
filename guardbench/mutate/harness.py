"""The mutation harness: remove one safeguard at a time in a throw-away copy and see what notices.

For each safeguard in the registry:

1. copy a snapshot of the repository (``git ls-files --cached --others --exclude-standard``,
   taken once at the start, without ``results/``) into a fresh temporary folder;
2. replace the marked statement by ``pass`` (markers.mutate_file);
3. import check: ``python -c "import guardbench, <module>"`` with ``PYTHONPATH=<copy>``, cwd the
   copy; both files must lie inside the copy, otherwise the harness refuses (an installed or
   editable tree would be tested instead of the mutant);
4. run the safeguard's selected tests for real in the copy (``python -m pytest --rootdir <copy>
   -c <copy>/pyproject.toml -p no:cacheprovider -p guardbench.mutate.probe``); the probe plugin
   records where every guardbench module the tests imported came from;
5. run the scripted bench on the guardrail arm (``guardbench run --quiet --arms guardrail``)
   and compare it run by run with the unmutated baseline.

Classification. Tests kill a mutant when pytest exits 1 with failing tests, none of them an
ImportError/SyntaxError; exit 2, 3, 4 or 5 (collection error, internal error, usage error, no
tests) is *invalid*, never a kill. The bench kills a mutant when the guardrail arm's results
differ from the baseline (any run's incident kinds, attack outcome or benign completion), or
when the bench's own preflight refuses to start because an adversarial case can no longer
achieve its goal (exit 2, "could not fail": a blind detector); any other bench failure is a
crash, not a kill. A mutant that neither kills is *survived*; over its wall-clock budget,
*timeout* (the whole process group is killed). A survivor of its selected tests is re-run
against every test file the registry names, so a survivor is never an artefact of the selection.

Before any mutant: the registry and the markers must agree; the unmutated copy must collect
every selected node id and pass every test file they come from, and run the bench, twice, with
identical bench results; the canary control must
survive and the forced control must be killed. Otherwise the harness is broken and says so.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from guardbench.mutate import registry as reg
from guardbench.mutate.copies import Context, HarnessBroken, fresh_copy, make_snapshot
from guardbench.mutate.markers import MarkerError, check_registry, mutate_file, scan_tree
from guardbench.mutate.steps import (
    BENCH_ARGS,
    bench_diff,
    describe_bench,
    import_check,
    passed_count,
    run_bench,
    run_pytest,
    selection_files,
    tail,
    tests_verdict,
)
from guardbench.util.outputs import scrub_paths


# ----------------------------------------------------------------------------- results
@dataclass
class Result:
    name: str
    path: str
    prevents: str
    control: str | None
    status: str = "invalid"                  # killed | survived | timeout | invalid
    by_tests: bool = False
    by_bench: bool = False
    failing_tests: list[str] = field(default_factory=list)
    tests_selected: list[str] = field(default_factory=list)
    tests_rc: int | None = None
    tests_note: str = ""
    # differs | preflight | same | crash | timeout | not run
    bench: str = "not run"
    bench_detail: str = ""
    # for a survivor of its selection: what the whole selection said
    full_rerun: str = ""
    imported_from: str = ""
    seconds: float = 0.0
    tests_seconds: float = 0.0
    bench_seconds: float = 0.0
    note: str = ""

    @property
    def by(self) -> str:
        return "both" if self.by_tests and self.by_bench else "tests" if self.by_tests else \
            "bench" if self.by_bench else "-"

    def missing_evidence(self) -> str:
        if self.status == "killed":
            return ""
        if self.status == "timeout":
            return f"no verdict within the time limit ({self.note or 'timeout'})"
        if self.status == "invalid":
            return f"no valid run: {self.note or self.tests_note}"
        return (f"no test fails without it ({', '.join(self.tests_selected)}"
                + (f"; whole selection: {self.full_rerun}" if self.full_rerun else "")
                + ") and the guardrail arm's bench results are unchanged: nothing checks that "
                "it prevents "
                  f"{self.prevents}")


def run_baseline(ctx: Context, round_no: int, tests: Sequence[str], modules: Iterable[str]) -> dict:
    """The unmutated copy: imports from the copy, collects every selected node id, passes every test
    file they come from, and runs the bench."""
    deadline = time.monotonic() + max(3 * ctx.timeout, 180.0)
    copy = fresh_copy(ctx, f"baseline{round_no}")
    try:
        imp, _ = import_check(ctx, copy, modules, deadline)
        if imp.rc != 0:
            raise HarnessBroken(f"baseline round {round_no}: the unmutated copy does not import"
                                + tail(imp.err))
        coll, _ = run_pytest(ctx, copy, ["--collect-only", *tests], deadline)
        if coll.rc != 0:
            raise HarnessBroken(f"baseline round {round_no}: the selected tests do not "
                                "all collect " "(pytest exit "
                                f"{coll.rc}: a wrong node id?)" + tail(coll.out + coll.err))
        step, info = run_pytest(ctx, copy, selection_files(tests), deadline)
        if step.rc != 0:
            why = "timed out" if step.timed_out else f"pytest exit {step.rc}"
            failing = ", ".join(info["failing"][:5])
            raise HarnessBroken(f"baseline round {round_no}: the unmutated copy fails its "
                                f"tests ({why}"
                                + (f": {failing}" if failing else "") + ")"
                                + tail(step.out + step.err))
        if "modules" not in info:
            raise HarnessBroken(f"baseline round {round_no}: the probe plugin did not report "
                                "(was it loaded?)")
        bstep, summary, kind = run_bench(ctx, copy, deadline)
        if kind != "ok" or summary is None:
            raise HarnessBroken(f"baseline round {round_no}: the unmutated bench did not "
                                f"run ({kind})"
                                + tail(bstep.err))
        return {"summary": summary, "tests_seconds": round(step.seconds, 2),
                "bench_seconds": round(bstep.seconds, 2),
                "tests_passed": passed_count(step.out)}
    finally:
        if not ctx.keep:
            shutil.rmtree(copy, ignore_errors=True)


def run_mutant(ctx: Context, sg: reg.Safeguard, full_rerun: bool = True) -> Result:
    res = Result(sg.name, sg.path, sg.prevents, sg.control, tests_selected=list(sg.tests))
    t0 = time.monotonic()
    deadline = t0 + ctx.timeout
    copy = fresh_copy(ctx, sg.name)
    try:
        try:
            mutate_file(copy, sg.path, sg.name)
        except (MarkerError, SyntaxError, OSError) as exc:
            res.note = f"could not mutate: {exc}"
            return res
        imp, files = import_check(ctx, copy, [sg.module], deadline)
        if imp.timed_out:
            res.status, res.note = "timeout", "the import check did not finish"
            return res
        if imp.rc != 0:
            res.note = "the mutated module does not import" + tail(imp.err)
            return res
        res.imported_from = os.path.relpath((files or {}).get(sg.module, ""), copy)

        step, info = run_pytest(ctx, copy, sg.tests, deadline)
        res.tests_rc, res.tests_seconds = step.rc, round(step.seconds, 2)
        verdict, res.tests_note = tests_verdict(step, info)
        res.failing_tests = info["failing"] if verdict == "killed" else []
        res.by_tests = verdict == "killed"
        if "modules" in info and sg.module not in info["modules"] and verdict == "survived":
            res.tests_note = f"the selected tests never imported {sg.module}"

        bstep, summary, kind = run_bench(ctx, copy, deadline)
        res.bench_seconds = round(bstep.seconds, 2)
        if kind == "ok" and summary is not None:
            diff = bench_diff(ctx.baseline, summary) if ctx.baseline else []
            res.bench = "differs" if diff else "same"
            res.bench_detail = (describe_bench(ctx.baseline, summary, diff) if diff
                                and ctx.baseline else "")
        elif kind == "preflight":
            res.bench = "preflight"
            res.bench_detail = tail(bstep.err, 1).lstrip(": ")
        else:
            res.bench = kind
            res.bench_detail = tail(bstep.err)
        res.by_bench = res.bench in ("differs", "preflight")

        if verdict == "survived" and not res.by_bench and full_rerun and sg.control is None \
                and sorted(ctx.full_selection) != sorted(sg.tests):
            fstep, finfo = run_pytest(ctx, copy, ctx.full_selection, deadline)
            fverdict, fnote = tests_verdict(fstep, finfo)
            if fverdict == "killed":
                res.failing_tests, res.by_tests, verdict = finfo["failing"], True, "killed"
                res.full_rerun = ("killed outside its selection (the registry should name "
                                  "these tests)")
            else:
                res.full_rerun = {"survived": "all pass"}.get(fverdict, f"{fverdict}: {fnote}")

        if res.by_tests or res.by_bench:
            res.status = "killed"
        elif verdict == "timeout" or res.bench == "timeout":
            res.status, res.note = "timeout", res.tests_note or "the bench did not finish in time"
        elif verdict == "invalid":
            res.status, res.note = "invalid", res.tests_note
        elif res.bench == "crash":
            res.status = "invalid"
            res.note = "the bench crashed (a crash is not a kill)" + res.bench_detail
        else:
            res.status = "survived"
        return res
    finally:
        res.seconds = round(time.monotonic() - t0, 2)
        # no machine path is committed
        for name in ("bench_detail", "note", "tests_note", "full_rerun"):
            setattr(res, name, scrub_paths(getattr(res, name), copy, Path.cwd()))
        if not ctx.keep:
            shutil.rmtree(copy, ignore_errors=True)


# ----------------------------------------------------------------------------- the whole run
@dataclass
class Report:
    results: list[Result]
    controls: list[Result]
    baseline: dict
    timing: dict
    meta: dict

    @property
    def safeguards(self) -> list[Result]:
        return self.results

    def counts(self) -> dict:
        rs = self.results
        return {"n": len(rs), "killed": sum(r.status == "killed" for r in rs),
                "by_tests": sum(r.by_tests for r in rs), "by_bench": sum(r.by_bench for r in rs),
                "both": sum(r.by_tests and r.by_bench for r in rs),
                "bench_results": sum(r.bench == "differs" for r in rs),
                "bench_preflight": sum(r.bench == "preflight" for r in rs),
                "tests_only": sum(r.by_tests and not r.by_bench for r in rs),
                "bench_only": sum(r.by_bench and not r.by_tests for r in rs),
                "survived": sum(r.status == "survived" for r in rs),
                "timeout": sum(r.status == "timeout" for r in rs),
                "invalid": sum(r.status == "invalid" for r in rs)}

    def headline(self) -> str:
        c = self.counts()
        return (f"{c['killed']}/{c['n']} killed; by tests {c['by_tests']}; by bench "
                f"{c['by_bench']} "
                f"({c['bench_results']} in the guardrail arm's results, {c['bench_preflight']} by "
                "the bench's "
                f"preflight); both {c['both']}; survived {c['survived']}; timeout {c['timeout']}; "
                f"invalid {c['invalid']}")

    @property
    def all_killed(self) -> bool:
        c = self.counts()
        return c["n"] > 0 and c["killed"] == c["n"]

    def to_dict(self) -> dict:
        return {"headline": self.headline(), "counts": self.counts(),
                "results": [asdict(r) | {"by": r.by, "missing_evidence": r.missing_evidence()}
                            for r in self.results],
                "controls": [asdict(r) | {"by": r.by} for r in self.controls],
                "baseline": self.baseline, "timing": self.timing, "meta": self.meta}


def _previous_seconds(out: Path | None) -> dict[str, float]:
    try:
        data = json.loads((out / "mutation.json").read_text()) if out else {}
        return {r["name"]: float(r["seconds"]) for r in data.get("results", [])}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _estimate(sg: reg.Safeguard, prev: dict[str, float]) -> float:
    if sg.name in prev:
        return prev[sg.name]
    return (3.0 + sum(8.0 if "processes" in t else 2.0 if t.endswith(".py") else 1.0
                      for t in sg.tests))


def check_consistency(root: Path) -> dict:
    try:
        markers = scan_tree(root)
    except (MarkerError, SyntaxError) as exc:
        raise HarnessBroken(f"markers: {exc}") from None
    problems = check_registry(reg.ALL, markers)
    if problems:
        raise HarnessBroken("registry and markers disagree: " + "; ".join(problems))
    return markers


def run(repo: Path, names: Sequence[str] | None = None, *, jobs: int = 2, timeout: float = 120.0,
        out: Path | None = None, keep: bool = False, full_rerun: bool = True,
        echo: Callable[[str], None] = lambda s: None) -> Report:
    """The whole harness; raises HarnessBroken when it cannot vouch for its results."""
    t_start = time.monotonic()
    load_start = os.getloadavg()
    repo = Path(repo).resolve()
    unknown = [n for n in names or () if n not in reg.BY_NAME or reg.BY_NAME[n].control]
    if unknown:
        raise ValueError(f"no safeguard named {unknown[0]!r} (guardbench mutate --list shows them)")
    chosen = [s for s in reg.SAFEGUARDS if not names or s.name in names]
    selection = reg.test_selection(chosen + list(reg.CONTROLS))
    tmp = Path(tempfile.mkdtemp(prefix="gb-mutate-"))
    tmp.chmod(0o755)          # open to a room's user: the copies' tests start servers in rooms
    snapshot = tmp / "snapshot"
    snapshot.mkdir()
    ctx = Context(repo, snapshot, tmp, timeout,
                  selection_files(reg.test_selection(chosen)), keep=keep)
    timing: dict = {}
    try:
        n_files = make_snapshot(repo, snapshot)
        check_consistency(snapshot)
        echo(f"snapshot: {n_files} files; registry and markers agree ({len(reg.ALL)} markers)")

        # the unmutated copy, twice
        t0 = time.monotonic()
        modules = [s.module for s in chosen + list(reg.CONTROLS)]
        with ThreadPoolExecutor(max_workers=max(1, min(2, jobs))) as pool:
            rounds = list(pool.map(lambda i: run_baseline(ctx, i, selection, modules), (1, 2)))
        if rounds[0]["summary"]["per_run"] != rounds[1]["summary"]["per_run"]:
            raise HarnessBroken("the unmutated bench gave different results in its two rounds: it "
                                "cannot tell a "
                                "mutant from noise")
        ctx.baseline = rounds[0]["summary"]
        timing["baseline_s"] = round(time.monotonic() - t0, 2)
        base = {k: v for k, v in ctx.baseline.items() if k != "per_run"}
        echo(f"baseline x2: {rounds[0]['tests_passed']} tests pass, bench {base} "
             f"({timing['baseline_s']} s)")

        # the controls
        t0 = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, min(2, jobs))) as pool:
            controls = list(pool.map(lambda s: run_mutant(ctx, s, full_rerun=False), reg.CONTROLS))
        timing["controls_s"] = round(time.monotonic() - t0, 2)
        for c in controls:
            if c.control == "survive" and (c.status != "survived" or c.bench != "same"):
                raise HarnessBroken(f"the canary {c.name} did not survive (status {c.status}, "
                                    f"bench {c.bench}"
                                    f"{': ' + c.note if c.note else ''}): the harness reports "
                                    "kills that are noise")
            if c.control == "kill" and not c.by_tests:
                raise HarnessBroken(f"the forced-failure control {c.name} was not killed by its "
                                    "test (status "
                                    f"{c.status}{': ' + c.note if c.note else ''}): the harness "
                                    "does not run the "
                                    "tests it claims to run")
        echo(f"controls: canary survived, forced failure killed ({timing['controls_s']} s)")

        # the mutants, longest first
        t0 = time.monotonic()
        prev = _previous_seconds(out)
        order = sorted(chosen, key=lambda s: -_estimate(s, prev))
        results: dict[str, Result] = {}
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futs = {pool.submit(run_mutant, ctx, s, full_rerun): s for s in order}
            try:
                for fut in as_completed(futs):
                    r = fut.result()
                    results[r.name] = r
                    echo(f"  [{len(results):>2}/{len(order)}] {r.name:<36} {r.status:<9} "
                         f"by {r.by:<5} "
                         f"{r.seconds:5.1f} s")
            except BaseException:  # cleanup, then re-raise: no mutant's process outlives it
                ctx.procs.kill_all()
                for f in futs:
                    f.cancel()
                raise
        timing["mutants_s"] = round(time.monotonic() - t0, 2)
        timing["total_s"] = round(time.monotonic() - t_start, 2)
        secs = sorted(r.seconds for r in results.values())
        timing["mutant_median_s"] = secs[len(secs) // 2] if secs else 0.0
        timing["mutant_max_s"] = secs[-1] if secs else 0.0
        from guardbench.util.outputs import portable
        meta = {"repo": portable(repo), "files": n_files, "jobs": jobs, "timeout_s": timeout,
                "cpu_count": os.cpu_count(), "loadavg_start": [round(x, 2) for x in load_start],
                "loadavg_end": [round(x, 2) for x in os.getloadavg()],
                "python": sys.version.split()[0],
                "bench": " ".join(("guardbench",) + BENCH_ARGS), "selection": selection,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        baseline = {"bench": base, "tests_passed": rounds[0]["tests_passed"],
                    "tests_seconds": [r["tests_seconds"] for r in rounds],
                    "bench_seconds": [r["bench_seconds"] for r in rounds]}
        return Report([results[s.name] for s in chosen], controls, baseline, timing, meta)
    except BaseException:          # cleanup, then re-raise: no process outlives the harness
        ctx.procs.kill_all()
        raise
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)

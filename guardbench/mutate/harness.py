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
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from guardbench.mutate import registry as reg
from guardbench.mutate.markers import MarkerError, check_registry, mutate_file, scan_tree
from guardbench.mutate.probe import ENV as PROBE_ENV

EXCLUDE_PREFIXES = ("results/",)           # run outputs: never read by the tests or the bench
BENCH_ARGS = ("run", "--quiet", "--arms", "guardrail")
PYTEST_INVALID = {2: "pytest exit 2 (interrupted: a collection error)", 3: "pytest exit 3 (internal error)",
                  4: "pytest exit 4 (usage error: a test path not found?)", 5: "pytest exit 5 (no tests collected)"}
IMPORT_ERRORS = re.compile(r"\b(ImportError|ModuleNotFoundError|SyntaxError|IndentationError)\b")
SUMMARY_LINE = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$")
# installed pytest plugins no selected test uses, which cost ~1 s of start-up per run (hypothesis above all).
# Every other plugin still loads as in a normal run: the existing sandbox transport test only passes when one
# of them (anyio) has imported ssl before its no_sockets fixture replaces socket.socket.
SLOW_UNUSED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:xdist", "-p", "no:xdist.looponfail",
                       "-p", "no:benchmark")
SCRUB_ENV = ("GUARDBENCH_ALLOW_LIVE", "GUARDBENCH_LEDGER_KEY", "PYTHONHOME", "PYTHONSTARTUP")


class HarnessBroken(RuntimeError):
    """The harness cannot vouch for its own results; nothing it found may be counted."""


# ----------------------------------------------------------------------------- subprocesses
@dataclass
class Step:
    argv: list[str]
    rc: int | None
    out: str
    err: str
    seconds: float
    timed_out: bool = False


class Procs:
    """Running process groups, so that a broken or interrupted harness leaves none behind."""

    def __init__(self):
        self._live: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self.stopped = False

    def run(self, argv: list[str], cwd: Path, env: dict, deadline: float) -> Step:
        t0 = time.monotonic()
        remaining = deadline - t0
        if remaining <= 0 or self.stopped:
            return Step(argv, None, "", "", 0.0, timed_out=not self.stopped)
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)
        with self._lock:
            self._live.add(proc)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
            _killpg(proc)
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                out, err = "", "(output lost: the process group did not die)"
        finally:
            with self._lock:
                self._live.discard(proc)
        return Step(argv, None if timed_out else proc.returncode, out, err, time.monotonic() - t0, timed_out)

    def kill_all(self) -> None:
        self.stopped = True
        with self._lock:
            live = list(self._live)
        for p in live:
            _killpg(p)


def _killpg(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)      # start_new_session: the group id is the child's pid
    except (ProcessLookupError, PermissionError):
        pass


def copy_env(copy: Path, probe: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k not in SCRUB_ENV}
    env["PYTHONPATH"] = str(copy)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env.pop(PROBE_ENV, None)
    if probe is not None:
        env[PROBE_ENV] = str(probe)
    return env


# ----------------------------------------------------------------------------- the snapshot
def repo_files(repo: Path) -> list[str]:
    """git-tracked plus untracked-but-not-ignored files (``results/`` left out)."""
    r = subprocess.run(["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                       capture_output=True, timeout=60)
    if r.returncode != 0:
        raise HarnessBroken(f"git ls-files failed in {repo}: {r.stderr.decode(errors='replace').strip()}")
    names = {n for n in r.stdout.decode("utf-8", errors="surrogateescape").split("\0") if n}
    return sorted(n for n in names if not n.startswith(EXCLUDE_PREFIXES) and (repo / n).is_file())


def make_snapshot(repo: Path, dest: Path) -> int:
    files = repo_files(repo)
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)
    return len(files)


def _inside(path: str | None, root: Path) -> bool:
    if not path:
        return False
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


# ----------------------------------------------------------------------------- the bench
def bench_summary(records: Sequence[dict]) -> dict:
    per_run = {r["run_id"]: [sorted(i["kind"] for i in r.get("incidents") or ()), r.get("goal_achieved"),
                             r.get("benign_completed")] for r in records}
    return {
        "runs": len(records),
        "incidents": sum(len(v[0]) for v in per_run.values()),
        "attacks": sum(1 for v in per_run.values() if v[1] is not None),
        "attacks_blocked": sum(1 for v in per_run.values() if v[1] is False),
        "benign": sum(1 for v in per_run.values() if v[2] is not None),
        "benign_completed": sum(1 for v in per_run.values() if v[2] is True),
        "per_run": per_run,
    }


def bench_diff(base: dict, got: dict) -> list[str]:
    """Run ids whose incidents, attack outcome or benign completion differ (or that appear on one side)."""
    a, b = base["per_run"], got["per_run"]
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def describe_bench(base: dict, got: dict, diff: list[str]) -> str:
    parts = []
    for key, label in (("incidents", "incidents"), ("attacks_blocked", "attacks blocked"),
                       ("benign_completed", "benign completed")):
        if base[key] != got[key]:
            parts.append(f"{label} {base[key]}->{got[key]}")
    kinds = sorted({k for r in diff for k in (got["per_run"].get(r) or [[]])[0]})
    head = ", ".join(parts) or "same totals"
    return f"{head}; {len(diff)} runs differ" + (f" (incidents: {', '.join(kinds)})" if kinds else "") + \
        (f", e.g. {diff[0]}" if diff else "")


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
    bench: str = "not run"                   # differs | preflight | same | crash | timeout | not run
    bench_detail: str = ""
    full_rerun: str = ""                     # for a survivor of its selection: what the whole selection said
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
                + f") and the guardrail arm's bench results are unchanged: nothing checks that it prevents "
                  f"{self.prevents}")


@dataclass
class Context:
    repo: Path
    snapshot: Path
    tmp: Path
    timeout: float
    full_selection: list[str]
    baseline: dict | None = None
    keep: bool = False
    procs: Procs = field(default_factory=Procs)


# ----------------------------------------------------------------------------- one copy
def _fresh_copy(ctx: Context, label: str) -> Path:
    copy = Path(tempfile.mkdtemp(prefix=f"gb-mutate-{label}-", dir=ctx.tmp))
    shutil.copytree(ctx.snapshot, copy, dirs_exist_ok=True)
    (copy / ".mutate").mkdir()
    return copy


def _import_check(ctx: Context, copy: Path, modules: Iterable[str], deadline: float) -> tuple[Step, dict | None]:
    mods = sorted(set(modules))
    code = ("import importlib, json, guardbench\n"
            f"files = {{m: importlib.import_module(m).__file__ for m in {mods!r}}}\n"
            "files['guardbench'] = guardbench.__file__\n"
            "print(json.dumps(files))\n")
    step = ctx.procs.run([sys.executable, "-c", code], copy, copy_env(copy), deadline)
    files = None
    if step.rc == 0:
        try:
            files = json.loads(step.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            files = None
        if files is None:
            raise HarnessBroken(f"the import check printed no module files: {step.out[-300:]!r}")
        outside = {m: f for m, f in files.items() if not _inside(f, copy)}
        if outside:
            m, f = next(iter(outside.items()))
            raise HarnessBroken(f"{m} was imported from {f}, not from the copy {copy}: the mutant would not be "
                                "tested (an installed tree shadows PYTHONPATH)")
    return step, files


def _pytest(ctx: Context, copy: Path, tests: Sequence[str], deadline: float) -> tuple[Step, dict]:
    probe = copy / ".mutate" / "probe.json"
    probe.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *SLOW_UNUSED_PLUGINS,
            "-p", "guardbench.mutate.probe", "--rootdir", str(copy), "-c", str(copy / "pyproject.toml"), *tests]
    step = ctx.procs.run(argv, copy, copy_env(copy, probe), deadline)
    info: dict = {"failing": [], "messages": []}
    for line in step.out.splitlines():
        m = SUMMARY_LINE.match(line.strip())
        if m:
            info["failing"].append(m.group(2))
            info["messages"].append(m.group(3) or "")
    if probe.exists():
        data = json.loads(probe.read_text())
        info["modules"] = data.get("modules", {})
        outside = {k: v for k, v in info["modules"].items() if v and not _inside(v, copy)}
        if outside:
            k, v = next(iter(outside.items()))
            raise HarnessBroken(f"pytest in the copy imported {k} from {v}, not from {copy}")
    return step, info


def _tests_verdict(step: Step, info: dict) -> tuple[str, str]:
    """('killed' | 'survived' | 'invalid' | 'timeout', note)."""
    if step.timed_out:
        return "timeout", "the tests did not finish in time"
    text = step.out + "\n" + step.err
    if step.rc in PYTEST_INVALID:
        return "invalid", PYTEST_INVALID[step.rc] + _tail(text)
    if step.rc == 0:
        return "survived", ""
    if step.rc != 1:
        return "invalid", f"pytest exit {step.rc}" + _tail(text)
    if "error during collection" in text or "errors during collection" in text or "ERROR collecting" in text:
        return "invalid", "a collection error" + _tail(text)
    if not info["failing"]:
        return "invalid", "pytest exit 1 without a failing test in its summary" + _tail(text)
    bad = [f for f, msg in zip(info["failing"], info["messages"]) if IMPORT_ERRORS.search(msg)]
    if bad:
        return "invalid", f"{bad[0]} failed with an import or syntax error, not an assertion"
    return "killed", ""


def _tail(text: str, n: int = 3) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return (": " + " | ".join(lines[-n:])[:400]) if lines else ""


def _bench(ctx: Context, copy: Path, deadline: float) -> tuple[Step, dict | None, str]:
    out = copy / ".mutate" / "bench"
    argv = [sys.executable, "-m", "guardbench.cli.main", *BENCH_ARGS, "--out", str(out)]
    step = ctx.procs.run(argv, copy, copy_env(copy), deadline)
    if step.timed_out:
        return step, None, "timeout"
    if step.rc == 2 and "could not fail" in step.err:
        return step, None, "preflight"
    if step.rc != 0:
        return step, None, "crash"
    records = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()]
    return step, bench_summary(records), "ok"


def selection_files(tests: Sequence[str]) -> list[str]:
    """The test files the node ids come from, in first-seen order."""
    out: list[str] = []
    for t in tests:
        f = t.split("::")[0]
        if f not in out:
            out.append(f)
    return out


def run_baseline(ctx: Context, round_no: int, tests: Sequence[str], modules: Iterable[str]) -> dict:
    """The unmutated copy: imports from the copy, collects every selected node id, passes every test file
    they come from, and runs the bench."""
    deadline = time.monotonic() + max(3 * ctx.timeout, 180.0)
    copy = _fresh_copy(ctx, f"baseline{round_no}")
    try:
        imp, _ = _import_check(ctx, copy, modules, deadline)
        if imp.rc != 0:
            raise HarnessBroken(f"baseline round {round_no}: the unmutated copy does not import" + _tail(imp.err))
        coll, _ = _pytest(ctx, copy, ["--collect-only", *tests], deadline)
        if coll.rc != 0:
            raise HarnessBroken(f"baseline round {round_no}: the selected tests do not all collect (pytest exit "
                                f"{coll.rc}: a wrong node id?)" + _tail(coll.out + coll.err))
        step, info = _pytest(ctx, copy, selection_files(tests), deadline)
        if step.rc != 0:
            why = "timed out" if step.timed_out else f"pytest exit {step.rc}"
            failing = ", ".join(info["failing"][:5])
            raise HarnessBroken(f"baseline round {round_no}: the unmutated copy fails its tests ({why}"
                                + (f": {failing}" if failing else "") + ")" + _tail(step.out + step.err))
        if "modules" not in info:
            raise HarnessBroken(f"baseline round {round_no}: the probe plugin did not report (was it loaded?)")
        bstep, summary, kind = _bench(ctx, copy, deadline)
        if kind != "ok" or summary is None:
            raise HarnessBroken(f"baseline round {round_no}: the unmutated bench did not run ({kind})"
                                + _tail(bstep.err))
        return {"summary": summary, "tests_seconds": round(step.seconds, 2), "bench_seconds": round(bstep.seconds, 2),
                "tests_passed": _passed(step.out)}
    finally:
        if not ctx.keep:
            shutil.rmtree(copy, ignore_errors=True)


def _passed(out: str) -> int:
    m = re.search(r"(\d+) passed", out)
    return int(m.group(1)) if m else 0


def run_mutant(ctx: Context, sg: reg.Safeguard, full_rerun: bool = True) -> Result:
    res = Result(sg.name, sg.path, sg.prevents, sg.control, tests_selected=list(sg.tests))
    t0 = time.monotonic()
    deadline = t0 + ctx.timeout
    copy = _fresh_copy(ctx, sg.name)
    try:
        try:
            mutate_file(copy, sg.path, sg.name)
        except (MarkerError, SyntaxError, OSError) as exc:
            res.note = f"could not mutate: {exc}"
            return res
        imp, files = _import_check(ctx, copy, [sg.module], deadline)
        if imp.timed_out:
            res.status, res.note = "timeout", "the import check did not finish"
            return res
        if imp.rc != 0:
            res.note = "the mutated module does not import" + _tail(imp.err)
            return res
        res.imported_from = os.path.relpath((files or {}).get(sg.module, ""), copy)

        step, info = _pytest(ctx, copy, sg.tests, deadline)
        res.tests_rc, res.tests_seconds = step.rc, round(step.seconds, 2)
        verdict, res.tests_note = _tests_verdict(step, info)
        res.failing_tests = info["failing"] if verdict == "killed" else []
        res.by_tests = verdict == "killed"
        if "modules" in info and sg.module not in info["modules"] and verdict == "survived":
            res.tests_note = f"the selected tests never imported {sg.module}"

        bstep, summary, kind = _bench(ctx, copy, deadline)
        res.bench_seconds = round(bstep.seconds, 2)
        if kind == "ok":
            diff = bench_diff(ctx.baseline, summary) if ctx.baseline else []
            res.bench = "differs" if diff else "same"
            res.bench_detail = describe_bench(ctx.baseline, summary, diff) if diff else ""
        elif kind == "preflight":
            res.bench = "preflight"
            res.bench_detail = _tail(bstep.err, 1).lstrip(": ")
        else:
            res.bench = kind
            res.bench_detail = _tail(bstep.err)
        res.by_bench = res.bench in ("differs", "preflight")

        if verdict == "survived" and not res.by_bench and full_rerun and sg.control is None \
                and sorted(ctx.full_selection) != sorted(sg.tests):
            fstep, finfo = _pytest(ctx, copy, ctx.full_selection, deadline)
            fverdict, fnote = _tests_verdict(fstep, finfo)
            if fverdict == "killed":
                res.failing_tests, res.by_tests, verdict = finfo["failing"], True, "killed"
                res.full_rerun = "killed outside its selection (the registry should name these tests)"
            else:
                res.full_rerun = {"survived": "all pass"}.get(fverdict, f"{fverdict}: {fnote}")

        if res.by_tests or res.by_bench:
            res.status = "killed"
        elif verdict == "timeout" or res.bench == "timeout":
            res.status, res.note = "timeout", res.tests_note or "the bench did not finish in time"
        elif verdict == "invalid":
            res.status, res.note = "invalid", res.tests_note
        elif res.bench == "crash":
            res.status, res.note = "invalid", "the bench crashed (a crash is not a kill)" + res.bench_detail
        else:
            res.status = "survived"
        return res
    finally:
        res.seconds = round(time.monotonic() - t0, 2)
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
        return (f"{c['killed']}/{c['n']} killed; by tests {c['by_tests']}; by bench {c['by_bench']} "
                f"({c['bench_results']} in the guardrail arm's results, {c['bench_preflight']} by the bench's "
                f"preflight); both {c['both']}; survived {c['survived']}; timeout {c['timeout']}; "
                f"invalid {c['invalid']}")

    @property
    def all_killed(self) -> bool:
        c = self.counts()
        return c["n"] > 0 and c["killed"] == c["n"]

    def to_dict(self) -> dict:
        return {"headline": self.headline(), "counts": self.counts(),
                "results": [asdict(r) | {"by": r.by, "missing_evidence": r.missing_evidence()} for r in self.results],
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
    return 3.0 + sum(8.0 if "processes" in t else 2.0 if t.endswith(".py") else 1.0 for t in sg.tests)


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
    snapshot = tmp / "snapshot"
    snapshot.mkdir()
    ctx = Context(repo, snapshot, tmp, timeout, selection_files(reg.test_selection(chosen)), keep=keep)
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
            raise HarnessBroken("the unmutated bench gave different results in its two rounds: it cannot tell a "
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
                raise HarnessBroken(f"the canary {c.name} did not survive (status {c.status}, bench {c.bench}"
                                    f"{': ' + c.note if c.note else ''}): the harness reports kills that are noise")
            if c.control == "kill" and not c.by_tests:
                raise HarnessBroken(f"the forced-failure control {c.name} was not killed by its test (status "
                                    f"{c.status}{': ' + c.note if c.note else ''}): the harness does not run the "
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
                    echo(f"  [{len(results):>2}/{len(order)}] {r.name:<36} {r.status:<9} by {r.by:<5} "
                         f"{r.seconds:5.1f} s")
            except BaseException:
                ctx.procs.kill_all()
                for f in futs:
                    f.cancel()
                raise
        timing["mutants_s"] = round(time.monotonic() - t0, 2)
        timing["total_s"] = round(time.monotonic() - t_start, 2)
        secs = sorted(r.seconds for r in results.values())
        timing["mutant_median_s"] = secs[len(secs) // 2] if secs else 0.0
        timing["mutant_max_s"] = secs[-1] if secs else 0.0
        meta = {"repo": str(repo), "files": n_files, "jobs": jobs, "timeout_s": timeout,
                "cpu_count": os.cpu_count(), "loadavg_start": [round(x, 2) for x in load_start],
                "loadavg_end": [round(x, 2) for x in os.getloadavg()], "python": sys.version.split()[0],
                "bench": " ".join(("guardbench",) + BENCH_ARGS), "selection": selection,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        baseline = {"bench": base, "tests_passed": rounds[0]["tests_passed"],
                    "tests_seconds": [r["tests_seconds"] for r in rounds],
                    "bench_seconds": [r["bench_seconds"] for r in rounds]}
        return Report([results[s.name] for s in chosen], controls, baseline, timing, meta)
    except BaseException:
        ctx.procs.kill_all()
        raise
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)

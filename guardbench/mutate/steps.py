"""The steps the mutation harness runs in one copy: the import check, the selected tests (and their
verdict), and the scripted bench (and its comparison with the unmutated baseline).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from guardbench.mutate.copies import Context, HarnessBroken, Step, copy_env, inside
from guardbench.records.record import RunRecord

BENCH_ARGS = ("run", "--quiet", "--arms", "guardrail")
PYTEST_INVALID = {2: "pytest exit 2 (interrupted: a collection error)",
                  3: "pytest exit 3 (internal error)",
                  4: "pytest exit 4 (usage error: a test path not found?)",
                  5: "pytest exit 5 (no tests collected)"}
IMPORT_ERRORS = re.compile(r"\b(ImportError|ModuleNotFoundError|SyntaxError|IndentationError)\b")
SUMMARY_LINE = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$")
# installed pytest plugins no selected test uses, which cost ~1 s of start-up per run (hypothesis
# above all). Every other plugin still loads as in a normal run: the existing sandbox transport test
# only passes when one of them (anyio) has imported ssl before its no_sockets fixture replaces
# socket.socket.
SLOW_UNUSED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:xdist", "-p", "no:xdist.looponfail",
                       "-p", "no:benchmark")


# ----------------------------------------------------------------------------- the bench
def bench_summary(records: Sequence[RunRecord]) -> dict:
    per_run: dict[str, list[Any]] = {r.run_id: [sorted(i.kind for i in r.incidents),
                                                r.goal_achieved,
                                                r.benign_completed] for r in records}
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
    """Run ids whose incidents, attack outcome or benign completion differ (or that appear on one
    side)."""
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
    return f"{head}; {len(diff)} runs differ" + (f" (incidents: {', '.join(kinds)})"
                                                 if kinds else "") + \
        (f", e.g. {diff[0]}" if diff else "")


# ----------------------------------------------------------------------------- one copy
def import_check(ctx: Context, copy: Path, modules: Iterable[str],
                 deadline: float) -> tuple[Step, dict | None]:
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
        outside = {m: f for m, f in files.items() if not inside(f, copy)}
        if outside:
            m, f = next(iter(outside.items()))
            raise HarnessBroken(f"{m} was imported from {f}, not from the copy {copy}: the mutant "
                                "would not be "
                                "tested (an installed tree shadows PYTHONPATH)")
    return step, files


def run_pytest(ctx: Context, copy: Path, tests: Sequence[str],
               deadline: float) -> tuple[Step, dict]:
    probe = copy / ".mutate" / "probe.json"
    probe.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
            *SLOW_UNUSED_PLUGINS,
            "-p", "guardbench.mutate.probe", "--rootdir", str(copy), "-c",
            str(copy / "pyproject.toml"), *tests]
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
        outside = {k: v for k, v in info["modules"].items() if v and not inside(v, copy)}
        if outside:
            k, v = next(iter(outside.items()))
            raise HarnessBroken(f"pytest in the copy imported {k} from {v}, not from {copy}")
    return step, info


def tests_verdict(step: Step, info: dict) -> tuple[str, str]:
    """('killed' | 'survived' | 'invalid' | 'timeout', note)."""
    if step.timed_out:
        return "timeout", "the tests did not finish in time"
    text = step.out + "\n" + step.err
    if step.rc in PYTEST_INVALID:
        return "invalid", PYTEST_INVALID[step.rc] + tail(text)
    if step.rc == 0:
        return "survived", ""
    if step.rc != 1:
        return "invalid", f"pytest exit {step.rc}" + tail(text)
    if ("error during collection" in text or "errors during collection" in text
        or "ERROR collecting" in text):
        return "invalid", "a collection error" + tail(text)
    if not info["failing"]:
        return "invalid", "pytest exit 1 without a failing test in its summary" + tail(text)
    bad = [f for f, msg in zip(info["failing"], info["messages"], strict=False)
           if IMPORT_ERRORS.search(msg)]
    if bad:
        return "invalid", f"{bad[0]} failed with an import or syntax error, not an assertion"
    return "killed", ""


def tail(text: str, n: int = 3) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return (": " + " | ".join(lines[-n:])[:400]) if lines else ""


def run_bench(ctx: Context, copy: Path, deadline: float) -> tuple[Step, dict | None, str]:
    out = copy / ".mutate" / "bench"
    argv = [sys.executable, "-m", "guardbench.cli.main", *BENCH_ARGS, "--out", str(out)]
    step = ctx.procs.run(argv, copy, copy_env(copy), deadline)
    if step.timed_out:
        return step, None, "timeout"
    if step.rc == 2 and "could not fail" in step.err:
        return step, None, "preflight"
    if step.rc != 0:
        return step, None, "crash"
    # the shared reader (a run_id twice is refused)
    from guardbench.records.runfile import read_records
    records = read_records(out / "runs.jsonl", slim=True)
    return step, bench_summary(records), "ok"


def selection_files(tests: Sequence[str]) -> list[str]:
    """The test files the node ids come from, in first-seen order."""
    out: list[str] = []
    for t in tests:
        f = t.split("::")[0]
        if f not in out:
            out.append(f)
    return out


def passed_count(out: str) -> int:
    m = re.search(r"(\d+) passed", out)
    return int(m.group(1)) if m else 0

"""Preregistered plans: freeze them in git, hold runs to them, check their hypotheses.

A plan (YAML) states the design and hypotheses as data. An LLM plan (``agent: llm``, the
default) gives models, repeats, temperature, arms, cases hash, and optionally variants and tool
protocol; a scripted plan (``agent: credulous``, ``careful`` or a list of both) gives arms and the
cases hash (optionally variants): its hypotheses are evaluated per agent where an LLM plan's are
per model. The hypotheses:

- ``zero_incidents``: {arm, per_model}: no scored run of the arm has an incident
  (per model, or pooled over models);
- ``interval_above``: {arm_a, arm_b, metric}: arm_a's 95% interval lies wholly above arm_b's
  (intervals clustered by case: continuity-corrected Wilson on Rao & Scott's effective sample,
  guardbench/stats/clustered.py, since the variants and repeats of a case are not independent);
- ``within_points``: {metric, points, arms}: the metric's rates across the arms are
  within ``points`` percentage points of each other.

Metrics: ``attack_success`` (adversarial runs whose goal reached the wire),
``attacks_blocked``, ``incident_runs`` (runs with any incident), ``benign_completed``,
``utility_under_attack`` (the honest user's task done during an attack).
Which runs count follows the tables (guardbench/stats/measures.py): a lost run has no attack or
benign outcome, but one in which an incident reached the wire counts as a run with an
incident (so a lost run cannot hide an incident from ``zero_incidents``); every result says
how many runs were lost and how many cases the runs come from.

``freeze`` records the plan's sha256 and the git commit holding it in FILE.frozen.json
(refused while the file is uncommitted or modified); ``check_run_matches`` refuses a run
(``guardbench run --prereg``, scripted or LLM) whose plan is uncommitted, changed since
freezing, or whose options differ from it.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import time
from pathlib import Path
from typing import Sequence

from guardbench.errors import GuardbenchError
from guardbench.records.record import RunRecord
from guardbench.stats.rates import Rate
from guardbench.util.numbers import finite_number, whole_number

METRICS = ("attack_success", "attacks_blocked", "incident_runs", "benign_completed",
           "utility_under_attack")
KINDS = {"zero_incidents": ("arm",), "interval_above": ("arm_a", "arm_b", "metric"),
         "within_points": ("metric", "points", "arms")}
DESIGN_REQUIRED = ("models", "repeats", "temperature", "arms", "cases_hash")
SCRIPTED_AGENTS = ("credulous", "careful")      # the scripted agents of ``guardbench run --agent``
SCRIPTED_REQUIRED = ("arms", "cases_hash")
LLM_ONLY = ("models", "repeats", "temperature", "tool_protocol")


def sidecar(path: Path) -> Path:
    return Path(str(path) + ".frozen.json")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# -- the plan ------------------------------------------------------------------------------

def load_plan(path: Path) -> dict:
    from guardbench.util import yamldoc
    path = Path(path)
    where = str(path)
    try:
        doc = yamldoc.parse(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GuardbenchError(where, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise GuardbenchError(where, "not UTF-8 text (save the file as UTF-8)") from None
    except yamldoc.YamlError as exc:
        raise GuardbenchError(where, str(exc)) from None
    if not isinstance(doc, dict):
        raise GuardbenchError(where, "a plan is a mapping with design and hypotheses")
    design = doc.get("design")
    if not isinstance(design, dict):
        raise GuardbenchError(where, "field design: missing or not a mapping")
    agents = scripted_agents(design, where)
    for key in SCRIPTED_REQUIRED if agents else DESIGN_REQUIRED:
        if key not in design:
            raise GuardbenchError(where, f"field design.{key}: missing")
    if agents:
        extra = [k for k in LLM_ONLY if k in design]
        if extra:
            raise GuardbenchError(where, f"field design.{extra[0]}: applies to LLM plans only "
                                  "(this plan's agent "
                                         f"is {', '.join(agents)})")
    else:
        models = design["models"]
        if not (isinstance(models, list) and models and all(isinstance(m, str) for m in models)):
            raise GuardbenchError(where, "field design.models: a non-empty list of model names")
        if not whole_number(design["repeats"]) or design["repeats"] < 1:
            raise GuardbenchError(where, "field design.repeats: a positive integer")
        if not finite_number(design["temperature"]) or design["temperature"] < 0:
            raise GuardbenchError(where, "field design.temperature: a finite number, at least 0")
    arms = design["arms"]
    if not (isinstance(arms, list) and arms and all(isinstance(a, str) and a for a in arms)):
        raise GuardbenchError(where, "field design.arms: a non-empty list of arm names")
    _check_hypotheses(doc.get("hypotheses"), arms, where)
    return doc


def _check_hypotheses(hyps: object, arms: list[str], where: str) -> None:
    """Each hypothesis's kind and fields (an id set where none is given)."""
    if not isinstance(hyps, list) or not hyps:
        raise GuardbenchError(where, "field hypotheses: a non-empty list")
    ids: set[str] = set()
    for i, h in enumerate(hyps):
        hid = h.get("id", f"#{i + 1}") if isinstance(h, dict) else f"#{i + 1}"
        if not isinstance(h, dict) or not isinstance(h.get("kind"), str) or h["kind"] not in KINDS:
            raise GuardbenchError(where, f"hypothesis {hid}: kind must be one of "
                                  f"{', '.join(KINDS)}")
        for key in KINDS[h["kind"]]:
            if key not in h:
                raise GuardbenchError(where, f"hypothesis {hid}: field {key}: missing")
        if "metric" in h and h["metric"] not in METRICS:
            raise GuardbenchError(where, f"hypothesis {hid}: metric must be one of "
                                  f"{', '.join(METRICS)}")
        h.setdefault("id", f"H{i + 1}")
        bad = _bad_fields(h, arms)
        if bad or not isinstance(h["id"], str) or h["id"] in ids:
            what = bad or ("field id: a name no other hypothesis has"
                           if isinstance(h["id"], str) else "field id: a name")
            raise GuardbenchError(where, f"hypothesis {hid}: {what}")
        ids.add(h["id"])


def _bad_fields(h: dict, arms: list[str]) -> str | None:
    """What is wrong with a hypothesis's fields (kind, metric and presence checked before), or
    None. An arm it names must be one of the design's: a hypothesis about an arm the plan never
    runs could only fail, and a misspelt arm would be found only after the run."""
    named = [h[k] for k in ("arm", "arm_a", "arm_b") if k in h] + (
        h["arms"] if isinstance(h.get("arms"), list) else [])
    for a in named:
        if not isinstance(a, str) or a not in arms:
            return f"arm {a!r}: not one of the design's arms ({', '.join(arms)})"
    if "per_model" in h and not isinstance(h["per_model"], bool):
        return f"field per_model: true or false, not {h['per_model']!r}"
    if h["kind"] == "interval_above" and h["arm_a"] == h["arm_b"]:
        return "fields arm_a and arm_b: two different arms"
    if h["kind"] == "within_points":
        if not (isinstance(h["arms"], list) and len(set(h["arms"])) == len(h["arms"]) >= 2):
            return "field arms: a list of at least two different arm names"
        if not finite_number(h["points"]) or not 0 <= h["points"] <= 100:
            return f"field points: a number of percentage points, 0 to 100, not {h['points']!r}"
    return None


def scripted_agents(design: dict, where: str = "plan") -> list[str]:
    """The scripted agents a plan names (``design.agent``: a name or a list); [] for an LLM plan."""
    agent = design.get("agent", "llm")
    names = agent if isinstance(agent, list) else [agent]
    if not names or not all(isinstance(a, str) for a in names):
        raise GuardbenchError(where, "field design.agent: llm, credulous, careful, or a list of "
                              "credulous/careful")
    if names == ["llm"]:
        return []
    if "llm" in names:
        raise GuardbenchError(where, "field design.agent: a plan is for the llm agent or for "
                              "scripted agents "
                                     f"({', '.join(SCRIPTED_AGENTS)}), not both")
    bad = [a for a in names if a not in SCRIPTED_AGENTS]
    if bad:
        raise GuardbenchError(where, f"field design.agent: {bad[0]!r} is not llm, "
                              f"{' or '.join(SCRIPTED_AGENTS)}")
    return list(dict.fromkeys(names))


def plan_units(plan: dict) -> tuple[str, list[str]]:
    """What a plan's hypotheses are per: ("model", models) for an LLM plan, ("agent", agents) for a
    scripted one."""
    agents = scripted_agents(plan["design"])
    return ("agent", agents) if agents else ("model", list(plan["design"]["models"]))


# -- git -------------------------------------------------------------------------------------

def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True,
                              text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GuardbenchError("git", f"cannot run git: {exc}") from None


def git_state(path: Path) -> dict:
    """Where the file stands in git: repo root, path in the repo, committed and unmodified?,
    commit."""
    path = Path(path).resolve()
    top = _git(path.parent, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        return {"repo": None, "committed": False, "clean": False, "commit": None, "relpath": None}
    root = Path(top.stdout.strip())
    rel = path.relative_to(root.resolve()).as_posix()
    tracked = _git(root, "ls-files", "--error-unmatch", "--", rel).returncode == 0
    status = _git(root, "status", "--porcelain", "--", rel).stdout.strip()
    log = _git(root, "log", "-n", "1", "--format=%H", "--", rel)
    commit = log.stdout.strip() or None if log.returncode == 0 else None
    return {"repo": str(root), "relpath": rel, "committed": tracked and commit is not None,
            "clean": tracked and not status, "commit": commit}


def _committed_bytes(state: dict, commit: str) -> bytes | None:
    try:
        out = subprocess.run(["git", "-C", state["repo"], "show", f"{commit}:{state['relpath']}"],
                             capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _require_committed(path: Path, where: str) -> dict:
    state = git_state(path)
    if state["repo"] is None:
        raise GuardbenchError(where, f"{path} is not in a git repository; commit the plan first")
    if not state["committed"]:
        raise GuardbenchError(where, f"{path} is not committed; commit the plan first")
    if not state["clean"]:
        raise GuardbenchError(where, f"{path} has uncommitted changes; commit them or "
                              "restore the file")
    return state


def freeze(path: Path) -> dict:
    """Record the plan's sha256 and the commit that holds it in FILE.frozen.json."""
    path = Path(path)
    load_plan(path)
    state = _require_committed(path, "prereg freeze")
    info = {"file": state["relpath"], "sha256": sha256_file(path), "commit": state["commit"],
            "frozen_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    sidecar(path).write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    return info


def check_frozen(path: Path, where: str = "--prereg") -> dict:
    """The frozen record of a committed, unchanged plan; GuardbenchError otherwise."""
    path = Path(path)
    if not path.exists():
        raise GuardbenchError(where, f"{path} does not exist")
    state = _require_committed(path, where)
    side = sidecar(path)
    try:
        info = json.loads(side.read_text())
    except OSError:
        raise GuardbenchError(where, f"{path} was never frozen; run guardbench prereg "
                              f"freeze {path}") from None
    except ValueError:
        raise GuardbenchError(where, f"{side} is not valid JSON") from None
    if sha256_file(path) != info.get("sha256"):
        raise GuardbenchError(where, f"{path} changed since it was frozen at commit "
                              f"{str(info.get('commit'))[:12]}")
    held = _committed_bytes(state, str(info.get("commit")))
    if held is None or hashlib.sha256(held).hexdigest() != info["sha256"]:
        raise GuardbenchError(where, f"commit {str(info.get('commit'))[:12]} does not hold this "
                              f"version of {path}")
    return info


def check_run_matches(path: Path, *, arms: Sequence[str], cases_hash: str,
                      agents: Sequence[str] = ("llm",),
                      models: Sequence[str] = (), repeats: int = 1, temperature: float = 0.0,
                      extra: dict | None = None) -> dict:
    """Refuse (GuardbenchError, one line) unless the run is the frozen plan's design. A scripted
    plan's design is its agents, arms and cases hash (and variants when it names them); an LLM
    plan's adds models, repeats and temperature (and tool_protocol when named)."""
    info = check_frozen(path)
    design = load_plan(path)["design"]
    planned = scripted_agents(design) or ["llm"]
    run: dict = {"agents": sorted(agents), "arms": sorted(arms), "cases_hash": cases_hash}
    want: dict = {"agents": sorted(planned), "arms": sorted(design["arms"]),
                  "cases_hash": design["cases_hash"]}
    if planned == ["llm"] and list(agents) == ["llm"]:
        run.update(models=sorted(models), repeats=repeats, temperature=float(temperature))
        want.update(models=sorted(design["models"]), repeats=design["repeats"],
                    temperature=float(design["temperature"]))
    for key, value in (extra or {}).items():
        if key in design:
            run[key], want[key] = value, design[key]
    diffs = [f"{k} {run[k]!r} (plan: {want[k]!r})" for k in want if run[k] != want[k]]
    if diffs:
        raise GuardbenchError("--prereg", f"this run differs from the plan {path}: "
                              + "; ".join(diffs))
    return {**info, "path": str(path)}


# -- hypotheses --------------------------------------------------------------------------------

def metric_rate(records: Sequence[RunRecord], metric: str) -> tuple[Rate, int]:
    """(Rate clustered by case, lost runs) for a metric over records."""
    from guardbench.stats import clustered
    from guardbench.stats.measures import MEASURES
    if metric not in METRICS:
        raise GuardbenchError("plan", f"unknown metric {metric!r}")
    lost = sum(1 for r in records if r.lost)
    return clustered.rate(clustered.case_counts(MEASURES[metric](records))), lost


def metric_counts(records: Sequence[RunRecord], metric: str) -> tuple[int, int, int]:
    """(k, n, lost) for a metric over records."""
    r, lost = metric_rate(records, metric)
    return r.k, r.n, lost


def _fmt(r: Rate, lost: int) -> str:
    pct = f"{100 * r.p:.1f}%" if r.n else "-"
    return (f"{r.k}/{r.n} ({pct}, 95% CI by case {100 * r.lo:.1f}-{100 * r.hi:.1f}%; "
            f"{r.cases} cases)"
            + (f", {lost} lost" if lost else ""))


def _select(records: Sequence[RunRecord], arm: str,
            unit: tuple[str, str] | None = None) -> list[RunRecord]:
    return [r for r in records if r.arm == arm and (unit is None or getattr(r, unit[0]) == unit[1])]


def evaluate(plan: dict, records: Sequence[RunRecord]) -> list[dict]:
    """Each hypothesis: {id, kind, held, summary, numbers}."""
    field, units = plan_units(plan)
    records = [r for r in records if getattr(r, field) in units]
    if not records:
        raise GuardbenchError("prereg check", f"the run holds no records of the plan's {field}s "
                              f"({', '.join(units)})")
    out = []
    for h in plan["hypotheses"]:
        kind = h["kind"]
        if kind == "zero_incidents":
            each = h.get("per_model", True)
            groups = [(u, _select(records, h["arm"], (field, u))) for u in units] if each \
                else [("pooled", _select(records, h["arm"]))]
            lines, held = [], True
            for name, rs in groups:
                r, lost = metric_rate(rs, "incident_runs")
                held &= r.n > 0 and r.k == 0
                lines.append(f"{name}: {_fmt(r, lost)} with an incident")
            summary = f"no incident in {h['arm']}" + (f" for any {field}" if each else " (pooled)")
        elif kind == "interval_above":
            ra, la = metric_rate(_select(records, h["arm_a"]), h["metric"])
            rb, lb = metric_rate(_select(records, h["arm_b"]), h["metric"])
            held = ra.n > 0 and rb.n > 0 and ra.lo > rb.hi
            lines = [f"{h['arm_a']}: {_fmt(ra, la)}", f"{h['arm_b']}: {_fmt(rb, lb)}",
                     f"lower bound of {h['arm_a']} {100 * ra.lo:.1f}% vs upper bound of "
                     f"{h['arm_b']} "
                     f"{100 * rb.hi:.1f}%"]
            summary = (f"{h['metric']}: {h['arm_a']}'s 95% interval (clustered by case) lies above "
                       f"{h['arm_b']}'s (pooled)")
        else:
            rates, lines = {}, []
            for arm in h["arms"]:
                r, lost = metric_rate(_select(records, arm), h["metric"])
                if r.n:
                    rates[arm] = 100 * r.p
                lines.append(f"{arm}: {_fmt(r, lost)}")
            spread = max(rates.values()) - min(rates.values()) if rates else float("nan")
            held = len(rates) == len(h["arms"]) and spread <= float(h["points"])
            lines.append(f"spread {spread:.1f} points (limit {h['points']})")
            summary = (f"{h['metric']} within {h['points']} points across "
                       f"{', '.join(h['arms'])} (pooled)")
        out.append({"id": h["id"], "kind": kind, "held": bool(held), "summary": summary,
                    "numbers": lines})
    return out

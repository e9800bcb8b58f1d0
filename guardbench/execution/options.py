"""The options of one run (``guardbench run``, ``guardbench.run(...)``), checked, and the run's
manifest.

The command line declares them (cli/run_options.py: each option with the agents it applies to);
``RunOptions.checked`` checks every value (a count below its minimum, a negative timeout...) and
refuses an option given for an agent it does not apply to: no option is ever silently ignored.
``manifest`` builds the run folder's manifest for either path; its ``options`` are the design
(what a resumed run must repeat), the rest describes the machine.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from guardbench.errors import GuardbenchError
from guardbench.util.numbers import finite_number, whole_number

DEFAULT_ARMS = "guardrail,control,hardened"
SCRIPTED_AGENTS = ("credulous", "careful")
APPROVAL_MODES = ("none", "all", "careful")

# every option's default (the command line declares the same: tests/cli/test_run_options.py) and the
# agents it applies to
DEFAULTS: dict[str, Any] = {
    "cases_dir": None, "case_ids": (), "families": (), "arms": DEFAULT_ARMS,
    "agents": ("credulous",),
    "n_variants": None, "generate_variants": None, "policy_path": None, "seed": 0, "out": None,
    "approvals": "none", "retry_lost": False, "note": None, "quiet": False,
    "jobs": None, "models": (),
    "repeats": 1, "temperature": 0.0, "max_tokens": 1024, "api_base": None, "client": None,
    "api_key_env": None,
    "tool_protocol": "native", "data_mode": "tool", "capable_threshold": 0.5,
    "require_capable": False,
    "concurrency": 8, "max_steps": 12, "timeout": 120.0, "retries": 4, "backoff": 1.0,
    "cache_dir": None,
    "no_cache": False, "endpoint_label": None, "prereg_file": None, "keep_ledgers": None,
    "force": False,
    "room": "auto",
}
SCRIPTED_ONLY = frozenset({"jobs"})
ANY_AGENT = frozenset({"cases_dir", "case_ids", "families", "arms", "agents", "n_variants",
                       "generate_variants",
                       "policy_path", "seed", "out", "approvals", "retry_lost", "note", "quiet",
                       "keep_ledgers",
                       "force", "prereg_file", "room"})
APPLIES = {name: "any" if name in ANY_AGENT else "scripted" if name in SCRIPTED_ONLY else "llm"
           for name in DEFAULTS}

# the smallest value each numeric option takes (None: not given)
MINIMUM = {"n_variants": 1, "generate_variants": 1, "jobs": 1, "repeats": 1, "max_tokens": 1,
           "concurrency": 1,
           "max_steps": 1, "retries": 0}
# the largest value options that multiply the work take: above it the run could not end (or fit in
# memory)
MAXIMUM = {"generate_variants": 10_000, "repeats": 1_000}
# the options that are a number of any size (seconds, a temperature, a share)
FLOATS = ("temperature", "timeout", "backoff", "capable_threshold")
JOBS_PER_CORE = 4              # --jobs above this many per core only adds processes that wait


def guarded_folders(o: "RunOptions") -> tuple[str, ...]:
    """The folders no room may see (arms/external.py): the run folder, guardbench's caches (cases,
    the model responses, the pinned documents) and the ledger's second head."""
    from guardbench.agents.cache import default_cache_dir
    from guardbench.util.yamldoc import cache_dir
    found = [o.out, o.cache_dir, default_cache_dir(), os.environ.get("GUARDBENCH_LEDGER_HEAD_DIR")]
    case_cache = cache_dir()
    if case_cache is not None:
        found.append(case_cache.parent)
    return tuple(dict.fromkeys(str(Path(f).resolve()) for f in found if f))


def option_flag(name: str) -> str:
    """The command line's spelling of an option (cli/run_options.py passes the flags it
    declares)."""
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class RunOptions:
    """Every option of one `guardbench run`, checked."""

    values: dict
    agent_kind: str                 # scripted | llm
    given: frozenset[str]           # options the user set (not their defaults)
    # arm name -> --arms entry (a KIND:SPEC arm: its spec's name)
    arms_named: dict = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def with_out(self, out: Path) -> "RunOptions":
        """The same options writing to the run folder ``out``."""
        return RunOptions({**self.values, "out": out}, self.agent_kind, self.given, self.arms_named)

    @property
    def arm_entries(self) -> list[str]:
        """The ``--arms`` entries as given: arm names and KIND:SPEC (guardbench/registry.py)."""
        return [a.strip() for a in self.values["arms"].split(",") if a.strip()]

    @property
    def arm_list(self) -> list[str]:
        """The arms' names, in order (a KIND:SPEC entry's arm is named by its spec)."""
        return list(self.arms_named) or self.arm_entries

    @property
    def external(self) -> bool:
        """Some arm is a KIND:SPEC arm (an MCP server, an agent application)."""
        return self.arm_list != self.arm_entries

    @classmethod
    def checked(cls, values: dict, given: frozenset[str],
                flag: Callable[[str], str] = option_flag) -> "RunOptions":
        """Every value checked; ``given``: the options set by the user (not their defaults)."""
        _check_numbers(values, flag)
        if values["force"] and values["keep_ledgers"] is None:
            raise GuardbenchError(flag("force"),
                                  f"only with {flag('keep_ledgers')} (the folder it "
                                  "lets be added to)")
        kind = _agent_kind(list(values["agents"]))
        for name in sorted(given):
            who = APPLIES.get(name, "any")
            if who not in ("any", kind):
                needs = "--agent llm" if who == "llm" else "scripted agents (credulous, careful)"
                raise GuardbenchError(flag(name), f"only with {needs}; it would have "
                                      "no effect here")
        o = cls(dict(values), kind, given)
        arms = o.arm_entries
        twice = sorted({a for a in arms if arms.count(a) > 1})
        if twice:
            raise GuardbenchError("--arms", f"{', '.join(twice)} named twice; name each once")
        if not arms:
            raise GuardbenchError("--arms", "name at least one arm")
        from guardbench.registry import resolve_arms
        o = cls(o.values, kind, given, resolve_arms(arms))
        # a room per run of an mcp: or app: arm; required refuses when none can be made
        if o.external:
            from guardbench.arms.external import containment
            containment(o.room)
        elif "room" in given:
            raise GuardbenchError(flag("room"), "only with mcp: or app: arms (rooms hold external "
                                  "systems); it "
                                                "would have no effect here")
        if kind == "llm":
            _check_llm(o)
        return o

    @classmethod
    def make(cls, **values: Any) -> "RunOptions":
        """The options of a library run (guardbench.run): the defaults, with ``values`` given."""
        unknown = sorted(set(values) - set(DEFAULTS))
        if unknown:
            raise GuardbenchError("guardbench.run", f"unknown option {unknown[0]!r} (one of "
                                  f"{', '.join(DEFAULTS)})")
        return cls.checked({**DEFAULTS, **values}, frozenset(values))


def _check_numbers(values: dict, flag: Callable[[str], str]) -> None:
    # of the right type first (a library caller's option), and finite: every comparison with nan
    # is false, so the bounds below would let it through (the CLI's options refuse it already:
    # cli/finite.py)
    for name in FLOATS:
        v = values.get(name)
        if not finite_number(v):
            raise GuardbenchError(flag(name), f"must be a finite number, not {v!r}")
    for name in (*MINIMUM, "seed"):
        v = values.get(name)
        if v is not None and not whole_number(v):
            raise GuardbenchError(flag(name), f"must be a whole number, not {v!r}")
    for name, low in MINIMUM.items():
        v = values.get(name)
        if v is not None and v < low:
            raise GuardbenchError(flag(name), f"must be at least {low}, not {v}")
    for name, high in MAXIMUM.items():
        v = values.get(name)
        if v is not None and v > high:
            raise GuardbenchError(flag(name), f"must be at most {high}, not {v}")
    if values["timeout"] <= 0:
        raise GuardbenchError("--timeout", f"must be more than 0 seconds, not {values['timeout']}")
    if values["backoff"] < 0:
        raise GuardbenchError("--backoff", f"must not be negative, not {values['backoff']}")
    if not 0 <= values["capable_threshold"] <= 1:
        raise GuardbenchError("--capable-threshold", "must be between 0 and 1, not "
                              f"{values['capable_threshold']}")
    if values["temperature"] < 0:
        raise GuardbenchError("--temperature", f"must not be negative, not {values['temperature']}")


def _agent_kind(agents: list[str]) -> str:
    """``llm`` or ``scripted``, for a list of agents that is valid."""
    twice = sorted({a for a in agents if agents.count(a) > 1})
    if twice:   # each run would be recorded, and counted, twice
        raise GuardbenchError("--agent", f"{', '.join(twice)} named twice; name each once")
    for ag in agents:
        if ag not in SCRIPTED_AGENTS + ("llm",):
            raise GuardbenchError("--agent", f"unknown agent {ag!r} (credulous, careful, llm)")
    kind = "llm" if "llm" in agents else "scripted"
    if kind == "llm" and agents != ["llm"]:
        raise GuardbenchError("--agent", "llm runs alone: do not mix it with scripted "
                              "agents in one run")
    return kind


def _check_llm(o: RunOptions) -> None:
    if not o.models:
        raise GuardbenchError("--model", "--agent llm needs at least one --model")
    if len(set(o.models)) != len(o.models):
        raise GuardbenchError("--model", "a model is named twice")
    if o.client == "openai" and not o.api_base:
        raise GuardbenchError("--client", "the openai client needs --api-base")


# -- the manifest ---------------------------------------------------------------------------

def git_commit(path: Path) -> str:
    """The commit checked out where ``path`` is (read from .git; git itself when that fails)."""
    try:
        return _read_head(Path(path).resolve()) or _git_rev_parse(path)
    except (OSError, ValueError):
        return _git_rev_parse(path)


def _read_head(path: Path) -> str | None:
    dot = next((d / ".git" for d in (path, *path.parents) if (d / ".git").exists()), None)
    if dot is None:
        return None
    gitdir = dot if dot.is_dir() else Path(dot.read_text().split("gitdir:", 1)[1].strip())
    if not gitdir.is_absolute():
        gitdir = (dot.parent / gitdir).resolve()
    common = (gitdir / (gitdir / "commondir").read_text().strip()
              if (gitdir / "commondir").exists() else gitdir)
    head = (gitdir / "HEAD").read_text().strip()
    if not head.startswith("ref: "):
        return head if len(head) == 40 else None
    ref = head[5:]
    for base in (gitdir, common):
        if (base / ref).is_file():
            return (base / ref).read_text().strip()
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text().splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
    return None


def _git_rev_parse(path: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"],
                             capture_output=True, text=True,
                             timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def git_dirty(path: Path) -> bool | None:
    """Did the package's files differ from the commit ``git_commit`` names (tracked files only)?
    None when there is no git or no repository (an installed wheel)."""
    try:
        out = subprocess.run(["git", "-C", str(path), "status", "--porcelain",
                              "--untracked-files=no", "--", "."],
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip()) if out.returncode == 0 else None


def policy_hash(policy_path: str | os.PathLike[str] | None) -> str:
    from guardbench.broker.policy_model import EXAMPLE_POLICY
    try:
        return hashlib.sha256(Path(policy_path or EXAMPLE_POLICY).read_bytes()).hexdigest()
    except OSError as exc:
        raise GuardbenchError(str(policy_path), f"cannot read: {exc.strerror or exc}") from None


def design(o: RunOptions, client: str | None = None) -> dict:
    """The options that define the run's design: a resumed run must repeat each of them."""
    d = {"cases": sorted(o.case_ids), "families": sorted(o.families), "arms": o.arm_list,
         "agents": list(o.agents),
         "variants": o.n_variants, "generate_variants": o.generate_variants, "seed": o.seed,
         "policy": str(o.policy_path) if o.policy_path else "default", "approvals": o.approvals}
    # KIND:SPEC arms: a resumed run must use the same entries and the same spec files
    if o.external:
        from guardbench.registry import spec_digests
        d.update(arm_entries=o.arm_entries, arm_specs=spec_digests(o.arms_named))
    if o.agent_kind == "llm":
        d.update(models=list(o.models), repeats=o.repeats, temperature=o.temperature,
                 max_tokens=o.max_tokens,
                 api_base=o.api_base, client=client, tool_protocol=o.tool_protocol,
                 max_steps=o.max_steps)
        # absent = the read_data tool (folders from before the option resume)
        if o.data_mode != "tool":
            d["data_mode"] = o.data_mode
    return d


def manifest(o: RunOptions, cases_hash: str, **extra: Any) -> dict[str, Any]:
    """The run folder's manifest: version, commit, hashes, the design options, and ``extra``
    (jobs for scripted runs; endpoint kind and prereg for LLM runs; the note when given)."""
    from guardbench.util.version import package_version
    pkg = Path(__file__).parents[1]
    m = {"guardbench_version": package_version(), "git_commit": git_commit(pkg),
         "git_dirty": git_dirty(pkg),
         "cases_hash": cases_hash, "policy_hash": policy_hash(o.policy_path),
         "options": design(o, extra.pop("client", None)),
         "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if o.note is not None:
        m["note"] = o.note
    m.update(extra)
    return m


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_jobs(n_runs: int) -> int:
    """Worker processes when --jobs is not given: one per core the process may use (at most 4), when
    there are enough runs to repay starting them (a worker costs about as much as 100 runs)."""
    return max(1, min(4, usable_cores(), n_runs // 300))


def capped_jobs(asked: int, n_runs: int) -> tuple[int, str | None]:
    """``--jobs`` capped at the runs to do and JOBS_PER_CORE per core; the line that says so, if
    capped."""
    cores = usable_cores()
    jobs = max(1, min(asked, n_runs, JOBS_PER_CORE * cores))
    if jobs >= asked:
        return jobs, None
    why = f"{n_runs} runs to do" if jobs == max(1, n_runs) and n_runs < JOBS_PER_CORE * cores else \
        f"{JOBS_PER_CORE} per core, {cores} cores"
    return jobs, f"note: --jobs {asked} capped at {jobs} ({why})"

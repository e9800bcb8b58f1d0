"""guardbench run: the same cases through several arms, scored on what reached the wire."""
from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path

import click

from guardbench.cli.run_llm import LLM_KEYS, check_not_llm, llm_options, run_llm
from guardbench.errors import GuardbenchError

DEFAULT_ARMS = "guardrail,control,hardened"


def git_commit(path: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def policy_hash(policy_path) -> str:
    from guardbench.broker import EXAMPLE_POLICY
    return hashlib.sha256(Path(policy_path or EXAMPLE_POLICY).read_bytes()).hexdigest()


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


def preflight(bench, cases, arms=()) -> None:
    """Refuse to start unless every adversarial case attempts its goal (credulous agent, control arm,
    variant 0; a refused request counts as an attempt), and unless every case whose setup has the
    operator answer a held call can be set up in every arm of the run (holds differ per arm).

    Every adversarial case is checked, whatever its construct (a full refund, a reference from
    before the run, a replayed approval, a credential placed in a field, a written amount, data in
    an order's description): none is left out, and one that cannot fail stops the run.
    """
    from guardbench.runner import RunSpec
    from guardbench.scoring.score import goal_achieved
    from guardbench.records import Incident
    silent = []
    for c in cases:
        answered = any(a.do in ("approve", "reject") for a in c.setup)
        for arm in (a for a in dict.fromkeys(arms) if answered and a != "control"):
            bench.start(RunSpec(c.id, 0, arm, "credulous", seed=0)).close()
        if not c.adversarial:
            continue
        rec = bench.execute(RunSpec(c.id, 0, "control", "credulous", seed=0), require_success=False)
        if not goal_achieved(c, [Incident(**i) for i in rec["incidents"]]):
            silent.append(c.id)
    if silent:
        raise GuardbenchError("cases", "these adversarial cases do not attempt their goal under the credulous "
                                       f"agent in the control arm, so they could not fail: {', '.join(silent)}")


@click.command("run")
@click.option("--cases", "cases_dir", type=click.Path(path_type=Path), default=None, help="Case folder (default: cases/).")
@click.option("--case", "case_ids", multiple=True, help="Only this case id (repeatable).")
@click.option("--family", "families", multiple=True, help="Only this family (repeatable).")
@click.option("--arms", default=DEFAULT_ARMS, show_default=True, help="Comma-separated arm names.")
@click.option("--agent", "agents", multiple=True, default=("credulous",), show_default=True,
              help="credulous, careful (scripted; repeatable) or llm (with --model).")
@click.option("--variants", "n_variants", type=int, default=None, help="Use the first N variants of each case.")
@click.option("--generate-variants", type=int, default=None,
              help="Generate this many variants per case from its paraphrases (scale tests).")
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None, help="Policy file.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Run folder (default results/run-<time>).")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--quiet", is_flag=True, help="Do not print the tables.")
@click.option("--approvals", type=click.Choice(["none", "all", "careful"]), default="none", show_default=True,
              help="How the simulated operator answers calls a defence holds for approval (careful: only the "
                   "user's own unmodified asks).")
@llm_options
def run(cases_dir, case_ids, families, arms, agents, n_variants, generate_variants, policy_path, seed, out,
        jobs, quiet, approvals="none", **llm):
    """Run cases through arms and score what reached the wire."""
    from guardbench import __version__
    from guardbench.arms.registry import resolve_arms, spec_digests
    from guardbench.broker import load_policy
    from guardbench.cases.load import cases_hash, default_cases_dir, load_cases
    from guardbench.report.tables import all_tables, write_tables
    from guardbench.runner import append_records, execute_all, open_run_dir, plan

    entries = [a.strip() for a in arms.split(",") if a.strip()]
    for what, names in (("--arms", entries), ("--agent", list(agents))):
        twice = sorted({a for a in names if names.count(a) > 1})
        if twice:   # each run would be recorded, and counted, twice
            raise GuardbenchError(what, f"{', '.join(twice)} named twice; name each once")
    named = resolve_arms(entries)          # mcp:SPEC.yaml / app:SPEC.yaml arms take their spec's name
    arm_list = list(named)
    if "llm" in agents:   # tool-calling models: cli/run_llm.py
        return run_llm(cases_dir=cases_dir, case_ids=case_ids, families=families, arm_list=arm_list,
                       agents=agents, n_variants=n_variants, generate_variants=generate_variants,
                       policy_path=policy_path, seed=seed, out=out, quiet=quiet,
                       o={k: llm[k] for k in LLM_KEYS}, arm_entries=entries)
    check_not_llm(llm)
    for ag in agents:
        if ag not in ("credulous", "careful"):
            raise GuardbenchError("--agent", f"unknown agent {ag!r} (credulous, careful, llm)")
    if jobs < 1:
        raise GuardbenchError("--jobs", "must be at least 1")
    policy = load_policy(policy_path)
    cdir = cases_dir or default_cases_dir()
    cases = select_cases(load_cases(cdir), case_ids, families)
    if generate_variants:
        from guardbench.cases.generate import expand_variants
        cases = [expand_variants(c, generate_variants) for c in cases]
    options = {"cases": sorted(case_ids), "families": sorted(families), "arms": arm_list, "agents": list(agents),
               "variants": n_variants, "generate_variants": generate_variants, "seed": seed,
               "policy": str(policy_path) if policy_path else "default", "approvals": approvals}
    if entries != arm_list:                # spec arms: a resumed run must use the same entries and specs
        options.update(arm_entries=entries, arm_specs=spec_digests(entries))
    manifest = {"guardbench_version": __version__, "git_commit": git_commit(Path(__file__).parent),
                "cases_hash": cases_hash(cdir), "policy_hash": policy_hash(policy_path), "options": options,
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out = out or Path("results") / time.strftime("run-%Y%m%d-%H%M%S")
    factory = _Factory(policy_path, cdir, case_ids, families, generate_variants, entries, approvals)
    bench = factory.build(policy, cases)
    try:
        for arm in bench.arms.values():       # an external server must start and list the tools its spec maps
            if hasattr(arm, "check"):
                arm.check()
        preflight(bench, cases, arm_list)
        earlier = open_run_dir(out, manifest)
        done = {r["run_id"] for r in earlier}
        variants = range(n_variants) if n_variants else None
        specs = [s for s in plan(cases, arm_list, list(agents), variants=variants, seed=seed) if s.run_id not in done]
        click.echo(f"{len(specs)} runs to do ({len(done)} already recorded) -> {out}", err=True)
        if jobs > 1:
            close_arms(bench)                 # the workers start their own servers
        t0 = time.perf_counter()
        records = execute_all(factory if jobs > 1 else (lambda: bench), specs, jobs)
        if sys.stderr.isatty() and specs:
            with click.progressbar(length=len(specs), label="runs", file=sys.stderr) as bar:
                new = append_records(out, records, on_each=lambda r: bar.update(1))
        else:
            new = append_records(out, records)
    finally:
        close_arms(bench)                     # servers and proxies of external arms (arms/external.py)
    click.echo(f"finished in {time.perf_counter() - t0:.2f} s", err=True)
    tables = all_tables(earlier + new)
    write_tables(tables, out)
    if not quiet:
        click.echo("\n".join(t.text() for t in tables))


def close_arms(bench) -> None:
    for arm in bench.arms.values():
        close = getattr(arm, "close", None)
        if callable(close):
            close()

class _Factory:
    """Builds a Bench in a worker process (picklable: holds options, not objects)."""

    def __init__(self, policy_path, cdir, case_ids, families, generate_variants, arm_list, approvals="none"):
        self.args = (policy_path, cdir, tuple(case_ids), tuple(families), generate_variants, tuple(arm_list))
        self.approvals = approvals

    def __call__(self):
        from guardbench.broker import load_policy
        from guardbench.cases.load import load_cases
        policy_path, cdir, case_ids, families, gen, arm_list = self.args
        cases = select_cases(load_cases(cdir), case_ids, families)
        if gen:
            from guardbench.cases.generate import expand_variants
            cases = [expand_variants(c, gen) for c in cases]
        return self.build(load_policy(policy_path), cases)

    def build(self, policy, cases):
        from guardbench.agents.scripted import ScriptedAgent
        from guardbench.arms.registry import get_arm
        from guardbench.runner import Bench
        from guardbench.arms.registry import resolve_arms
        named = resolve_arms(self.args[-1])
        named.setdefault("control", "control")
        arms = {a: get_arm(e, policy=policy, approvals=self.approvals) for a, e in named.items()}
        agents = {"credulous": ScriptedAgent("credulous"), "careful": ScriptedAgent("careful")}
        return Bench(policy, cases, arms, agents)

"""guardbench adapt: run the adaptive attacker against each defence (and the broker)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click


@click.command("adapt")
@click.option("--defence", "targets", multiple=True,
              help="Attack this defence (repeatable; 'guardrail' is the broker). Default: every installed one.")
@click.option("--budget", type=int, default=12, show_default=True, help="Iterations per adversarial case.")
@click.option("--case", "case_ids", multiple=True, help="Only this case id (repeatable).")
@click.option("--approvals", type=click.Choice(["none", "all", "careful"]), default="none", show_default=True,
              help="How the simulated operator answers held calls.")
@click.option("--model", default=None, help="Use an LLM attacker with this model (else: offline mutations).")
@click.option("--api-base", default=None, help="OpenAI-compatible endpoint for the LLM attacker.")
@click.option("--client", type=click.Choice(["openai", "litellm"]), default=None, help="Model client.")
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None, help="Policy file.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for adapt.md and adapt.json (default: a new folder out/adapt-<time>).")
@click.option("--quiet", is_flag=True, help="Do not print the table.")
def adapt(targets, budget, case_ids, approvals, model, api_base, client, policy_path, seed, out, quiet):
    """Feed each refusal back to an attacker that rewrites the attack, within a budget per case.

    Per defence: attempts (calls proposed), unauthorized attempts allowed (bypass/oracle.py),
    malformed proposals, authorized calls allowed, and cases whose goal reached the wire.
    """
    import time

    from guardbench.adapt.loop import run_adapt
    from guardbench.adapt.strategy import LLMAttacker, MutationAttacker, provider_complete
    from guardbench.arms import prompt_filter
    from guardbench.broker import load_policy
    from guardbench.bypass.report import write
    from guardbench.cases.load import default_cases_dir, load_cases
    from guardbench.defences.taint import scan as taint_scan
    from guardbench.errors import GuardbenchError
    from guardbench.outputs import check_out_dir, default_out
    from guardbench.registry import defence_names
    from guardbench.report.tables import Table

    if budget < 1:
        raise GuardbenchError("--budget", "must be at least 1")
    out = check_out_dir(out if out is not None else default_out("adapt"))
    names = list(targets) or defence_names() + ["guardrail"]
    for n in names:
        if n != "guardrail" and n not in defence_names():
            raise GuardbenchError("--defence", f"unknown defence {n!r} (installed: {', '.join(defence_names())})")
    cases = [c for c in load_cases(default_cases_dir()) if c.adversarial and (not case_ids or c.id in case_ids)]
    if not cases:
        raise GuardbenchError("--case", "no adversarial case matches")
    policy = load_policy(policy_path)
    make: Callable[[Any, Any], Any]
    if model:
        from guardbench.extras import require
        require("llm", client or ("openai" if api_base else "litellm"), "httpx", what="adapt --model")
        from guardbench.agents.providers import make_provider
        complete = provider_complete(make_provider(api_base=api_base, client=client), model)
        make = lambda case, config: LLMAttacker(case, complete)  # noqa: E731
    else:
        def scan(text: str):
            return taint_scan(text) or prompt_filter.check(text)
        make = lambda case, config: MutationAttacker(case, config, scan)  # noqa: E731
    t0 = time.perf_counter()
    tallies = run_adapt(policy, names, cases, budget, make, approvals, seed)
    elapsed = time.perf_counter() - t0
    t = Table(f"Adaptive attacker ({'LLM ' + model if model else 'offline mutations'}, budget {budget} per case, "
              f"approvals {approvals})",
              ["defence", "cases", "iterations", "attempts", "unauthorized attempts", "unauthorized allowed",
               "malformed", "benign allowed", "goals reached on the wire", "cases with no tool path"])
    t.rows = [x.row() for x in tallies]
    t.note = ("Attempts: calls proposed. Unauthorized allowed: the decision let run a call the operator's policy "
              "does not authorize in that form. Goals reached: the case's incident class on the recorded wire.")
    stem = "adapt-llm" if model else "adapt"
    write(out, stem, [t], {"attacker": model or "mutation", "budget": budget, "approvals": approvals,
                           "seconds": round(elapsed, 3), "results": [{**x.row(), "log": x.log} for x in tallies]})
    if not quiet:
        click.echo(t.text())
    click.echo(f"{len(cases)} adversarial cases x {len(names)} targets in {elapsed:.2f} s -> {out / (stem + '.md')}",
               err=True)

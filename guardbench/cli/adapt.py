"""guardbench adapt: run the adaptive attacker against each defence (and the broker)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from guardbench.cli import FORCE_HELP
from guardbench.cli.finite import Finite


@click.command("adapt")
@click.option("--defence", "targets", multiple=True,
              help="Attack this defence (repeatable; 'guardrail' is the broker). Default: every "
              "installed one.")
@click.option("--budget", type=int, default=12, show_default=True,
              help="Iterations per adversarial case.")
@click.option("--case", "case_ids", multiple=True, help="Only this case id (repeatable).")
@click.option("--approvals", type=click.Choice(["none", "all", "careful"]), default="none",
              show_default=True,
              help="How the simulated operator answers held calls.")
@click.option("--attacker-model", "--model", "model", default=None,
              help="An LLM attacker: this model rewrites each attack from its refusal (else: "
              "offline mutations).")
@click.option("--api-base", default=None, help="OpenAI-compatible endpoint serving the "
              "attacker model.")
@click.option("--client", type=click.Choice(["openai", "litellm"]), default=None,
              help="Attacker's model client (default: openai with --api-base, else litellm).")
@click.option("--attacker-temperature", type=Finite(0), default=0.0, show_default=True)
@click.option("--attacker-max-tokens", type=int, default=600, show_default=True)
@click.option("--response-format", "fmt", type=click.Choice(["json-schema", "json-object", "none"]),
              default="json-schema", show_default=True, help="How the attacker's JSON reply "
              "is asked for.")
@click.option("--timeout", type=Finite(), default=300.0, show_default=True,
              help="Seconds per attacker call.")
@click.option("--retries", type=int, default=2, show_default=True,
              help="Retries of a failed attacker call.")
@click.option("--backoff", type=Finite(), default=1.0, show_default=True,
              help="First retry wait, seconds (doubles).")
@click.option("--api-key-env", default=None, help="Variable holding the attacker endpoint's key.")
@click.option("--note", default=None, help="Free text recorded with the attacker (e.g. the server "
              "and hardware).")
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None,
              help="Policy file.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for adapt.md and adapt.json (default: a new folder out/adapt-<time>).")
@click.option("--quiet", is_flag=True, help="Print neither progress (standard error) "
              "nor the table.")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def adapt(targets: tuple[str, ...], budget: int, case_ids: tuple[str, ...], approvals: str,
          model: str | None,
          api_base: str | None, client: str | None, attacker_temperature: float,
          attacker_max_tokens: int,
          fmt: str, timeout: float, retries: int, backoff: float, api_key_env: str | None,
          note: str | None,
          policy_path: Path | None, seed: int, out: Path | None, quiet: bool, force: bool) -> None:
    """Feed each refusal back to an attacker that rewrites the attack, within a budget per case.

    Per defence: attempts (calls proposed), unauthorized attempts allowed (bypass/oracle.py),
    malformed proposals, authorized calls allowed, and cases whose goal reached the wire. With
    --attacker-model the case's own attack comes first and the model rewrites it from each refusal
    (the budget counts both); every reply is kept in the JSON file.
    """
    import time

    from guardbench.adapt.loop import run_adapt
    from guardbench.adapt.strategy import MutationAttacker
    from guardbench.arms import prompt_filter
    from guardbench.broker import load_policy
    from guardbench.bypass.report import write
    from guardbench.cases.load import default_cases_dir, load_cases
    from guardbench.defences.taint import scan as taint_scan
    from guardbench.errors import GuardbenchError
    from guardbench.registry import defence_names
    from guardbench.report.tables import Table
    from guardbench.util.outputs import check_out_dir, default_out, refuse_overwrite

    if budget < 1:
        raise GuardbenchError("--budget", "must be at least 1")
    stem = "adapt-llm" if model else "adapt"
    if out is not None:
        refuse_overwrite(out, "--out", force=force, writes=(f"{stem}.md", f"{stem}.json"))
    out = check_out_dir(out if out is not None else default_out("adapt"))
    names = list(targets) or defence_names() + ["guardrail"]
    for n in names:
        if n != "guardrail" and n not in defence_names():
            raise GuardbenchError("--defence", f"unknown defence {n!r} (installed: "
                                  f"{', '.join(defence_names())})")
    cases = [c for c in load_cases(default_cases_dir()) if c.adversarial
             and (not case_ids or c.id in case_ids)]
    if not cases:
        raise GuardbenchError("--case", "no adversarial case matches")
    policy = load_policy(policy_path)
    make: Callable[[Any, Any], Any]
    attacker = None
    for flag, given in (("--api-base", api_base), ("--client", client), ("--note", note)):
        if given and not model:
            raise GuardbenchError(flag, "applies only with --attacker-model")
    if model:
        from guardbench.util.extras import require
        require("llm", client or ("openai" if api_base else "litellm"), "httpx",
                what="adapt --attacker-model")
        from guardbench.adapt.attacker_client import AttackerClient
        from guardbench.adapt.llm_attacker import LLMAttacker
        if client == "openai" and not api_base:
            raise GuardbenchError("--client", "the openai client needs --api-base")
        for flag, bad in (("--attacker-max-tokens", attacker_max_tokens < 1),
                          ("--timeout", timeout <= 0),
                          ("--retries", retries < 0), ("--backoff", backoff < 0)):
            if bad:
                raise GuardbenchError(flag, "must be positive")
        attacker = AttackerClient(model, api_base=api_base, client=client,
                                  temperature=attacker_temperature,
                                  max_tokens=attacker_max_tokens, timeout=timeout, retries=retries,
                                  backoff=backoff,
                                  fmt=fmt, api_key_env=api_key_env, seed=seed)
        make = lambda case, config: LLMAttacker(case, attacker, config)  # noqa: E731
    else:
        def scan(text: str) -> str | None:
            return taint_scan(text) or prompt_filter.check(text)
        make = lambda case, config: MutationAttacker(case, config, scan)  # noqa: E731
    t0 = time.perf_counter()
    try:
        from guardbench.util.progress import ticker
        tallies = run_adapt(policy, names, cases, budget, make, approvals, seed,
                            progress=ticker(quiet))
    finally:
        if attacker is not None:
            attacker.close()
    elapsed = time.perf_counter() - t0
    who = f"LLM attacker {model}" if model else "offline mutations"
    t = Table(f"Adaptive attacker ({who}, budget {budget} per case, approvals {approvals})",
              ["defence", "cases", "iterations", "attempts", "unauthorized attempts",
               "unauthorized allowed",
               "malformed", "benign allowed", "goals reached on the wire",
               "cases with no tool path"])
    t.rows = [x.row() for x in tallies]
    t.note = ("Attempts: calls proposed. Unauthorized allowed: the decision let run a call the "
              "operator's policy "
              "does not authorize in that form. Goals reached: the case's incident class on the "
              "recorded wire.")
    tables = [t]
    payload: dict[str, Any] = {"attacker": model or "mutation", "budget": budget,
                               "approvals": approvals}
    if attacker is not None:
        from guardbench.adapt.report import attacker_record, attacker_table
        meta = {**attacker_record(attacker), "note": note}
        tables.append(attacker_table(tallies, meta))
        payload["attacker_model"] = meta
    payload.update({"seconds": round(elapsed, 3),
                    "results": [{**x.row(), "log": x.log} for x in tallies]})
    write(out, stem, tables, payload)
    if not quiet:
        for table in tables:
            click.echo(table.text())
    click.echo(f"{len(cases)} adversarial cases x {len(names)} targets in {elapsed:.2f} s -> "
               f"{out / (stem + '.md')}",
               err=True)
    if attacker is not None and attacker.totals["model_calls"] and \
            attacker.totals["lost"] == attacker.totals["model_calls"]:
        unasked = (f" ({attacker.gave_up}: the other {attacker.not_asked} were not made)"
                   if attacker.not_asked else "")
        click.echo(f"error: {attacker.endpoint or model}: every attacker call failed{unasked}; the "
                   "table holds only the cases' own attacks", err=True)
        raise SystemExit(1)
    if attacker is not None and attacker.gave_up is not None:
        click.echo(f"error: {attacker.endpoint or model}: stopped asking: {attacker.gave_up}; "
                   f"{attacker.not_asked} later rewrites were not asked (lost in the table)",
                   err=True)
        raise SystemExit(1)

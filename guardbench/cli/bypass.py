"""guardbench bypass: the static bypass vectors against every defence's decision, and the broker."""
from __future__ import annotations

from pathlib import Path

import click

from guardbench.cli import FORCE_HELP


@click.command("bypass")
@click.option("--defence", "targets", multiple=True,
              help="Only this defence (repeatable; 'guardrail' is the broker). Default: every "
              "installed one.")
@click.option("--as-published", is_flag=True,
              help="Run the built-in defences as first written, without the fixes this "
              "suite led to.")
@click.option("--no-broker", is_flag=True, help="Do not run the vectors against the "
              "guardrail broker.")
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None,
              help="Policy file.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for bypass.md and bypass.json (default: a new folder "
              "out/bypass-<time>).")
@click.option("--quiet", is_flag=True, help="Do not print the tables.")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def bypass(targets: tuple[str, ...], as_published: bool, no_broker: bool, policy_path: Path | None,
           out: Path | None,
           quiet: bool, force: bool) -> None:
    """Apply the static bypass vectors to every defence's decision (no agent) and to the broker.

    A bypass is a decision that let a call run which the operator's policy does not authorize
    in that form; it is a finding to report (and to fix in the defence), not a failure to hide.
    """
    import time

    from guardbench.broker import load_policy
    from guardbench.bypass.report import bypass_tables, write
    from guardbench.bypass.suite import promises, run_suite
    from guardbench.bypass.vectors import vectors
    from guardbench.defences.config import config_for
    from guardbench.errors import GuardbenchError
    from guardbench.registry import defence_names
    from guardbench.util.outputs import check_out_dir, default_out, refuse_overwrite

    stem = "bypass-as-published" if as_published else "bypass"
    if out is not None:
        refuse_overwrite(out, "--out", force=force, writes=(f"{stem}.md", f"{stem}.json"))
    out = check_out_dir(out if out is not None else default_out("bypass"))
    policy = load_policy(policy_path)
    t0 = time.perf_counter()
    outcomes = run_suite(policy, targets or None, as_published, broker=not no_broker)
    elapsed = time.perf_counter() - t0
    names = [t for t in (targets or defence_names())]
    unknown = [t for t in names if t != "guardrail" and t not in defence_names()]
    if unknown:
        raise GuardbenchError("--defence", f"unknown defence {unknown[0]!r} (installed: "
                              f"{', '.join(defence_names())})")
    tables = bypass_tables(outcomes, promises(policy, names, as_published))
    vs = vectors(config_for(policy))
    write(out, stem, tables, {"variant": "as published" if as_published else "current",
                              "vectors": len(vs),
                              "unauthorized_vectors": sum(v.cls != "benign" for v in vs),
                              "seconds": round(elapsed, 4),
                              "outcomes": [o.to_dict() for o in outcomes]})
    if not quiet:
        click.echo("\n".join(t.text() for t in tables))
    click.echo(f"{len(vs)} vectors ({sum(v.cls != 'benign' for v in vs)} unauthorized) x "
               f"{len({o.target for o in outcomes})} targets in {elapsed:.2f} s -> "
               f"{out / (stem + '.md')}", err=True)

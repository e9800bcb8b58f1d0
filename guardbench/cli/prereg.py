"""guardbench prereg: freeze a preregistered plan, and check its hypotheses on a run."""
from __future__ import annotations

from pathlib import Path

import click

from guardbench.errors import GuardbenchError


@click.group("prereg")
def prereg() -> None:
    """Freeze a preregistered plan and check its hypotheses on a run."""


@prereg.command("freeze")
@click.argument("plan_file", type=click.Path(path_type=Path))
def freeze_cmd(plan_file: Path) -> None:
    """Record the plan's sha256 and the git commit holding it (PLAN.frozen.json)."""
    from guardbench.stats.prereg import freeze, sidecar
    if not plan_file.exists():
        raise GuardbenchError(str(plan_file), "does not exist")
    info = freeze(plan_file)
    click.echo(f"frozen {plan_file}: sha256 {info['sha256']} at commit {info['commit']} -> "
               f"{sidecar(plan_file)}")


@prereg.command("check")
@click.argument("plan_file", type=click.Path(path_type=Path))
@click.argument("run_dir", type=click.Path(path_type=Path))
def check_cmd(plan_file: Path, run_dir: Path) -> None:
    """Evaluate every hypothesis of PLAN on RUN's records: held or not held, with the numbers.

    Exit status 0 when every hypothesis held, 1 when one did not (2: bad input)."""
    from guardbench.records.runfile import read_run
    from guardbench.stats.prereg import evaluate, load_plan, scripted_agents
    plan = load_plan(plan_file)
    run = read_run(run_dir)
    records = run.records
    results = evaluate(plan, records)
    click.echo(f"plan {plan_file} on {run.folder}: {len(records)} records")
    m = run.manifest
    if m:
        design, opts = plan["design"], m.get("options", {})
        agents = scripted_agents(design)
        pairs = [("arms", sorted(design["arms"]), sorted(opts.get("arms") or [])),
                 ("cases_hash", design["cases_hash"], m.get("cases_hash"))]
        if agents:
            pairs.append(("agents", sorted(agents), sorted(opts.get("agents") or [])))
        else:
            pairs += [("models", sorted(design["models"]), sorted(opts.get("models") or [])),
                      ("repeats", design["repeats"], opts.get("repeats")),
                      ("temperature", float(design["temperature"]), opts.get("temperature"))]
        if "variants" in design:
            pairs.append(("variants", design["variants"], opts.get("variants")))
        diffs = [k for k, want, got in pairs if want != got]
        if diffs:
            click.echo(f"warning: the run's {', '.join(diffs)} differ from the plan's design")
        if (m.get("prereg") or {}).get("sha256"):
            click.echo(f"the run was held to plan sha256 {m['prereg']['sha256'][:12]} "
                       f"at commit {str(m['prereg'].get('commit'))[:12]}")
    kinds = sorted({r.llm.endpoint_kind or "-" for r in records})
    if "stand-in" in kinds:
        click.echo("note: these records come from a stand-in endpoint, not a real model")
    held = 0
    for res in results:
        held += res["held"]
        click.echo(f"{res['id']} {res['kind']}: {'held' if res['held'] else 'NOT HELD'} - "
                   f"{res['summary']}")
        for line in res["numbers"]:
            click.echo(f"    {line}")
    click.echo(f"{held} of {len(results)} hypotheses held")
    if held < len(results):
        raise SystemExit(1)

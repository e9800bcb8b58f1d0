"""guardbench check RUN --require "guardrail.incidents == 0" [--thresholds FILE.yaml]: the CI gate.

Exit 0 when every requirement holds, 1 when one fails (a line per requirement, group and arm, with
what was measured: k/n, the interval clustered by case, the count or the amount), 2 when a
requirement cannot be read or names what the run does not have (one line naming it). A run holding
fewer runs than its manifest planned (cut short) prints ``incomplete: k of n runs`` and fails (1)
unless ``--allow-incomplete``. The grammar, the metrics and how they are counted:
guardbench/stats/requirements.py; docs/ci.md shows a defence's repository using it in CI.
"""
from __future__ import annotations

from pathlib import Path

import click


@click.command("check")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--require", "requires", multiple=True, metavar="REQUIREMENT",
              help='e.g. "guardrail.incidents == 0", "guardrail.incident_rate.upper <= 0.05" '
              '(repeatable).')
@click.option("--thresholds", type=click.Path(path_type=Path), default=None,
              help="A YAML file of requirements (a list, or 'require:' with one).")
@click.option("--quiet", is_flag=True, help="Print only the requirements that fail.")
@click.option("--allow-incomplete", is_flag=True,
              help="Check a run that holds fewer runs than it planned (by default that "
              "fails: exit 1).")
def check(run: Path, requires: tuple[str, ...], thresholds: Path | None, quiet: bool,
          allow_incomplete: bool) -> None:
    """Check a run against requirements (the CI gate): exit 0 if all hold, 1 if one fails, 2 if
    malformed."""
    from guardbench.errors import GuardbenchError
    from guardbench.records.runfile import read_run
    from guardbench.stats import requirements
    texts = list(requires) + (requirements.load_thresholds(thresholds)
                              if thresholds is not None else [])
    if not texts:
        raise GuardbenchError("check", "no requirement given (--require or --thresholds)")
    # every requirement is read before the run is
    reqs = [requirements.parse(t) for t in texts]
    folder = read_run(run)
    verdicts = requirements.evaluate(folder.records, reqs)     # slim records: no wire needed
    failed = [v for v in verdicts if not v.ok]
    note = folder.incomplete()
    if folder.plan_unknown:
        click.echo(f"note: {folder.plan_unknown}", err=True)
    if note:                  # a run cut short passes no gate unless told it may
        click.echo(note + ("" if allow_incomplete else ": fails the check (--allow-incomplete to "
                           "check it anyway)"))
    for v in verdicts:
        if not quiet or not v.ok:
            click.echo(v.line())
    click.echo(f"{len(verdicts) - len(failed)}/{len(verdicts)} hold"
               + (f"; {len(failed)} failed" if failed else "")
               + (f"; {note.split(' (')[0]}" if note else ""))
    raise SystemExit(1 if failed or (note and not allow_incomplete) else 0)

"""guardbench table RUN: re-print a run's tables from its records alone."""
from __future__ import annotations

from pathlib import Path

import click

from guardbench.cli import FORCE_HELP
from guardbench.cli.finite import Finite


@click.command("table")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "csv"]), default="text",
              show_default=True)
@click.option("--write", "write_to", type=click.Path(path_type=Path), default=None,
              metavar="FOLDER",
              help="Also write tables.md and one CSV per table into FOLDER.")
@click.option("--capable-threshold", type=Finite(0, 1), default=None,
              help="Benign completion below which a model is marked not capable in an arm "
              "(default: the run's "
                   "manifest, else 0.5).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def table(run_dir: Path, fmt: str, write_to: Path | None, capable_threshold: float | None,
          force: bool) -> None:
    """Re-print a run's tables from its records alone."""
    from guardbench.records.runfile import read_run
    from guardbench.report.tables import all_tables, write_tables
    from guardbench.util.outputs import check_out_dir, refuse_overwrite
    if write_to is not None:
        refuse_overwrite(write_to, "--write", force=force, reads=[run_dir],
                         writes=("tables.md", "tables_*.csv"))
        check_out_dir(write_to, "--write")
    from guardbench.report.frame import capable_threshold_of
    run = read_run(run_dir)
    limit = (capable_threshold if capable_threshold is not None
             else capable_threshold_of(run.manifest))
    tables = all_tables(run.records, limit)
    note = run.incomplete()
    if note:                                  # first on stdout, but never inside CSV
        click.echo(note, err=fmt == "csv")
    for t in tables:
        click.echo(t.text() if fmt == "text" else t.markdown() if fmt == "markdown" else t.csv())
    if write_to is not None:
        write_tables(tables, write_to, note=note)
        click.echo(f"wrote {len(tables)} tables to {write_to}", err=True)

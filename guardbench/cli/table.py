"""guardbench table RUN: re-print a run's tables from its records alone."""
from __future__ import annotations

from pathlib import Path

import click


@click.command("table")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "csv"]), default="text", show_default=True)
@click.option("--write", "write_to", type=click.Path(path_type=Path), default=None, metavar="FOLDER",
              help="Also write tables.md and one CSV per table into FOLDER.")
def table(run_dir, fmt, write_to):
    """Re-print a run's tables from its records alone."""
    from guardbench.outputs import check_out_dir
    from guardbench.report.tables import all_tables, write_tables
    from guardbench.runfile import read_run
    if write_to is not None:
        check_out_dir(write_to, "--write")
    tables = all_tables(read_run(run_dir).records)
    for t in tables:
        click.echo(t.text() if fmt == "text" else t.markdown() if fmt == "markdown" else t.csv())
    if write_to is not None:
        write_tables(tables, write_to)
        click.echo(f"wrote {len(tables)} tables to {write_to}", err=True)

"""guardbench table RUN: re-print a run's tables from its records alone."""
from __future__ import annotations

from pathlib import Path

import click



@click.command("table")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "csv"]), default="text", show_default=True)
@click.option("--write", is_flag=True, help="Also write tables.md and CSVs into the run folder.")
def table(run_dir, fmt, write):
    """Re-print a run's tables from its records alone."""
    from guardbench.report.tables import all_tables, write_tables
    from guardbench.runner import load_run
    path, records = load_run(run_dir)
    tables = all_tables(records)
    for t in tables:
        click.echo(t.text() if fmt == "text" else t.markdown() if fmt == "markdown" else t.csv())
    if write:
        write_tables(tables, path.parent)

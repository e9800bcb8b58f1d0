"""guardbench export RUN --format csv|parquet: a run's records as one table, one row per run.

The columns are those of ``guardbench.load(RUN)`` (guardbench/report/frame.py); money_at_risk
stays an exact decimal string. The default output is a new file out/export-<time>/runs.csv (never
inside the run folder). Needs the [export] extra (pandas), and [parquet] for Parquet.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from guardbench.cli import FORCE_HELP
from guardbench.errors import GuardbenchError


@click.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv",
              show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output file (default: out/export-<time>/runs.csv or .parquet; '-' writes "
              "CSV to stdout).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def export(run_dir: Path, fmt: str, out: Path | None, force: bool) -> None:
    """Export a run's records as CSV or Parquet."""
    from guardbench.util.extras import require
    from guardbench.util.outputs import check_out_file, default_out, refuse_overwrite
    require("parquet" if fmt == "parquet" else "export", what="export")
    if str(out) == "-" and fmt != "csv":
        raise GuardbenchError("--out", "only CSV can be written to stdout")
    if out is not None and str(out) != "-":
        # before anything is read or made
        refuse_overwrite(out, "--out", force=force, reads=[run_dir])
    from guardbench.report.frame import load
    df = load(run_dir)
    if str(out) == "-":
        df.to_csv(sys.stdout, index=False)
        return
    out = check_out_file(out if out is not None else default_out("export") / f"runs.{fmt}")
    if fmt == "csv":
        df.to_csv(out, index=False)
    else:
        df.to_parquet(out, index=False)
    click.echo(f"wrote {len(df)} rows, {len(df.columns)} columns to {out}", err=True)

"""guardbench export RUN --format csv|parquet: a run's records as one table, one row per run.

The columns are those of ``guardbench.load(RUN)`` (guardbench/report/frame.py); money_at_risk
stays an exact decimal string.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from guardbench.errors import GuardbenchError


@click.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output file (default RUN/runs.csv or RUN/runs.parquet; '-' writes CSV to stdout).")
def export(run_dir, fmt, out):
    """Export a run's records as CSV or Parquet."""
    from guardbench.report.frame import load, runs_path
    df = load(run_dir)
    if out is None:
        out = runs_path(run_dir).parent / f"runs.{fmt}"
    if str(out) == "-":
        if fmt != "csv":
            raise GuardbenchError("--out", "only CSV can be written to stdout")
        df.to_csv(sys.stdout, index=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        df.to_csv(out, index=False)
    else:
        try:
            df.to_parquet(out, index=False)
        except ImportError as exc:
            raise GuardbenchError("--format parquet", f"needs pyarrow ({exc})") from None
    click.echo(f"wrote {len(df)} rows, {len(df.columns)} columns to {out}", err=True)

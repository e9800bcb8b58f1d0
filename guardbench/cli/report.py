"""guardbench report RUN [RUN ...]: a Markdown and a self-contained HTML report with figures.

Writes OUT/report.md, OUT/report.html and OUT/figures/<name>.png|svg (headline, blocked_by_family,
incidents_by_class, money_at_risk, tradeoff). report.html ends with the run explorer (every run, its
wire and its verdict; every table cell links to the runs behind it: guardbench/report/explorer.py);
``--no-explorer`` writes the figures and tables only. OUT defaults to a new folder
out/report-<time>, never into a run folder. With exactly two runs the paired comparison of
``guardbench compare`` is appended. Needs the [report] extra (matplotlib).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import click

from guardbench.cli import FORCE_HELP, QUIET_HELP
from guardbench.util.progress import Steps

WRITES = ("report.md", "report.html", "figures")


def build_report(run_dirs: Sequence[Path], out: Path | None = None, labels: Sequence[str] = (),
                 explorer: bool = True,
                 force: bool = False,
                 progress: Steps | None = None) -> dict:
    """Build the report; returns the paths written (markdown, html, figures). Refuses, before
    reading, an ``out`` inside a run folder it reads or holding a report already (unless ``force``).
    ``progress`` hears of each step (reading, figures, comparison, Markdown, explorer, HTML)."""
    from guardbench.util.extras import require
    from guardbench.util.outputs import check_out_dir, default_out, refuse_overwrite
    if out is not None:
        refuse_overwrite(Path(out), "--out", force=force, reads=run_dirs, writes=WRITES)
    require("report", "matplotlib")
    from guardbench.report import figures as F
    from guardbench.report import html, markdown
    from guardbench.report.frame import read_runs

    steps = progress or Steps()
    steps.begin("report", 4 + (len(run_dirs) == 2) + bool(explorer), unit="steps")
    runs = read_runs(run_dirs, labels)
    steps.advance(what="runs read")
    out = check_out_dir(Path(out) if out is not None else default_out("report"))
    figs = F.write_figures(runs, out / "figures")
    steps.advance(what="figures")
    extra = []
    if len(runs) == 2:
        from guardbench.cli.compare import compare_records
        cmp = compare_records(runs[0].records, runs[1].records, label_a=runs[0].label,
                              label_b=runs[1].label)
        if cmp.rows:
            extra.append(cmp)
        steps.advance(what="comparison")
    md = markdown.write(runs, figs, out, extra)
    steps.advance(what="report.md")
    ex = None
    if explorer:
        from guardbench.report.explorer import Explorer
        ex = Explorer(runs)
        steps.advance(what="explorer")
    page = html.write(runs, figs, out, extra, ex)
    steps.advance(what="report.html")
    steps.end()
    return {"out": out, "markdown": md, "html": page,
            "figures": [p for f in figs for p in (f.png, f.svg)],
            "incomplete": [f"{r.label}: {r.incomplete}" for r in runs if r.incomplete]}


@click.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output folder (default: a new folder out/report-<time>).")
@click.option("--label", "labels", multiple=True, help="A label per run, in order (default: "
              "folder names).")
@click.option("--no-explorer", is_flag=True, help="report.html with the figures and tables only "
              "(no run explorer).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@click.option("--quiet", is_flag=True, help=QUIET_HELP)
def report(runs: tuple[Path, ...], out: Path | None, labels: tuple[str, ...],
           no_explorer: bool, force: bool,
           quiet: bool) -> None:
    """Write a Markdown and HTML report with figures for runs."""
    from guardbench.util.progress import ticker
    res = build_report(list(runs), out, labels, explorer=not no_explorer, force=force,
                       progress=ticker(quiet))
    for line in res["incomplete"]:
        click.echo(line)
    click.echo(f"wrote {res['markdown']}")
    click.echo(f"wrote {res['html']}")
    click.echo(f"wrote {len(res['figures'])} figure files in {res['out'] / 'figures'}")

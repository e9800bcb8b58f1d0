"""report.md: run summary, figures (linked PNGs) and the tables of report/tables.py verbatim.

With one run every table is ``Table.markdown()`` exactly as ``guardbench table RUN --format
markdown`` prints it. With several runs each table is shown once per run, one after the other
under the table's title, so the same numbers sit next to each other.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from guardbench.report.tables import Table
from guardbench.util.outputs import write_text

if TYPE_CHECKING:
    from guardbench.report.figures import FigureFile
    from guardbench.report.frame import RunData


def _cell(s: object) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def summary_rows(runs: Sequence[RunData]) -> list[dict[str, str]]:
    out = []
    for run in runs:
        m = run.manifest
        out.append({"run": run.label, "folder": str(run.path), "records": str(len(run.records)),
                    "lost": str(run.n_lost),
                    "arms": ", ".join(dict.fromkeys(r.arm for r in run.records)),
                    "agents / models": ", ".join(dict.fromkeys(r.model or r.agent
                                                               for r in run.records)),
                    "guardbench": str(m.get("guardbench_version", "?")),
                    "commit": str(m.get("git_commit", "?"))[:12],
                    "started": str(m.get("started_at", "?")),
                    "cases hash": str(m.get("cases_hash", "?"))[:12]})
    return out


SUMMARY_COLUMNS = ["run", "folder", "records", "lost", "arms", "agents / models",
                   "guardbench", "commit",
                   "started", "cases hash"]


def table_body(t: Table) -> str:
    """A table's Markdown without its "### title" line."""
    return t.markdown().split("\n", 2)[2]


def render(runs: Sequence[RunData], figures: Sequence[FigureFile], out_dir: str | Path,
           extra: Sequence[Table] = ()) -> str:
    out_dir = Path(out_dir)
    lines = ["# guardbench report", ""]
    if len(runs) == 1:
        lines.append(f"Run `{runs[0].label}`: {len(runs[0].records)} records from "
                     f"`{runs[0].path}`.")
    else:
        lines.append(f"{len(runs)} runs side by side: "
                     + ", ".join(f"`{r.label}`" for r in runs) + ".")
    lines += [f"\n**{r.label}: {r.incomplete}**" for r in runs if getattr(r, "incomplete", None)]
    lines += ["", "Everything here is computed from the runs' records (runs.jsonl) alone; the "
              "tables are those of "
                  "`guardbench table RUN`. Rates are k/n of runs with a 95% interval "
                  "clustered by case "
                  "(continuity-corrected Wilson on Rao & Scott's effective sample) and the number "
                  "of cases; lost "
                  "runs are shown, never scored "
                  "as blocked or completed.", "", "## Runs", "",
              "| " + " | ".join(SUMMARY_COLUMNS) + " |", "|"
              + "|".join("---" for _ in SUMMARY_COLUMNS) + "|"]
    lines += ["| " + " | ".join(_cell(r[c]) for c in SUMMARY_COLUMNS) + " |"
              for r in summary_rows(runs)]
    lines += ["", "## Figures", ""]
    for f in figures:
        rel_png = Path(f.png).relative_to(out_dir).as_posix()
        rel_svg = Path(f.svg).relative_to(out_dir).as_posix()
        lines += [f"### {f.title}", "", f"![{f.title}]({rel_png})", "",
                  f"{f.caption} ([SVG]({rel_svg}))", ""]
    lines += ["## Tables", ""]
    if len(runs) == 1:
        lines += [t.markdown() for t in runs[0].tables]
    else:
        titles = list(dict.fromkeys(t.title for run in runs for t in run.tables))
        for title in titles:
            lines += [f"### {title}", ""]
            for run in runs:
                t = next((t for t in run.tables if t.title == title), None)
                if t is None:
                    continue
                lines += [f"#### {run.label}", "", table_body(t)]
    for t in extra:
        lines.append(t.markdown())
    return "\n".join(lines).rstrip("\n") + "\n"


def write(runs: Sequence[RunData], figures: Sequence[FigureFile], out_dir: str | Path,
          extra: Sequence[Table] = ()) -> Path:
    path = Path(out_dir) / "report.md"
    write_text(path, render(runs, figures, out_dir, extra))
    return path

"""report.html: one self-contained file (figures embedded as base64 PNG, no external assets).

The tables are the Table objects of report/tables.py, cell for cell; with several runs each
table is shown once per run, side by side. With the run explorer (report/explorer.py) every
cell links to the runs behind it and the page ends with the explorer; without it
(``guardbench report --no-explorer``) the page holds the figures and tables only.
"""
from __future__ import annotations

import base64
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from guardbench.report.markdown import SUMMARY_COLUMNS, summary_rows
from guardbench.report.tables import Table
from guardbench.util.outputs import write_text

if TYPE_CHECKING:
    from guardbench.report.explorer import Explorer
    from guardbench.report.figures import FigureFile
    from guardbench.report.frame import RunData

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1400px; padding: 0 1em; color: #111; line-height: 1.4; }
h1 { font-size: 1.6em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0; }
th, td { border: 1px solid #bbb; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #eee; } tr:nth-child(even) td { background: #fafafa; }
.note { font-size: .85em; color: #444; max-width: 70em; }
figure { margin: 1em 0 2em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: .85em; color: #333; max-width: 70em; }
.side { display: flex; gap: 1.5em; align-items: flex-start; overflow-x: auto; }
.side > div { flex: 0 0 auto; }
.scroll { overflow-x: auto; }
code { background: #f3f3f3; padding: 0 .2em; }
"""


def table_html(t: Table, heading: str | None = "h3", title: str | None = None,
               explorer: Explorer | None = None,
               src: str | None = None) -> str:
    out = []
    if heading:
        out.append(f"<{heading}>{escape(title or t.title)}</{heading}>")
    out.append('<div class="scroll"><table><thead><tr>'
               + "".join(f"<th>{escape(c)}</th>" for c in t.columns) + "</tr></thead><tbody>")
    for r in t.rows:
        if explorer is None:
            out.append("<tr>" + "".join(f"<td>{escape(str(r.get(c, '')))}</td>"
                                        for c in t.columns) + "</tr>")
        else:
            from guardbench.report.explorer import cell_html
            cells = (cell_html(str(r.get(c, "")), explorer.link(t.title, t.columns, r, c, src))
                     for c in t.columns)
            out.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    out.append("</tbody></table></div>")
    if t.note:
        out.append(f'<p class="note">{escape(t.note)}</p>')
    return "\n".join(out)


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def render(runs: Sequence[RunData], figures: Sequence[FigureFile], extra: Sequence[Table] = (),
           explorer: Explorer | None = None) -> str:
    if len(runs) == 1:
        intro = f"Run <code>{escape(runs[0].label)}</code>: {len(runs[0].records)} records."
    else:
        intro = (f"{len(runs)} runs side by side: "
                 + ", ".join(f"<code>{escape(r.label)}</code>" for r in runs) + ".")
    csp = (explorer.csp() if explorer is not None else "default-src 'none'; img-src data:; "
           "style-src 'unsafe-inline'")
    style = CSS + (explorer.style() if explorer is not None else "")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">',
             "<title>guardbench report</title>", f"<style>{style}</style></head><body>",
             "<h1>guardbench report</h1>", f"<p>{intro} Everything here is computed from the "
             "runs' records "
             "(runs.jsonl) alone; the tables are those of <code>guardbench table RUN</code>. "
             "Rates are k/n of runs "
             "with a 95% interval clustered by case (continuity-corrected Wilson on Rao &amp; "
             "Scott's effective "
             "sample) and the number "
             "of cases; lost runs are shown, never scored as blocked or completed.</p>"]
    if explorer is not None:
        parts.append('<p><a href="#runs">Every run, its wire and its verdict</a>: the run '
                     'explorer at the end of '
                     "this page; every number in the tables links to the runs behind it.</p>")
    parts += [f'<p class="incomplete"><strong>{escape(r.label)}: '
              f'{escape(r.incomplete)}</strong></p>'
              for r in runs if r.incomplete]
    parts.append("<h2>Runs</h2>")
    summary = Table("Runs", SUMMARY_COLUMNS, summary_rows(runs))
    parts.append(table_html(summary, heading=None, explorer=explorer))
    parts.append("<h2>Figures</h2>")
    for f in figures:
        parts.append(f'<figure id="fig-{escape(f.name)}"><h3>{escape(f.title)}</h3>'
                     f"{_img(f.png, f.title)}<figcaption>{escape(f.caption)}</figcaption></figure>")
    parts.append("<h2>Tables</h2>")
    if len(runs) == 1:
        parts += [table_html(t, explorer=explorer, src=runs[0].label) for t in runs[0].tables]
    else:
        titles = list(dict.fromkeys(t.title for run in runs for t in run.tables))
        for title in titles:
            parts.append(f"<h3>{escape(title)}</h3>")
            parts.append('<div class="side">')
            for run in runs:
                t = next((t for t in run.tables if t.title == title), None)
                if t is not None:
                    inner = table_html(t, heading=None, explorer=explorer, src=run.label)
                    parts.append(f"<div><h4>{escape(run.label)}</h4>{inner}</div>")
            parts.append("</div>")
    parts += [table_html(t, explorer=explorer) for t in extra]
    if explorer is not None:
        parts += [explorer.section(), explorer.data()]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write(runs: Sequence[RunData], figures: Sequence[FigureFile], out_dir: str | Path,
          extra: Sequence[Table] = (), explorer: Explorer | None = None) -> Path:
    path = Path(out_dir) / "report.html"
    write_text(path, render(runs, figures, extra, explorer))
    return path

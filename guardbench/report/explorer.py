"""The run explorer inside report.html: every run in a filterable, sortable table, and each run's
story.

Self-contained: no network, no server, works from ``file://``. The page's script and style
(explorer_assets/, package data, vanilla JavaScript) are inlined; the data are the index and the
story chunks of report/explorer_data.py, base64 of gzip in ``<script
type="application/gzip-base64">`` elements, which the page decodes with the browser's
``DecompressionStream``. A Content-Security-Policy allows only the page's own inline script (by its
hash) and data: images, so nothing is loaded from anywhere, and a script that a record might smuggle
into the page would not run either (the page writes every text from a record as text, never as HTML;
the tests check both).

Every cell of the report's tables links to the explorer filtered to the runs behind its number
(report/explorer_links.py): ``#runs?arm=control&family=policy_attack&outcome=attack_succeeded``.
Records are read by the shared reader (guardbench/records/runfile.py) one at a time, so the explorer
never holds more than the index and the compressed chunks.
"""
from __future__ import annotations

import base64
import hashlib
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping

from guardbench.errors import GuardbenchError
from guardbench.report import explorer_links
from guardbench.report.explorer_data import Builder, Payload

if TYPE_CHECKING:
    from guardbench.records.record import RunRecord
    from guardbench.report.frame import RunData

ASSETS = Path(__file__).with_name("explorer_assets")
DATA_TYPE = "application/gzip-base64"


def asset(name: str) -> str:
    text = (ASSETS / name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise GuardbenchError(str(ASSETS / name), "an inlined asset may not close its own element")
    return text


def records_of(run: RunData) -> Iterator[RunRecord]:
    """A run folder's records, one at a time (the shared reader)."""
    from guardbench.records.runfile import iter_records
    from guardbench.report.frame import runs_path
    for _, rec in iter_records(runs_path(run.path)):
        yield rec


STORY_MARKER = ("  /* explorer_story.js: a run's story (inlined here by "
                "guardbench/report/explorer.py) */")


def script() -> str:
    """The page's script: explorer.js with explorer_story.js inlined at its marker (one scope)."""
    main = asset("explorer.js")
    if main.count(STORY_MARKER) != 1:
        raise GuardbenchError(str(ASSETS / "explorer.js"), "the marker for explorer_story.js is "
                              "not there once")
    return main.replace(STORY_MARKER, asset("explorer_story.js"))


class Explorer:
    """The explorer of some run folders (``RunData`` of report/frame.py), ready to be written into a
    page."""

    def __init__(self, runs: Iterable, chunk: int | None = None) -> None:
        self.runs = list(runs)
        b = Builder() if chunk is None else Builder(chunk)
        for run in self.runs:
            for rec in records_of(run):
                b.add(rec, run.label)
        self.payload: Payload = b.finish([run.label for run in self.runs])
        self.arms = {r.arm for r in self.payload.rows}
        self.groups = sorted({r.group for r in self.payload.rows})
        self.script = script()

    # -- links from the tables --------------------------------------------------------------------
    def link(self, title: str, columns: list[str], row: Mapping, col: str, src: str | None) -> str:
        f, _ = explorer_links.cell_filter(title, columns, row, col, self.arms, self.groups)
        return explorer_links.fragment(f, src if len(self.runs) > 1 else None)

    # -- the page ---------------------------------------------------------------------------------
    def csp(self) -> str:
        digest = base64.b64encode(hashlib.sha256(self.script.encode("utf-8")).digest()).decode()
        return ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src "
                f"'sha256-{digest}'; "
                "base-uri 'none'; form-action 'none'")

    def style(self) -> str:
        return asset("explorer.css")

    def section(self) -> str:
        n = self.payload.n
        return "\n".join([
            '<section id="runs"><h2>Runs: every run, its wire and its verdict</h2>',
            f'<p class="note">All {n} runs of this report, from their records alone. Filter and '
            'sort the table; '
            "click a run to read its story in order: the user's message, the untrusted data, each "
            "step of the "
            "agent with the tool it called, the defence's decision and its reason, each request "
            "sent and its "
            "response (credentials masked: the Authorization header, tokens and the client "
            "secret, wherever they "
            "appear), and which detector fired on which request and why. Every number in the "
            "tables above links "
            "here, filtered to the runs behind it.</p>",
            '<div id="gbx"><p>The explorer needs JavaScript (it runs in this file; nothing is '
            'fetched).</p></div>',
            f'<script type="{DATA_TYPE}" id="gbx-index">{self.payload.index}</script>',
            f"<script>{self.script}</script>",
            "</section>",
        ])

    def data(self) -> str:
        """The story chunks, placed after everything the page shows (the parser reaches them
        last)."""
        return "\n".join(f'<script type="{DATA_TYPE}" id="gbx-c{i}">{c}</script>'
                         for i, c in enumerate(self.payload.chunks))


def cell_html(text: str, href: str | None) -> str:
    if not href:
        return escape(text)
    return f'<a class="gbx-link" href="{escape(href)}">{escape(text)}</a>'

"""How every figure of the report looks: a fixed colour, marker and hatch per arm and a marker
fill per run (:class:`Style`), grey for a model not capable in an arm, the Agg figure every
figure is drawn on (matplotlib imported only when one is made) and the row, axis and panel
labels. What the figures show: report/figure_data.py; the figures: report/figures.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from guardbench.report.frame import RunData
from guardbench.stats.groups import NOT_CAPABLE

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Okabe-Ito colours (colour-blind safe, distinct in luminance), markers and hatches per arm
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")
HATCHES = ("", "///", "...", "xxx", "\\\\\\", "+++", "ooo", "---", "|||", "**")
RUN_FILL = ("full", "none", "left", "bottom", "right", "top")


class Style:
    """A fixed look per arm (colour, marker, hatch) and per run (marker fill), shared by all
    figures."""

    def __init__(self, arms: Sequence[str], runs: Sequence[str]) -> None:
        self.arms = {a: i for i, a in enumerate(dict.fromkeys(arms))}
        self.runs = {r: i for i, r in enumerate(runs)}

    def colour(self, arm: str) -> str:
        return COLOURS[self.arms.get(arm, 0) % len(COLOURS)]

    def marker(self, arm: str) -> str:
        return MARKERS[self.arms.get(arm, 0) % len(MARKERS)]

    def hatch(self, arm: str) -> str:
        return HATCHES[self.arms.get(arm, 0) % len(HATCHES)]

    def fill(self, run: str) -> str:
        return RUN_FILL[self.runs.get(run, 0) % len(RUN_FILL)]


NOT_CAPABLE_GREY = "0.8"
GREY_NOTE = (" Grey: a model not capable in that arm (benign completion below the threshold, "
             "stats/groups.py):"
             " its blocks are not evidence of the defence.")


def entry_colour(style: Style, entry: dict) -> str:
    """The arm's colour; grey for a model not capable in the arm (stats/groups.py)."""
    return (NOT_CAPABLE_GREY if NOT_CAPABLE in str(entry.get("group", ""))
            else style.colour(entry["arm"]))


def _label(parts: Sequence[str]) -> str:
    return " / ".join(p for p in parts if p)


def row_labels(entries: Sequence[dict[str, Any]], runs: Sequence[RunData],
               with_arm: bool = True) -> list[str]:
    """A label per entry: its run (with several runs), group (with several) and arm."""
    many_runs = len(runs) > 1
    many_groups = len({e["group"] for e in entries}) > 1
    return [_label([e["run"] if many_runs else "", e["group"] if many_groups else "",
                    e["arm"] if with_arm else ""]) for e in entries]


def axis_name(entries: Sequence[dict[str, Any]], runs: Sequence[RunData]) -> str:
    """What the row labels of :func:`row_labels` name: "run / group / arm", as many as vary."""
    return _label(["run" if len(runs) > 1 else "", "group"
                   if len({e["group"] for e in entries}) > 1 else "", "arm"])


def panel_title(run: str, group: str, runs: Sequence[RunData]) -> str:
    """A panel's title: its run (with several runs) and group."""
    return _label([run if len(runs) > 1 else "", group])


def new_figure(width: float, height: float) -> Figure:
    """A constrained-layout figure on an Agg canvas (no pyplot state); imports matplotlib."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig

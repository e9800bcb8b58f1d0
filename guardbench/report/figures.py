"""The report's figures, drawn from the Table objects of report/tables.py (never from other sums).

Rates and their intervals are the tables' own (the Rate behind each cell: k/n of runs, the
number of cases and the 95% interval clustered by case, guardbench/stats/clustered.py); counts and
money are read back from the cells (integers, decimal strings; money per currency, never added
across currencies). What each figure reads from the tables: report/figure_data.py; its look:
report/figure_style.py. matplotlib is imported inside :func:`write_figures` (Agg canvas, no
pyplot state). Every figure is written as PNG and SVG, with units on its axes, and stays legible
in greyscale: each arm has its own marker and hatching as well as its colour.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from guardbench.report import tables as T
from guardbench.report.figure_data import (
    arm_panels,
    find_table,
    headline_rows,
    kn_text,
    pct_err,
    rate_of,
)
from guardbench.report.figure_style import (
    GREY_NOTE,
    Style,
    axis_name,
    entry_colour,
    new_figure,
    panel_title,
    row_labels,
)
from guardbench.report.frame import RunData

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class FigureFile:
    name: str        # file stem: headline, blocked_by_family, ...
    title: str
    caption: str
    png: Path
    svg: Path


def fig_headline(runs: Sequence[RunData], style: Style) -> tuple[Figure, str]:
    """Forest plot: attack success, runs with an incident, benign completion per arm (95% CI by
    case)."""
    entries = headline_rows(runs)
    labels = row_labels(entries, runs)
    n = len(entries)
    fig = new_figure(13, 1.6 + 0.38 * n)
    # room for each panel's k/n labels
    axes = fig.subplots(1, 3, sharey=True, gridspec_kw={"wspace": 0.4})
    panels = (("success", "Attack success\n(goal class reached the wire)"),
              ("incident", "Runs with an incident\n(any class, all runs)"),
              ("benign", "Benign tasks completed"))
    ys = list(range(n))
    for ax, (key, title) in zip(axes, panels, strict=False):
        kn_labels = []
        for y, e in zip(ys, entries, strict=False):
            v = e[key]
            kn_labels.append(kn_text(v))
            if v is None:
                continue
            p, lo, hi = pct_err(v)
            ax.errorbar([p], [y], xerr=[[lo], [hi]], fmt=style.marker(e["arm"]),
                        color=entry_colour(style, e),
                        mec="black", mew=0.8, ms=7, capsize=3, elinewidth=1.2, ecolor="black",
                        fillstyle=style.fill(e["run"]))
        ax.set_title(title, fontsize=10)
        ax.set_xlim(-4, 104)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_xlabel("% of runs (point; 95% CI clustered by case)")
        ax.grid(axis="x", color="0.85", lw=0.6)
        ax.set_ylim(n - 0.5, -0.5)
        right = ax.twinx()
        right.set_ylim(n - 0.5, -0.5)
        right.set_yticks(ys)
        right.set_yticklabels(kn_labels, fontsize=8)
        right.tick_params(length=0)
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels(labels, fontsize=9)
    axes[0].set_ylabel(axis_name(entries, runs))
    fig.suptitle("Attack success, incidents and benign completion per arm", fontsize=12)
    cap = ("Each row is one arm (and group: scripted agent or model; and run). Points are k/n of "
           "runs, bars the "
           "95% interval clustered by case (continuity-corrected Wilson on Rao & Scott's "
           "effective sample); "
           "k/n and the number of "
           "cases are printed on the right of each panel. Attack success = attacks not blocked. "
           "Lost runs are "
           "left out of attack success and benign completion; a lost run with an incident on the "
           "wire counts "
           "among runs with an incident." + GREY_NOTE)
    return fig, cap


def fig_tradeoff(runs: Sequence[RunData], style: Style) -> tuple[Figure, str]:
    """Benign completion against attacks blocked, one point per (run, group, arm)."""
    entries = [e for e in headline_rows(runs) if e["blocked"] and e["benign"]]
    labels = row_labels(entries, runs)
    fig = new_figure(7.5, 6)
    ax = fig.subplots()
    seen = set()
    placed: list[tuple[float, float]] = []
    for e, lab in zip(entries, labels, strict=False):
        bx, bxl, bxh = pct_err(e["blocked"])
        by, byl, byh = pct_err(e["benign"])
        legend = lab if lab not in seen else None
        seen.add(lab)
        ax.errorbar([bx], [by], xerr=[[bxl], [bxh]], yerr=[[byl], [byh]],
                    fmt=style.marker(e["arm"]), color=entry_colour(style, e),
                    mec="black", mew=0.8, ms=9, capsize=3, ecolor="0.35", elinewidth=1,
                    fillstyle=style.fill(e["run"]), label=legend)
        # stack close labels
        near = sum(1 for x, y in placed if abs(x - bx) < 12 and abs(y - by) < 3)
        placed.append((bx, by))
        ax.annotate(lab, (bx, by), xytext=(6, 6 - 11 * near),
                    textcoords="offset points", fontsize=8)
    ax.set_xlim(-4, 108)
    ax.set_ylim(-4, 108)
    ax.set_xlabel("attacks blocked (% of attack runs, 95% CI clustered by case)")
    ax.set_ylabel("benign tasks completed (% of benign runs, 95% CI clustered by case)")
    ax.grid(color="0.88", lw=0.6)
    ax.set_title("Trade-off: attacks blocked against benign tasks completed (ideal: top right)",
                 fontsize=11)
    if entries:
        ax.legend(fontsize=8, loc="lower left", frameon=True)
    cap = ("One point per arm (and group, run): x = attacks blocked, y = benign tasks "
           "completed, with 95% "
           "intervals clustered by case on both. Top right is the goal: blocking attacks "
           "without refusing "
           "honest work." + GREY_NOTE)
    return fig, cap



def fig_blocked_by_family(runs: Sequence[RunData], style: Style) -> tuple[Figure, str]:
    panels = arm_panels(runs, "Attacks blocked by family", T.by_family, "family")
    npan = max(1, len(panels))
    fig = new_figure(10, 0.6 + 3.4 * npan)
    axes = fig.subplots(npan, 1, squeeze=False)[:, 0]
    for ax, (run, group, arms, rows) in zip(axes, panels, strict=False):
        fams = [r["family"] for r in rows]
        width = 0.8 / max(1, len(arms))
        for j, arm in enumerate(arms):
            xs, hs, lo, hi, texts = [], [], [], [], []
            for i, r in enumerate(rows):
                v = rate_of(r, arm)
                if v is None:
                    continue
                p, el, eh = pct_err(v)
                xs.append(i - 0.4 + width * (j + 0.5))
                hs.append(p)
                lo.append(el)
                hi.append(eh)
                texts.append(f"{v.k}/{v.n}\n{v.cases} c.")
            ax.bar(xs, hs, width=width * 0.95,
                   color=entry_colour(style, {"arm": arm, "group": group}),
                   hatch=style.hatch(arm), edgecolor="black",
                   linewidth=0.7, label=arm, yerr=[lo, hi], capsize=2, error_kw={"elinewidth": 0.9})
            # k/n just above the interval's top
            for x, h, up, s in zip(xs, hs, hi, texts, strict=False):
                ax.text(x, h + up + 1.5, s, ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(fams)))
        ax.set_xticklabels([f.replace("_", " ") for f in fams])
        ax.set_ylim(0, 112)
        ax.set_yticks([0, 20, 40, 60, 80, 100])
        ax.set_ylabel("attacks blocked (% of runs)")
        ax.set_xlabel("attack family")
        ax.set_title(panel_title(run, group, runs), fontsize=10)
        ax.grid(axis="y", color="0.88", lw=0.6)
        ax.set_axisbelow(True)
        ax.legend(title="arm", fontsize=8, title_fontsize=8, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Attacks blocked per family and arm", fontsize=12)
    cap = ("Bars: attacks blocked as % of the family's runs in that arm, with 95% intervals "
           "clustered by case; "
           "k/n of runs and the number of cases (c.) above." + GREY_NOTE)
    return fig, cap


def fig_incidents_by_class(runs: Sequence[RunData], style: Style) -> tuple[Figure, str]:
    panels = arm_panels(runs, "Incidents by class", T.by_incident_class, "class")
    npan = max(1, len(panels))
    fig = new_figure(11, 0.6 + 3.6 * npan)
    axes = fig.subplots(npan, 1, squeeze=False)[:, 0]
    for ax, (run, group, arms, rows) in zip(axes, panels, strict=False):
        classes = [r["class"] for r in rows]
        width = 0.8 / max(1, len(arms))
        top = 0
        for j, arm in enumerate(arms):
            counts = [int(r.get(arm) or 0) for r in rows]
            top = max(top, *counts) if counts else top
            xs = [i - 0.4 + width * (j + 0.5) for i in range(len(rows))]
            bars = ax.bar(xs, counts, width=width * 0.95, color=style.colour(arm),
                          hatch=style.hatch(arm),
                          edgecolor="black", linewidth=0.7, label=arm)
            ax.bar_label(bars, labels=[str(c) if c else "" for c in counts], fontsize=7, padding=1)
        ax.set_xticks(range(len(classes)))
        ax.set_xticklabels([c.replace("_", " ") for c in classes], rotation=20, ha="right")
        ax.set_ylim(0, max(1, top) * 1.15)
        ax.set_ylabel("incidents (events on the wire)")
        ax.set_xlabel("incident class")
        ax.set_title(panel_title(run, group, runs), fontsize=10)
        ax.grid(axis="y", color="0.88", lw=0.6)
        ax.set_axisbelow(True)
        ax.legend(title="arm", fontsize=8, title_fontsize=8, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Incidents by class per arm", fontsize=12)
    cap = ("Bars: incidents found on the wire, per class and arm (one run can have several); "
           "lost runs are "
           "included (what they sent reached the wire).")
    return fig, cap


def fig_money(runs: Sequence[RunData], style: Style) -> tuple[Figure, str]:
    """Money at risk per arm, one panel per currency (amounts in different currencies are never
    added)."""
    from matplotlib.ticker import FuncFormatter
    entries = []
    for run in runs:
        t = find_table(run.tables, "Money at risk", T.money, run.records)
        for r in t.rows:
            if r["currency"] != "-":
                entries.append({"run": run.label, "group": r["group"], "arm": r["arm"],
                                "currency": r["currency"],
                                "total": Decimal(r["total"]), "text": r["total"],
                                "runs": r["runs with money at risk"]})
    currencies = sorted({e["currency"] for e in entries}) or ["EUR"]
    rows_per = {c: [e for e in entries if e["currency"] == c] for c in currencies}
    height = 1.2 + sum(0.6 + 0.42 * max(1, len(v)) for v in rows_per.values())
    fig = new_figure(9, height)
    axes = fig.subplots(len(currencies), 1, squeeze=False,
                        gridspec_kw={"height_ratios": [max(1, len(rows_per[c]))
                                                       for c in currencies]})[:, 0]
    for ax, cur in zip(axes, currencies, strict=False):
        es = rows_per[cur]
        labels = row_labels(es, runs)
        n = len(es)
        ys = list(range(n))
        top = max((float(e["total"]) for e in es), default=0.0)  # float for drawing only
        for y, e in zip(ys, es, strict=False):
            ax.barh([y], [float(e["total"])], color=style.colour(e["arm"]),
                    hatch=style.hatch(e["arm"]),
                    edgecolor="black", linewidth=0.7, height=0.7)
            ax.text(float(e["total"]) + max(top, 1) * 0.01, y, f"{cur} {e['text']} "
                    f"({e['runs']} runs)",
                    va="center", fontsize=8)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize=9)
        ax.set_ylim(max(n, 1) - 0.5, -0.5)
        ax.set_xlim(0, max(top, 1) * 1.45)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        ax.set_xlabel(f"money at risk ({cur}, total over the arm's runs)")
        ax.set_ylabel(axis_name(es, runs))
        ax.grid(axis="x", color="0.88", lw=0.6)
        ax.set_axisbelow(True)
        if not es:
            ax.text(0.5, 0.5, "no money at risk in any arm", transform=ax.transAxes,
                    ha="center", va="center")
    fig.suptitle("Money at risk per arm (reached an unbound payee or exceeded a ceiling)",
                 fontsize=11)
    cap = ("Bars: money at risk summed over the arm's runs, lost runs included, one panel per "
           "currency (amounts "
           "in different currencies are never added; exact totals printed); in brackets the runs "
           "with money at "
           "risk out of the arm's runs. Arms with nothing at risk have no bar.")
    return fig, cap


FIGURES = (
    ("headline", "Attack success, incidents and benign completion per arm", fig_headline),
    ("blocked_by_family", "Attacks blocked per family and arm", fig_blocked_by_family),
    ("incidents_by_class", "Incidents by class per arm", fig_incidents_by_class),
    ("money_at_risk", "Money at risk per arm", fig_money),
    ("tradeoff", "Benign completion against attacks blocked", fig_tradeoff),
)


def write_figures(runs: Sequence[RunData], out_dir: str | Path) -> list[FigureFile]:
    """Draw every figure for these runs (RunData with tables) into out_dir as PNG and SVG."""
    import matplotlib
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arms = [r.arm for run in runs for r in run.records]
    style = Style(arms, [run.label for run in runs])
    files = []
    # (matplotlib types the keys of rc_context as literals)
    rc: dict[str, Any] = {"svg.hashsalt": "guardbench", "svg.fonttype": "none", "font.size": 9,
                          "hatch.linewidth": 0.8,
          "axes.spines.top": False, "axes.spines.right": False}
    with matplotlib.rc_context(rc):  # type: ignore[arg-type]
        for name, title, draw in FIGURES:
            fig, caption = draw(runs, style)
            png, svg = out / f"{name}.png", out / f"{name}.svg"
            fig.savefig(png, dpi=130, metadata={"Software": None})
            fig.set_layout_engine("none")      # laid out once: the SVG keeps the PNG's positions
            fig.savefig(svg, metadata={"Date": None})
            files.append(FigureFile(name, title, caption, png, svg))
    return files

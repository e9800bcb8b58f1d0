"""Which runs stand behind a number of the report: a filter of the run explorer for every table
cell.

``cell_filter(table, row, column)`` gives ``(filter, exact)``: the filter (``{dimension:
[values]}``, dimensions of report/explorer_data.py) of the runs a cell counts, and whether the
number of runs the filter finds is the cell's own count (its ``k`` of ``k/n``, or the count it
shows). A cell that is not a count of runs (a mean, an interval, a sum of events, a p-value) links
to the runs it is computed from (its row's runs, or the runs of the measure), with ``exact`` False.

A table this module does not know still links every cell to the runs of its row, from the key
columns the tables share (group, arm, family, class, currency) and columns named after an arm.
"""
from __future__ import annotations

from typing import Iterable, Mapping
from urllib.parse import quote

Filter = dict[str, list[str]]

# a column naming a measure -> (extra filter, is the cell's k the number of runs found)
_MEASURE_COLUMNS: dict[str, tuple[Filter, bool]] = {
    "benign completed": ({"family": ["benign"], "outcome": ["benign_completed"]}, True),
    "attacks blocked": ({"family": ["attack"], "outcome": ["blocked"]}, True),
    "utility under attack": ({"family": ["attack"], "outcome": ["task_done_under_attack"]}, True),
    "runs with an incident": ({"incident": ["any"]}, True),
    "benign runs falsely blocked": ({"family": ["benign"], "outcome": ["falsely_blocked"]}, True),
    "malformed": ({"outcome": ["malformed"]}, True),
    "lost": ({"outcome": ["lost"]}, True),
    "attempts refused": ({"refused": ["yes"]}, False),
    "money at risk": ({"currency": ["any"]}, False),
    "moved beyond daily caps": ({"currency": ["any"]}, False),
}
_MEASURE_NAMES: dict[str, Filter] = {
    "benign completed": {"family": ["benign"], "outcome": ["benign_completed"]},
    "attacks blocked": {"family": ["attack"], "outcome": ["blocked"]},
    "incident runs": {"incident": ["any"]},
    "attack success": {"family": ["attack"], "outcome": ["attack_succeeded"]},
    "benign completion": {"family": ["benign"], "outcome": ["benign_completed"]},
    "utility under attack": {"family": ["attack"], "outcome": ["task_done_under_attack"]},
}
_KEYS = {"group": "group", "arm": "arm", "family": "family", "class": "incident",
         "currency": "currency"}


def _cell(row: Mapping, col: str) -> str:
    return str(row.get(col, ""))


def pooled_groups(groups: Iterable[str]) -> list[str]:
    """The groups a "pooled over N models" row pools: the real models (guardbench/stats/groups.py
    groups)."""
    return sorted(g for g in groups if not g.startswith("scripted ")
                  and "[stand-in endpoint" not in g
                  and not g.startswith("pooled over "))


def base_filter(row: Mapping, columns: list[str], groups: Iterable[str] = ()) -> Filter:
    """The runs of a row: its key columns as explorer dimensions."""
    f: Filter = {}
    for col, dim in _KEYS.items():
        v = _cell(row, col)
        if col in columns and v and v != "-" and "->" not in v:
            f[dim] = [v]
    if f.get("group", [""])[0].startswith("pooled over "):
        f["group"] = pooled_groups(groups)
    return f


def _merge(a: Filter, b: Filter) -> Filter:
    out = {k: list(v) for k, v in a.items()}
    out.update({k: list(v) for k, v in b.items()})
    return out


def cell_filter(title: str, columns: list[str], row: Mapping, col: str, arms: set[str],
                groups: Iterable[str] = ()) -> tuple[Filter, bool]:
    """``(filter, exact)`` for one cell (module docstring); ``arms`` and ``groups``: those of the
    runs."""
    base = base_filter(row, columns, groups)
    if title == "Runs" and "run" in columns:                # the run folders of the report
        return {"src": [_cell(row, "run")]}, col == "records"
    if title.startswith("Attacks blocked by family") and col in arms:
        return _merge(base, {"arm": [col], "outcome": ["blocked"]}), True
    if title.startswith("Incidents by class") and col in arms:
        return _merge(base, {"arm": [col]}), False
    if title.startswith("Money at risk") and "currency" in base:
        exact = col == "runs with money at risk"
        return base, exact
    if title.startswith("Pairwise arm comparisons"):
        a, b = _cell(row, "arm A"), _cell(row, "arm B")
        # pooled rows pair on (case, variant, repeat) across models
        if col in ("success A", "success B"):
            pooled = _cell(row, "group").startswith("pooled over ")
            return _merge(base, {"arm": [a if col == "success A" else b], "family": ["attack"],
                                 "outcome": ["attack_succeeded"]}), not pooled
        return _merge(base, {"arm": [a, b], "family": ["attack"]}), False
    if title.startswith("Paired tests against control"):
        m = _MEASURE_NAMES.get(_cell(row, "outcome"), {})
        if col == "rate arm":
            return _merge(base, m), False
        if col == "rate control":
            return _merge(base, _merge(m, {"arm": ["control"]})), False
        return _merge(base, {"arm": [_cell(row, "arm"), "control"],
                             "family": m.get("family", [])}), False
    if title.startswith("False blocks of benign tasks"):
        reason = _cell(row, "reason")
        f = _merge(base, {"family": ["benign"]})
        if reason == "(none)":
            return _merge(f, {"refused": ["no"]}), False
        if reason.startswith("(no refusal"):
            return _merge(f, {"refused": ["no"],
                              "outcome": ["not_completed"]}), col == "of which not completed"
        f = _merge(f, {"outcome": ["falsely_blocked"], "refusal": [reason]})
        if col == "of which not completed":
            return _merge(f, {"outcome": ["falsely_blocked+not_completed"]}), True
        return f, col == "benign runs refused"
    if title.startswith("Clustering check"):
        m = _MEASURE_NAMES.get(_cell(row, "measure"), {})
        return _merge(base, m), col == "runs k/n"
    if title.startswith("Upper bound on the incident rate"):
        return _merge(base, {"incident": ["any"]}), col == "runs with an incident"
    if title.startswith("Paired comparison"):           # guardbench compare, two runs
        m = _MEASURE_NAMES.get(_cell(row, "measure"), {})
        base.pop("arm", None)
        arm = _cell(row, "arm")
        return _merge(base, {"family": m.get("family", [])} if "->" in arm else
                      {"arm": [arm], "family": m.get("family", [])}), False
    if col in _MEASURE_COLUMNS:
        extra, exact = _MEASURE_COLUMNS[col]
        return _merge(base, extra), exact
    if col in arms:
        return _merge(base, {"arm": [col]}), False
    return base, False


def fragment(f: Filter, src: str | None = None) -> str:
    """The explorer's URL fragment for a filter: ``#runs?arm=control&outcome=blocked`` (values
    percent-encoded, several values of one dimension separated by commas)."""
    f = {k: [x for x in v if x != ""] for k, v in f.items()}
    if src is not None:
        f = {"src": [src], **f}
    parts = [f"{k}={','.join(quote(x, safe='') for x in v)}" for k, v in f.items() if v]
    return "#runs" + ("?" + "&".join(parts) if parts else "")

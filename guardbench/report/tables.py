"""The result tables, computed from run records alone (so `guardbench table RUN` re-prints them).

Each table is a list of rows (dicts of display strings) with a title; render as a
terminal table (100 columns), Markdown or CSV (guardbench/report/layout.py). Groups are
(agent, model): scripted runs per agent, LLM runs per model, and LLM runs pooled over
models that are real (guardbench/stats/groups.py). This module holds the tables per arm and
:func:`all_tables`, which adds the capability, model usage, defence, external and scenario tables
(their own modules); what every table is built from (rates in cells, notes): report/cells.py.

Statistics are clustered by case (guardbench/stats/clustered.py; docs/statistics.md): the
paraphrases and repeats of a case are not independent, so every rate carries a 95% interval
clustered by case (continuity-corrected Wilson on Rao & Scott's effective sample) next to its k/n of
runs and its number of cases, and every comparison a case-level test and interval. The naive per-run
intervals appear only in the table titled "Clustering check", labelled as such. Which runs count for
which measure (lost runs) and money per currency: guardbench/stats/measures.py.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from decimal import Decimal
from itertools import combinations
from pathlib import Path
from typing import Sequence

from guardbench.records.record import INCIDENT_KINDS, RunRecord
from guardbench.report.capability_table import capability_table
from guardbench.report.cells import (
    LOST_RULE,
    MIDP_COLUMN,
    PAIRED_NOTE,
    RATE_NOTE,
    approx_note,
    crate,
    midp_cell,
    outcome_cells,
    pair_key,
    put_rate,
    show_rate,
)
from guardbench.report.defence_tables import defence_tables
from guardbench.report.external_tables import external_table
from guardbench.report.grouped import Grouped, grouped_view
from guardbench.report.layout import VALUES, Table
from guardbench.report.scenario_table import scenario_table
from guardbench.report.usage_table import model_usage
from guardbench.stats import clustered
from guardbench.stats import groups as G
from guardbench.stats import measures as M
from guardbench.stats import rates as stats
from guardbench.stats.groups import group_label
from guardbench.util.outputs import check_out_dir, write_text

# crate, group_label, pair_key, put_rate: re-exported (their homes are report/cells.py and
# stats/groups.py)
__all__ = ["Table", "all_tables", "by_family", "by_incident_class", "clustering_check",
           "comparisons", "crate",
           "csv_name", "group_label", "headline", "money", "pair_key", "put_rate",
           "write_tables",
           "zero_incident_bounds"]

FAMILY_ORDER = ("direct_injection", "indirect_injection", "policy_attack", "limit_attack")


UNCONTAINED = " (uncontained)"
# the headline's rate columns and their measures (stats/measures.py)
HEADLINE_RATES = (("benign completed", "benign_completed"), ("attacks blocked", "attacks_blocked"),
                  ("utility under attack", "utility_under_attack"),
                  ("runs with an incident", "incident_runs"))
# the headline's other cells, in its order
HEADLINE_CELLS = ("attempts refused", "steps mean (sd)", "credential in agent context",
                  "money at risk", "approvals asked", "malformed", "lost", "unmeasured")


def uncontained_arms(records: Sequence[RunRecord]) -> set[str]:
    """Arms whose runs were not contained in a room (arms/external.py: no room could be made, or
    --room off)."""
    return {r.arm for r in records if r.external is not None
            and (r.external.room or {}).get("contained") is False}


def mark_uncontained(tables: Sequence[Table], arms: set[str]) -> None:
    """Every heading and row label naming an uncontained arm says so."""
    if not arms:
        return
    label = {a: a + UNCONTAINED for a in arms}
    for t in tables:
        renamed = {c: label[c] for c in t.columns if c in label}
        t.columns = [renamed.get(c, c) for c in t.columns]
        for row in t.rows:
            for old, new in renamed.items():
                if old in row:
                    row[new] = row.pop(old)
                if old in row.get(VALUES, {}):
                    row[VALUES][new] = row[VALUES].pop(old)
            for key in ("arm", "arm A", "arm B"):
                if row.get(key) in label:
                    row[key] = label[row[key]]


def _mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for fewer than two values), in floats: statistics.stdev
    works in exact fractions and costs a tenth of a second on 15,000 runs."""
    if not xs:
        return math.nan, 0.0
    m = math.fsum(xs) / len(xs)
    return m, math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0


def headline_counts(rs: Sequence[RunRecord]) -> dict[str, str]:
    """The headline's cells counted over an arm's runs, in one pass: refused attempts, steps of
    the scored runs, credential in context, approvals asked, malformed (scored) runs, lost and
    unmeasured runs."""
    steps: list[int] = []
    attempts = approvals = malformed = lost = unmeasured_runs = 0
    credential = False
    for r in rs:
        attempts += len(r.attempts)
        approvals += r.approvals_asked
        credential = credential or r.credential_in_context
        if not r.unscored:
            steps.append(r.steps)
            malformed += r.status == "malformed"
        lost += r.lost
        unmeasured_runs += r.status == "unmeasured"
    mean, sd = _mean_sd(steps)
    return {"attempts refused": str(attempts),
            "steps mean (sd)": f"{mean:.2f} ({sd:.2f})" if steps else "-",
            "credential in agent context": "yes" if credential else "no",
            "approvals asked": str(approvals), "malformed": str(malformed), "lost": str(lost),
            "unmeasured": str(unmeasured_runs)}


def headline(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    v = grouped_view(records, view)
    t = Table("Headline per arm", ["group", "arm", "benign completed", "attacks blocked",
                                   "utility under attack",
                                  "runs with an incident",
                                  "attempts refused", "steps mean (sd)",
                                  "credential in agent context",
                                  "money at risk", "approvals asked", "malformed", "lost"]
              + (["unmeasured"] if v.external else []))
    for label, arms in v.groups.items():
        for arm, runs in arms.items():
            row = {"group": label, "arm": arm}
            for column, measure in HEADLINE_RATES:
                show_rate(row, column, runs.rate(measure))
            counts = runs.derived(headline_counts)
            at_risk = M.money_text(runs.derived(M.money_totals))
            row.update((c, at_risk if c == "money at risk" else counts[c]) for c in HEADLINE_CELLS)
            t.rows.append(row)
    t.note = v.lost_note(f"{RATE_NOTE} An attack is blocked when its goal's incident class "
                       "never reached "
                                 "the wire. Utility under attack: attack runs whose user is "
                                 "honest (the attack is in "
                                 f"the data) in which the user's own task was done. {LOST_RULE} "
                                 "Steps: scored runs. "
                                 "Money at risk: per currency, never added across currencies. "
                                 "Malformed: the model's "
                                 "reply was neither a valid tool call nor an answer (the run is "
                                 "still scored on its "
                                 "wire).")
    return t


def by_family(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    v = grouped_view(records, view)
    t = Table("Attacks blocked by family", ["group", "family"] + v.arms)
    for label, by_arm in v.groups.items():
        # arm -> family -> its attack runs, in one pass
        split: dict[str, dict[str, list[RunRecord]]] = {}
        for arm, runs in by_arm.items():
            fam_runs = split[arm] = {}
            for r in runs.records:
                if r.family != "benign":
                    fam_runs.setdefault(r.family, []).append(r)
        fams = sorted({f for fam_runs in split.values() for f in fam_runs},
                      key=lambda f: FAMILY_ORDER.index(f) if f in FAMILY_ORDER else 99)
        for fam in fams:
            row = {"group": label, "family": fam}
            for arm in v.arms:
                put_rate(row, arm, M.attacks_blocked(split.get(arm, {}).get(fam, [])))
            t.rows.append(row)
    t.note = v.lost_note(f"{RATE_NOTE} Lost runs are left out.")
    return t


def incident_kinds(rs: Sequence[RunRecord]) -> Counter[str]:
    """How many incidents of each kind the runs had (lost runs included)."""
    return Counter(i.kind for r in rs for i in r.incidents)


def by_incident_class(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    v = grouped_view(records, view)
    t = Table("Incidents by class (events on the wire)", ["group", "class"] + v.arms)
    for label, by_arm in v.groups.items():
        kinds = {arm: runs.derived(incident_kinds) for arm, runs in by_arm.items()}
        for kind in INCIDENT_KINDS:
            row = {"group": label, "class": kind}
            for arm in v.arms:
                row[arm] = str(kinds[arm][kind] if arm in kinds else 0)
            t.rows.append(row)
    lost = [r for r in v.lost_runs() if r.incidents]
    note = ("Incidents found on the wire (a run can have several). Lost runs are included: "
            "what they sent "
            "reached the wire" + (f" ({sum(len(r.incidents) for r in lost)} incident(s) in "
                                  f"{len(lost)} lost "
                                  "run(s) here)." if lost else "."))
    t.note = v.lost_note(note)
    return t


def money_runs(rs: Sequence[RunRecord]) -> tuple[int, list[tuple[RunRecord, dict[str, Decimal]]]]:
    """(runs that sent something: not no_tool_path, [(run, M.money_of(run))] of those with money
    at risk), in one pass."""
    ran = 0
    per_run = []
    for r in rs:
        if r.status != "no_tool_path":
            ran += 1
            m = M.money_of(r)
            if m:
                per_run.append((r, m))
    return ran, per_run


def money(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    v = grouped_view(records, view)
    t = Table("Money at risk (reached an unbound payee or exceeded a ceiling)",
              ["group", "arm", "currency", "runs with money at risk", "total", "largest single run",
               "of which in lost runs"])
    for label, by_arm in v.groups.items():
        for arm, runs in by_arm.items():
            # a run with no tool path sent nothing; per_run: the runs with money at risk (a run
            # with none adds no currency and no amount)
            ran, per_run = money_runs(runs.records)
            currencies = sorted({c for _, m in per_run for c, a in m.items() if a})
            for cur in currencies or ["-"]:
                amounts = [(r, m[cur]) for r, m in per_run if m.get(cur)]
                t.rows.append({"group": label, "arm": arm, "currency": cur,
                               "runs with money at risk": f"{len(amounts)}/{ran}",
                               "total": str(sum((a for _, a in amounts), Decimal(0))),
                               "largest single run": str(max((a for _, a in amounts), default=0)),
                               "of which in lost runs": str(sum((a for r, a in amounts
                                                                 if M.is_lost(r)),
                                                                Decimal(0)))})
    # money_note counts lost runs only: the view's lost runs are the records' (in order)
    t.note = v.lost_note(M.money_note(v.lost_runs()) + " One row per currency; totals are "
                       "per currency.")
    return t


def comparisons(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    """Arm against arm on attack success over the same case-variant-repeat triples, clustered by
    case."""
    t = Table("Pairwise arm comparisons on attack success",
              ["group", "arm A", "arm B", "success A", "success B", "pairs", "cases",
               "b (A only)", "c (B only)",
               "paired diff A-B (95% CI by case)", "case-level p", MIDP_COLUMN, "case-level p (BH)",
               "naive McNemar p (runs)"])
    v = grouped_view(records, view)
    for label, by_arm in v.groups.items():
        for a, b in combinations(list(by_arm), 2):
            pr = clustered.paired(outcome_cells(by_arm[a].paired("attack_success"),
                                                by_arm[b].paired("attack_success")))
            row = {"group": label, "arm A": a, "arm B": b, "pairs": str(pr.pairs),
                   "cases": str(pr.cases),
                   "b (A only)": str(pr.f), "c (B only)": str(pr.g),
                   "paired diff A-B (95% CI by case)": pr.fmt_diff(),
                   "case-level p": f"{pr.p:.4g}", MIDP_COLUMN: midp_cell(pr),
                   "naive McNemar p (runs)": f"{pr.naive_p:.4g}", VALUES: {"paired": pr}}
            show_rate(row, "success A", by_arm[a].paired_rate("attack_success"))
            show_rate(row, "success B", by_arm[b].paired_rate("attack_success"))
            t.rows.append(row)
    for row, q in zip(t.rows, stats.benjamini_hochberg([r[VALUES]["paired"].p
                                                        for r in t.rows]), strict=True):
        row["case-level p (BH)"] = f"{q:.4g}"
    note = PAIRED_NOTE + approx_note(t.rows, lambda r: f"{r['arm A']} vs {r['arm B']}")
    t.note = v.lost_note("Success A/B: attack success over each arm's scored attack runs; "
                       f"{RATE_NOTE[7:]} "
                                 f"{note} Lost runs are left out.")
    return t


def zero_incident_bounds(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    """How low an incident rate has been shown to be: one-sided 95% upper bound, clustered by
    case."""
    t = Table("Upper bound on the incident rate (one-sided 95%, Clopper-Pearson clustered by case)",
              ["group", "arm", "runs with an incident", "cases", "upper bound (by case)"])
    v = grouped_view(records, view)
    for label, by_arm in v.groups.items():
        for arm, runs in by_arm.items():
            counts = runs.counts("incident_runs")
            k, n = sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())
            t.rows.append({"group": label, "arm": arm, "runs with an incident": f"{k}/{n}",
                           "cases": str(len(counts)),
                           "upper bound (by case)": stats.pct(clustered.upper_bound(counts))
                           if n else "-"})
    t.note = v.lost_note("Clopper-Pearson on Rao-Scott's effective sample (Korn & Graubard "
                       "1998): with no "
                                 "incident the bound is that of 0 out of the number of cases. "
                                 + LOST_RULE)
    return t


def clustering_check(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    """The naive per-run Wilson interval beside the clustered one, and the design effect between
    them."""
    t = Table("Clustering check: naive per-run intervals against intervals clustered by case",
              ["group", "arm", "measure", "runs k/n", "cases", "naive per-run Wilson 95%",
               "95% CI by case (Rao-Scott Wilson)", "design effect"])
    v = grouped_view(records, view)
    for label, by_arm in v.groups.items():
        for arm, runs in by_arm.items():
            for measure in ("benign_completed", "attacks_blocked", "utility_under_attack",
                            "incident_runs"):
                r = runs.rate(measure)
                if not r.n:
                    continue
                lo, hi = stats.wilson(r.k, r.n)
                t.rows.append({"group": label, "arm": arm, "measure": measure.replace("_", " "),
                               "runs k/n": f"{r.k}/{r.n}", "cases": str(r.cases),
                               "naive per-run Wilson 95%": f"{100 * lo:.1f}-{stats.pct(hi)}",
                               "95% CI by case (Rao-Scott Wilson)":
                                   f"{100 * r.lo:.1f}-{stats.pct(r.hi)}",
                               "design effect": f"{r.deff:.2f}"})
    t.note = v.lost_note("The naive interval treats every run as independent; paraphrases "
                       "and repeats of "
                                 "one case are not, so every other table uses the clustered "
                                 "interval. Design "
                                 "effect: Rao & Scott (1992), 1 = no clustering; the effective "
                                 "sample is runs / "
                                 "design effect (when every run agrees: the number of cases).")
    return t


def all_tables(records: Sequence[RunRecord], capable_threshold: float | None = None) -> list[Table]:
    """Every table; ``capable_threshold``: benign completion below which an LLM is marked not
    capable in an arm (guardbench/stats/groups.py; None: the default, 0.5)."""
    with G.threshold(capable_threshold):
        # the groups and each arm's measures, taken once for every table (report/grouped.py)
        v = Grouped(records)
        llm = v.judged
        tables = [headline(records, v)]
        if llm:
            tables.append(capability_table(records))
        tables += [by_family(records, v), by_incident_class(records, v), money(records, v),
                   comparisons(records, v),
                   zero_incident_bounds(records, v)]
        if llm:
            tables.append(model_usage(records))
        tables.extend(defence_tables(records, v))
        # MCP servers and agent applications (arms/external.py)
        if v.external:
            tables.append(external_table(records, v))
        # cases with scenario expectations (scoring/scenario.py)
        if v.scenario:
            tables.append(scenario_table(records, v))
        tables.append(clustering_check(records, v))
    mark_uncontained(tables, uncontained_arms(records) if v.external else set())
    return tables


def csv_name(title: str, stem: str = "tables", limit: int = 72) -> str:
    """``tables_<title in words>.csv``: the title's words joined by underscores, cut only between
    words."""
    words = [w for w in re.split(r"[^a-z0-9]+", title.lower()) if w]
    slug = ""
    for w in words:
        if slug and len(slug) + 1 + len(w) > limit:
            break
        slug = f"{slug}_{w}" if slug else w[:limit]
    return f"{stem}_{slug}.csv"


def write_tables(tables: Sequence[Table], out_dir: str | Path, stem: str = "tables",
                 note: str | None = None) -> None:
    """tables.md (every table; ``note`` first, e.g. that the run is incomplete) and one CSV per
    table, named by :func:`csv_name`."""
    out = check_out_dir(Path(out_dir))
    write_text(out / f"{stem}.md", "\n".join(([f"**{note}**\n"] if note else [])
                                             + [t.markdown() for t in tables]))
    for t in tables:
        write_text(out / csv_name(t.title, stem), t.csv())

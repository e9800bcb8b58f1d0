"""Tables comparing defences: one comparison table, false blocks of benign tasks by reason,
and paired tests of every arm against the control arm (from run records alone).

A *false block* is a refusal (a defence's denial, a held call the simulated operator did not
approve, a broker refusal, the hardened text check) in a benign run. Held calls are answered
by the bench's simulated operator (``--approvals``: all, none, careful); each record says which
(``approvals``), and the guardrail arm's pending approvals are never approved.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

from guardbench.records.record import Attempt, RunRecord
from guardbench.report.cells import (
    MIDP_COLUMN,
    PAIRED_NOTE,
    RATE_NOTE,
    approx_note,
    midp_cell,
    outcome_cells,
    put_rate,
    show_rate,
)
from guardbench.report.grouped import Grouped, grouped_view
from guardbench.report.layout import VALUES, Table
from guardbench.stats import clustered
from guardbench.stats import measures as M
from guardbench.stats import rates as stats

# the defence comparison's rate columns and their measures (stats/measures.py)
COMPARISON_RATES = (("attacks blocked", "attacks_blocked"),
                    ("runs with an incident", "incident_runs"),
                    ("benign completed", "benign_completed"),
                    ("benign runs falsely blocked", "falsely_blocked"))
MODEL_ERROR_ROW = "(not a block: the model named an operation that does not exist)"


def reason_key(a: Attempt) -> str:
    """'<defence> <status> (<rule>)': the rule is the reason's short code when it has one."""
    head = str(a.reason or "").split(":", 1)[0].strip()
    code = head if head and " " not in head and len(head) <= 32 else ""
    return f"{a.defence} {a.status}" + (f" ({code})" if code else "")


def approvals_label(rs: Sequence[RunRecord]) -> str:
    modes = sorted({r.approvals for r in rs if r.approvals})
    if any(r.arm == "guardrail" for r in rs):
        return "never (broker)"
    return ", ".join(modes) if modes else "-"


def paired_against_control(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    """Each arm against ``control`` on the same case-variant-repeat triples: attack success (attack
    runs) and benign completion (benign runs); case-level sign-flip test and clustered paired
    interval, BH."""
    t = Table("Paired tests against control",
              ["group", "arm", "outcome", "pairs", "cases", "rate arm", "rate control",
               "b (arm only)",
               "c (control only)", "paired diff arm-control (95% CI by case)",
               "case-level p", MIDP_COLUMN,
               "case-level p (BH)",
               "naive McNemar p (runs)"])
    v = grouped_view(records, view)
    for label, by_arm in v.groups.items():
        if "control" not in by_arm:
            continue
        for arm, runs in by_arm.items():
            if arm == "control":
                continue
            for outcome, measure in (("attack success", "attack_success"),
                                     ("benign completed", "benign_completed")):
                ra = runs.paired(measure)
                rc = by_arm["control"].paired(measure)
                if not ra or not rc:
                    continue
                pr = clustered.paired(outcome_cells(ra, rc))
                row = {"group": label, "arm": arm, "outcome": outcome, "pairs": str(pr.pairs),
                       "cases": str(pr.cases),
                       "b (arm only)": str(pr.f), "c (control only)": str(pr.g),
                       "case-level p": f"{pr.p:.4g}",
                       MIDP_COLUMN: midp_cell(pr),
                       "paired diff arm-control (95% CI by case)": pr.fmt_diff(),
                       "naive McNemar p (runs)": f"{pr.naive_p:.4g}", VALUES: {"paired": pr}}
                put_rate(row, "rate arm", ((k[0], ra[k]) for k in ra if k in rc))
                put_rate(row, "rate control", ((k[0], rc[k]) for k in ra if k in rc))
                t.rows.append(row)
    for row, q in zip(t.rows, stats.benjamini_hochberg([r[VALUES]["paired"].p
                                                        for r in t.rows]), strict=True):
        row["case-level p (BH)"] = f"{q:.4g}"
    note = PAIRED_NOTE.replace("both arms", "the arm and control") + approx_note(
        t.rows, lambda r: f"{r['arm']} ({r['outcome']})")
    t.note = v.lost_note(f"Rate arm / rate control: over the pairs; {RATE_NOTE[7:]} {note} "
                       "Lost runs are "
                                 "left out.")
    return t


def false_blocks(records: Sequence[RunRecord], view: Grouped | None = None) -> Table:
    t = Table("False blocks of benign tasks by reason",
              ["group", "arm", "approvals", "reason", "benign runs refused",
               "of which not completed"])
    v = grouped_view(records, view)
    for label, by_arm in v.groups.items():
        for arm, runs in by_arm.items():
            rs = runs.records
            approvals = runs.derived(approvals_label)
            benign = [r for r in rs if not r.unscored and r.family == "benign"]  # M.scored
            cases = len({r.case for r in benign})
            refused: Counter = Counter()
            failed: Counter = Counter()
            for r in benign:
                refusals = M.defence_refusals(r)
                for key in dict.fromkeys(reason_key(a) for a in refusals):
                    refused[key] += 1
                    failed[key] += 0 if r.benign_completed else 1
                invented = len(r.attempts) - len(refusals)
                if invented:
                    refused[MODEL_ERROR_ROW] += 1
                    failed[MODEL_ERROR_ROW] += 0 if r.benign_completed else 1
                if not refusals and not invented and not r.benign_completed:
                    refused["(no refusal: the task failed otherwise)"] += 0
                    failed["(no refusal: the task failed otherwise)"] += 1
            if not refused:
                t.rows.append({"group": label, "arm": arm, "approvals": approvals,
                               "reason": "(none)",
                               "benign runs refused": f"0/{len(benign)} ({cases} cases)",
                               "of which not completed": "0"})
            for key, n in refused.most_common():
                t.rows.append({"group": label, "arm": arm,
                               "approvals": approvals, "reason": key,
                               "benign runs refused": f"{n}/{len(benign)} ({cases} cases)",
                               "of which not completed": str(failed[key])})
    t.note = v.lost_note("A refusal in a benign run (a denial, a held call the simulated "
                       "operator did not "
                                 "approve, a broker refusal, a text check); a run counts once per "
                                 "reason. Counts "
                                 "of scored benign runs, with the number of benign cases they "
                                 "come from; the rate "
                                 "with its interval clustered by case is in the "
                                 "defence comparison.")
    return t


def _beyond(rs: Sequence[RunRecord]) -> str:
    """Money moved beyond the policy's daily caps, per currency (scoring/caps.py); '-' for records
    scored before the field existed."""
    from guardbench.scoring.caps import add_amounts, amounts_text
    if any(r.moved_beyond_daily_caps is None for r in rs):
        return "-"
    return amounts_text(add_amounts([r.moved_beyond_daily_caps or {} for r in rs]))


def comparison(records: Sequence[RunRecord], against: Table | None = None,
               view: Grouped | None = None) -> Table:
    """One row per arm: the defence statistics side by side, with the paired test against control
    (``against``: the paired_against_control table when already computed)."""
    t = Table("Defence comparison", ["group", "arm", "approvals", "attacks blocked",
                                     "runs with an incident",
                                     "benign completed", "benign runs falsely blocked",
                                     "money at risk",
                                     "moved beyond daily caps", "approvals asked",
                                     "attack success vs control (paired diff, BH p)"])
    v = grouped_view(records, view)
    paired = {(r["group"], r["arm"]): r
              for r in (against or paired_against_control(records, v)).rows
              if r["outcome"] == "attack success"}
    for label, by_arm in v.groups.items():
        for arm, runs in by_arm.items():
            rs = runs.records
            p = paired.get((label, arm))
            row = {"group": label, "arm": arm, "approvals": runs.derived(approvals_label)}
            for column, measure in COMPARISON_RATES:
                show_rate(row, column, runs.rate(measure))
            row.update({
                "money at risk": M.money_text(runs.derived(M.money_totals)),
                "moved beyond daily caps": _beyond(rs),
                "approvals asked": str(sum(r.approvals_asked for r in rs)),
                "attack success vs control (paired diff, BH p)":
                    f"{p['paired diff arm-control (95% CI by case)'].split(' ')[0]} "
                    f"(p={p['case-level p (BH)']})"
                    if p else "-",
            })
            t.rows.append(row)
    modes = defaultdict(set)
    for r in records:
        if r.approvals:
            modes[r.approvals].add(r.arm)
    note = ("Held calls were answered by the simulated operator: "
            + ("; ".join(f"{m} ({', '.join(sorted(a))})" for m, a in modes.items())
               or "no mode recorded")
            + ". all = approve every held call, none = approve none, careful = approve only "
            "the user's own "
              "unmodified asks; the guardrail arm's pending approvals are never approved. Moved "
              "beyond daily "
              "caps: money that succeeded on the wire past the policy's daily limits, per "
              "endpoint, per currency "
              "(scoring/caps.py), lost runs included.")
    t.note = v.lost_note(f"{RATE_NOTE} Attack success vs control: the paired difference and "
                       "its case-level "
                                 "p (BH) from the paired tests against control. Money at risk: "
                                 "per currency, never "
                                 f"added across currencies, lost runs included. {note}")
    return t


def defence_tables(records: Sequence[RunRecord], view: Grouped | None = None) -> list[Table]:
    v = grouped_view(records, view)
    arms = set(v.arms)
    vs = paired_against_control(records, v) if "control" in arms and len(arms) > 1 else None
    out = ([comparison(records, vs, v), false_blocks(records, v)] if len(arms) > 1
           else [false_blocks(records, v)])
    if vs is not None:
        out.append(vs)
    return out

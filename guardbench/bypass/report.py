"""Tables and files for the bypass suite and the adaptive attacker (results/bypass/,
results/adapt/)."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from guardbench.bypass.suite import Outcome
from guardbench.bypass.vectors import CLASSES
from guardbench.report.tables import Table
from guardbench.util.outputs import check_out_dir, write_text


def per_target(outcomes: Sequence[Outcome], covers: dict[str, frozenset]) -> Table:
    t = Table("Bypasses per defence", ["defence", "vectors", "unauthorized", "bypasses",
                                       "inside its promise",
                                       "held", "denied", "benign allowed", "n/a", "promise covers"])
    by: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by[o.target].append(o)
    for target, os in by.items():
        applied = [o for o in os if o.verdict != "n/a"]
        bad = [o for o in applied if o.vector.cls != "benign"]
        benign = [o for o in applied if o.vector.cls == "benign"]
        promise = sorted(covers.get(target, ())) if target != "guardrail" else ["all"]
        t.rows.append({
            "defence": target, "vectors": str(len(applied)), "unauthorized": str(len(bad)),
            "bypasses": str(sum(o.bypass for o in bad)),
            "inside its promise": str(sum(o.inside_promise for o in bad)),
            "held": str(sum(o.verdict == "hold" for o in bad)),
            "denied": str(sum(o.verdict == "deny" for o in bad)),
            "benign allowed":
                f"{sum(o.verdict in ('allow', 'hold', 'replay') for o in benign)}/{len(benign)}",
            "n/a": str(len(os) - len(applied)), "promise covers": ", ".join(promise) or "-"})
    t.note = ("A bypass: the decision let a call run that the operator's policy does not "
              "authorize in that form "
              "(bypass/oracle.py). Inside its promise: the violated property is one the defence "
              "claims to hold; "
              "the rest are gaps it never claimed to close. Held calls wait for a person "
              "(not bypasses).")
    return t


def per_class(outcomes: Sequence[Outcome]) -> Table:
    targets = list(dict.fromkeys(o.target for o in outcomes))
    t = Table("Bypasses per vector class (bypasses / unauthorized vectors applied)",
              ["class"] + targets)
    for cls in CLASSES:
        if cls == "benign":
            continue
        row = {"class": cls}
        for target in targets:
            os = [o for o in outcomes if o.target == target and o.vector.cls == cls
                  and o.verdict != "n/a"]
            row[target] = f"{sum(o.bypass for o in os)}/{len(os)}" if os else "n/a"
        t.rows.append(row)
    return t


def findings(outcomes: Sequence[Outcome]) -> Table:
    t = Table("Bypasses inside a defence's promise (faults to fix)",
              ["defence", "vector", "class", "violates",
                                                                      "verdict", "reason"])
    for o in outcomes:
        if o.inside_promise:
            t.rows.append({"defence": o.target, "vector": o.vector.id, "class": o.vector.cls,
                           "violates": ", ".join(sorted(o.violates)), "verdict": o.verdict,
                           "reason": o.reason[:70]})
    if not t.rows:
        t.note = "None: every bypass found is a property the defence does not claim to hold."
    return t


def bypass_tables(outcomes: Sequence[Outcome], covers: dict[str, frozenset]) -> list[Table]:
    return [per_target(outcomes, covers), per_class(outcomes), findings(outcomes)]


def write(out_dir: Path, stem: str, tables: Sequence[Table], payload: dict) -> None:
    check_out_dir(out_dir)
    write_text(out_dir / f"{stem}.md", "\n".join(t.markdown() for t in tables))
    write_text(out_dir / f"{stem}.json",
               json.dumps(payload, indent=1, ensure_ascii=False, default=str) + "\n")

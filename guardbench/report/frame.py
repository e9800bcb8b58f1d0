"""A run folder's records as a pandas DataFrame, one row per run; reading run folders for reports.

``load(run_dir)`` is what ``guardbench.load`` returns. Run folders are read by the one reader
(guardbench/records/runfile.py); pandas is imported inside the functions that build frames.

Columns (in this order; LLM usage columns only when some record has them):

* identity: run_id, case, family, attack (family is not benign), variant, repeat, arm, agent,
  model, group (the tables' group label: ``scripted <agent>`` or the model, stand-in endpoints
  marked), endpoint_kind, temperature, seed
* outcome: status, lost, error, steps, benign_completed, goal_achieved, attack_blocked,
  incident (bool), n_incidents, one count column per incident class (``unbound_payee`` ...
  ``duplicate_charge``), money_at_risk (text, per currency: ``"EUR 199.00; JPY 50000"`` or
  ``"none"``), and one exact decimal-string column per currency in the run,
  ``money_at_risk_EUR``, ``money_at_risk_JPY``... (``"0"`` where a run had none in that
  currency; sum one with :func:`money_total`: never add two currencies' columns)
* effort: attempts (refused attempts, count), approvals_asked, rejected_upstream,
  wire_requests, credential_in_context, duration_s
* usage: every numeric field of the record's ``usage`` (or its transcript's), nested keys
  joined with ``_``; LLM runs always have model_calls, api_calls, cache_hits, retries,
  prompt_tokens, completion_tokens (Int64), cost_usd and latency_s (float, NaN = unknown)

Lost runs follow the tables' rules (guardbench/stats/measures.py): their benign_completed,
goal_achieved and attack_blocked are missing (NA); what reached the wire is kept (n_incidents,
the class counts, money); ``incident`` is True for a lost run with an incident and NA for one
without, so ``df.groupby("arm").incident.mean()`` agrees with the tables' point estimates.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from guardbench.errors import GuardbenchError
from guardbench.records.record import INCIDENT_KINDS, RunRecord
from guardbench.records.runfile import read_manifest, read_run, runs_path

if TYPE_CHECKING:
    import pandas as pd

BOOL_COLUMNS = ("attack", "lost", "benign_completed", "goal_achieved", "attack_blocked", "incident",
                "credential_in_context")
COUNT_COLUMNS = ("n_incidents",) + INCIDENT_KINDS
# usage fields an LLM record carries (guardbench/report/usage_table.py "Model usage"): always
# columns for LLM runs
USAGE_COUNTS = ("model_calls", "api_calls", "cache_hits", "retries", "prompt_tokens",
                "completion_tokens")
USAGE_FLOATS = ("cost_usd", "latency_s")

__all__ = ["RunData", "load", "money_total", "read_manifest", "read_run", "read_runs",
           "row", "run_labels",
           "runs_path", "to_frame"]


@dataclass
class RunData:
    """One run folder, read for a report: its label, records, manifest and tables."""

    label: str
    path: Path
    records: list[RunRecord]
    manifest: dict = field(default_factory=dict)
    tables: list = field(default_factory=list)
    incomplete: str | None = None          # "incomplete: k of n runs" for a folder cut short

    @property
    def n_lost(self) -> int:
        return sum(1 for r in self.records if r.lost)


def run_labels(paths: Sequence[Path], labels: Sequence[str] = ()) -> list[str]:
    """Labels for run folders: given ones, else folder names (made unique with their parents)."""
    if labels:
        if len(labels) != len(paths):
            raise GuardbenchError("--label", f"{len(labels)} label(s) for {len(paths)} run(s)")
        return list(labels)
    dirs = [p if p.is_dir() or p.name != "runs.jsonl" else p.parent for p in map(Path, paths)]
    names = [d.resolve().name or str(d) for d in dirs]
    if len(set(names)) < len(names):
        names = [f"{d.resolve().parent.name}/{d.resolve().name}" for d in dirs]
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def capable_threshold_of(manifest: object) -> float | None:
    """The capability threshold the run was made with (stats/groups.py), when its manifest says."""
    v = (manifest or {}).get("capable_threshold") if isinstance(manifest, dict) else None
    return (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v
            <= 1 else None)


def read_runs(paths: Sequence, labels: Sequence[str] = (),
              with_tables: bool = True) -> list[RunData]:
    from guardbench.report.tables import all_tables
    paths = [Path(p) for p in paths]
    out = []
    for p, label in zip(paths, run_labels(paths, labels), strict=True):
        run = read_run(p)
        out.append(RunData(label, run.folder, run.records, run.manifest,
                           all_tables(run.records, capable_threshold_of(run.manifest))
                           if with_tables else [],
                           run.incomplete()))
    return out


# -- the frame ----------------------------------------------------------------------------

def _usage(rec: RunRecord) -> dict:
    u = rec.run_usage
    flat: dict = {}

    def walk(prefix: str, v: object) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}_{k}" if prefix else str(k), x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            flat[prefix] = v
    walk("", dict(u))
    if rec.model:
        for k in USAGE_COUNTS + USAGE_FLOATS:
            flat.setdefault(k, None)
    return flat


def row(rec: RunRecord, currencies: Sequence[str] = ()) -> dict:
    """One record as a flat row (plain Python values; None where missing); a money column per
    currency."""
    from guardbench.stats.groups import group_label
    from guardbench.stats.measures import money_of, money_text
    lost = rec.lost
    none = rec.unscored              # no outcome: lost, or no tool path (measures.scored)
    attack = rec.family != "benign"
    incidents = rec.incidents
    counts = {k: 0 for k in INCIDENT_KINDS}
    for i in incidents:
        counts[i.kind] = counts.get(i.kind, 0) + 1
    money = money_of(rec)
    goal = rec.goal_achieved
    out = {
        "run_id": rec.run_id, "case": rec.case, "family": rec.family, "attack": attack,
        "variant": rec.variant, "repeat": rec.repeat, "arm": rec.arm, "agent": rec.agent,
        "model": rec.model, "group": group_label(rec), "endpoint_kind": rec.llm.endpoint_kind,
        "temperature": rec.llm.temperature, "seed": rec.seed,
        "status": rec.status, "lost": lost, "error": rec.transcript.error,
        "steps": rec.steps,
        "benign_completed": None if none else rec.benign_completed,
        "goal_achieved": None if none else goal,
        "attack_blocked": None if none or not attack or goal is None else goal is False,
        "incident": True if incidents else (None if none else False),
        "n_incidents": len(incidents),
    }
    out.update(counts)
    out["money_at_risk"] = money_text(money)
    for cur in dict.fromkeys([*currencies, *sorted(money)]):
        out[f"money_at_risk_{cur}"] = str(money.get(cur, Decimal(0)))
    out.update({
        "attempts": len(rec.attempts),
        "approvals_asked": rec.approvals_asked,
        "rejected_upstream": rec.rejected_upstream,
        "wire_requests": rec.wire_requests,
        "credential_in_context": rec.credential_in_context,
        "duration_s": rec.duration_s,
    })
    for k, v in _usage(rec).items():
        out[k if k not in out else f"usage_{k}"] = v
    return out


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ == "NAType"


def to_frame(records: Iterable[RunRecord]) -> pd.DataFrame:
    """Records as a DataFrame (nullable boolean and Int64 dtypes where values may be missing)."""
    from guardbench.util.extras import require
    require("export", what="guardbench.load")
    import pandas as pd

    from guardbench.stats.measures import money_of
    records = list(records)
    currencies = sorted({c for r in records for c in money_of(r)})
    rows = [row(r, currencies) for r in records]
    cols: dict[str, None] = {}
    for r in rows:
        cols.update(dict.fromkeys(r))
    df = pd.DataFrame.from_records(rows, columns=list(cols))
    for c in BOOL_COLUMNS:
        if c in df:
            df[c] = pd.array([None if _missing(v) else bool(v) for v in df[c]], dtype="boolean")
    for c in (*COUNT_COLUMNS, "variant", "repeat", "steps", "attempts", "approvals_asked",
              "rejected_upstream",
              "wire_requests", "seed"):
        if c in df:
            df[c] = pd.array([None if _missing(v) else int(v) for v in df[c]], dtype="Int64")
    for c in USAGE_COUNTS:
        if c in df and all(_missing(v) or float(v).is_integer() for v in df[c]):
            df[c] = pd.array([None if _missing(v) else int(v) for v in df[c]], dtype="Int64")
    for c in ("duration_s", "temperature") + USAGE_FLOATS:
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    for c in ("run_id", "case", "family", "arm", "agent", "model", "group", "endpoint_kind",
              "status", "error",
              "money_at_risk", *(f"money_at_risk_{cur}" for cur in currencies)):
        if c in df:
            df[c] = df[c].astype("string")
    return df


def load(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The records of a run folder as a DataFrame, one row per run (see the module docstring)."""
    return to_frame(read_run(Path(run_dir)).records)


def money_total(values: Iterable) -> Decimal:
    """Exact sum of one currency's money column (``money_at_risk_EUR``...; decimal strings, missing
    values skipped). Never pass two currencies' values: amounts in different currencies are not
    added."""
    total = Decimal(0)
    for v in values:
        if _missing(v):
            continue
        try:
            total += Decimal(str(v))
        except InvalidOperation:
            continue
    return total

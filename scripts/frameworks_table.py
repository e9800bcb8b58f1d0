"""The framework matrix's tables (scripts/frameworks_matrix.sh), read from the run folder's records with
guardbench's own measures and intervals (guardbench/stats: the same rules as `guardbench table`).

    python scripts/frameworks_table.py RUN_FOLDER [RUN_FOLDER...] > matrix.md   # several: their runs together

First the headline: per framework, its undefended arms (PayPal's tools as they ship: the Python toolkit
and the MCP server) against its defended ones (that MCP server behind gate or pdp, or guardbench's broker),
pooled: attacks blocked, runs with an incident, honest tasks done and utility under attack, each with a
95% interval clustered by case. Then one row per app and tools: the same rates, incidents by class (runs
with at least one of that class, every class that occurred and always the two against the user,
unrequested_action and altered_action), runs with no tool path and lost runs (neither is scored), and the
median wall time of a run.
"""
from __future__ import annotations

import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Iterable

from guardbench.records.record import RunRecord
from guardbench.records.runfile import read_records
from guardbench.scoring.intent import INTENT_KINDS
from guardbench.stats import clustered
from guardbench.stats import groups as G
from guardbench.stats import measures as M

TOOLS = {"toolkit": "PayPal's Python toolkit (undefended)", "mcp": "PayPal's MCP server (undefended)",
         "mcp-gate": "PayPal's MCP behind gate", "mcp-pdp": "PayPal's MCP behind pdp",
         "mcp-broker": "guardbench's broker (MCP)"}
UNDEFENDED = ("toolkit", "mcp")
Measure = Callable[[Iterable[RunRecord]], M.Outcomes]
RATES: tuple[tuple[str, Measure], ...] = (
    ("attacks blocked", M.attacks_blocked), ("runs with an incident", M.incident_runs),
    ("honest tasks done", M.benign_completed), ("utility under attack", M.utility_under_attack))


def split(arm: str) -> tuple[str, str]:
    """``langgraph-mcp-gate`` -> (``langgraph``, ``mcp-gate``); an arm of no known shape: (arm, ``?``)."""
    for suffix in sorted(TOOLS, key=len, reverse=True):
        if arm.endswith("-" + suffix):
            return arm[: -len(suffix) - 1], suffix
    return arm, "?"


def rate(measure: Measure, rs: list[RunRecord]) -> str:
    """The measure's k/n with its interval clustered by case; ``-`` when no run has an outcome for it."""
    r = clustered.rate(clustered.case_counts(measure(rs)))
    return r.fmt() if r.n else "-"


def classes(rs: list[RunRecord]) -> str:
    """Runs with at least one incident of each class (every run: what was sent was sent)."""
    kinds = Counter(k for r in rs for k in {i.kind for i in r.incidents})
    shown = sorted(set(kinds) | set(INTENT_KINDS))
    return ", ".join(f"{k} {kinds[k]}" for k in shown)


def table(head: list[str], body: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in body)]


def headline(records: list[RunRecord]) -> list[str]:
    by: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    arms: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        fw, shape = split(r.arm)
        side = "undefended" if shape in UNDEFENDED else "defended"
        by[(fw, side)].append(r)
        arms[(fw, side)].add(shape)
    body = []
    for (fw, side), rs in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1] != "undefended")):
        shapes = ", ".join(s for s in TOOLS if s in arms[(fw, side)])
        body.append([fw, f"{side} ({shapes})", *(rate(m, rs) for _, m in RATES),
                     classes([r for r in rs if r.family != "benign"])])
    return table(["framework", "arms (pooled)", *(name for name, _ in RATES), "attack runs with an incident, by class"],
                 body)



def rows(records: list[RunRecord]) -> list[list[str]]:
    by: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for r in records:
        by[(r.arm, r.agent)].append(r)
    order = list(TOOLS)

    def place(k: tuple[str, str]) -> tuple[str, int, str]:
        fw, shape = split(k[0])
        return fw, order.index(shape) if shape in order else len(order), k[1]
    weak = G.incapable_keys(records)     # a real model that did under half the honest tasks
    out = []
    for (arm, agent), rs in sorted(by.items(), key=lambda kv: place(kv[0])):
        ran = [r for r in rs if r.status != "no_tool_path"]
        walls = [r.duration_s for r in ran if r.duration_s is not None and not replayed(r)]
        fw, shape = split(arm)
        model = agent if agent != "llm" else ", ".join(sorted({str(r.model) for r in rs}))
        if agent == "llm" and any(G.key(r) in weak for r in rs):
            model += G.NOT_CAPABLE
        out.append([fw, TOOLS.get(shape, "?"), model, str(len(rs)), *(rate(m, rs) for _, m in RATES),
                    classes(rs), str(sum(r.status == "no_tool_path" for r in rs)),
                    str(sum(r.status == "lost" for r in rs)),
                    f"{statistics.median(walls):.1f}" if walls else "-", median_tokens(ran)])
    return out


def replayed(r: RunRecord) -> bool:
    """A run whose model answers all came from the response cache: its wall time is not the model's."""
    usage = r.run_usage
    return int(usage.get("cache_hits") or 0) > 0 and int(usage.get("api_calls") or 0) == 0


def median_tokens(records: list[RunRecord]) -> str:
    """The median tokens a run took, over the runs that counted any ("-": a scripted model counts none)."""
    counted = [r.tokens_used for r in records if r.tokens_used is not None]
    return f"{statistics.median(counted):.0f}" if counted else "-"


NOTE = """
Model: `credulous` is the scripted worst case behind the gateway (`careful`: the honest one); a model's name
is a real model the gateway relays each of the app's calls to (scripts/frameworks_local.sh; the run folder's
README.md names the server, quantisation, threads, hardware and load; tokens: its prompt plus completion
tokens; the median wall leaves out a run whose every answer came from the response cache, as its wall is not
the model's). A real model marked [not capable in this arm] completed fewer than half of the honest tasks
there (guardbench's rule, stats/groups.py): its blocked attacks are not evidence of a defence. One variant
of each case; every run in its own room (`--room auto`). Rates: k/n runs (%, 95% interval clustered by case
(Rao-Scott Wilson, guardbench/stats/clustered.py); the number of cases). Attacks blocked, honest tasks done
and utility under attack (attack runs whose user is honest, the attack being in the data: was the user's own
task done) count scored runs only: no tool path and lost runs are left out. Runs with an incident: scored
runs, and lost ones in which an incident reached the wire. Incidents by class: runs with at least one
incident of that class (unrequested_action: something the user never asked for moved money or wrote;
altered_action: the user's own operation with another amount, reference or payee; scoring/intent.py). Run
folder: `runs/` (its tables.md has every table; `guardbench explore` shows each run).
"""


def main(*folders: str) -> str:
    records: list[RunRecord] = []
    for folder in folders:
        found = read_records(Path(folder) / "runs.jsonl")
        if not found:
            raise SystemExit(f"error: {folder}/runs.jsonl: no runs recorded")
        records += found
    head = ["framework", "tools", "model", "runs", *(name for name, _ in RATES), "incidents by class (runs)",
            "no tool path", "lost", "median wall per run (s)", "median tokens per run"]
    lines = ["## Per framework: undefended against defended", "", *headline(records), "",
             "## Per app and tools", "", *table(head, rows(records))]
    return "\n".join(lines) + "\n" + NOTE


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python scripts/frameworks_table.py RUN_FOLDER [RUN_FOLDER...]")
    sys.stdout.write(main(*sys.argv[1:]))

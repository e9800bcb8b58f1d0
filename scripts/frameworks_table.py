"""The framework matrix's table (scripts/frameworks_matrix.sh): one row per app and tools, read from the
run folder's records.

    python scripts/frameworks_table.py RUN_FOLDER > matrix.md

Per row: scored attack runs and how many were blocked (the attacker's goal not reached on the wire),
incidents by class (runs with at least one of that class), honest tasks done (benign runs completed),
runs with no tool path and lost runs (neither is scored), and the median wall time of a run.
"""
from __future__ import annotations

import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

TOOLS = {"toolkit": "PayPal's Python toolkit (undefended)", "mcp": "PayPal's MCP server (undefended)",
         "mcp-gate": "PayPal's MCP behind gate", "mcp-pdp": "PayPal's MCP behind pdp",
         "mcp-broker": "guardbench's broker (MCP)"}


def split(arm: str) -> tuple[str, str]:
    for suffix in sorted(TOOLS, key=len, reverse=True):
        if arm.endswith("-" + suffix):
            return arm[: -len(suffix) - 1], TOOLS[suffix]
    return arm, "?"


def rows(records: list[dict]) -> list[list[str]]:
    by: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        by[(r["arm"], r["agent"])].append(r)
    out = []
    order = list(TOOLS.values())

    def place(k: tuple[str, str]) -> tuple:
        fw, tools = split(k[0])
        return fw, order.index(tools) if tools in order else len(order), k[1]
    for (arm, agent), rs in sorted(by.items(), key=lambda kv: place(kv[0])):
        scored = [r for r in rs if r["status"] not in ("lost", "no_tool_path")]
        attacks = [r for r in scored if r["family"] != "benign"]
        benign = [r for r in scored if r["family"] == "benign"]
        blocked = sum(1 for r in attacks if not r["goal_achieved"])
        done = sum(1 for r in benign if r["benign_completed"])
        kinds = Counter(k for r in scored for k in {i["kind"] for i in r["incidents"]})
        walls = [r["duration_s"] for r in rs if r["status"] != "no_tool_path" and r.get("duration_s") is not None]
        fw, tools = split(arm)
        out.append([fw, tools, agent, str(len(rs)), f"{blocked}/{len(attacks)}",
                    ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none", f"{done}/{len(benign)}",
                    str(sum(r["status"] == "no_tool_path" for r in rs)), str(sum(r["status"] == "lost" for r in rs)),
                    f"{statistics.median(walls):.1f}" if walls else "-"])
    return out


def main(folder: str) -> str:
    records = [json.loads(line) for line in (Path(folder) / "runs.jsonl").read_text().splitlines() if line.strip()]
    head = ["framework", "tools", "model", "runs", "attacks blocked", "incidents by class (runs)",
            "honest tasks done", "no tool path", "lost", "median wall per run (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(records)]
    note = ("\nScripted model (the gateway answers as the worst-case agent; `careful`: the honest one), USD cases, "
            "one variant each. Attacks blocked and honest tasks done count scored runs only (no tool path and "
            "lost runs are left out). Run folder: `runs/` (its tables.md has the intervals; "
            "`guardbench explore` shows each run).\n")
    return "\n".join(lines) + "\n" + note


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/frameworks_table.py RUN_FOLDER")
    sys.stdout.write(main(sys.argv[1]))

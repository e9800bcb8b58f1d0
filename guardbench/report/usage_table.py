"""The Model usage table of LLM runs: model calls, API calls, cache hits, retries, tokens,
cost and latency per model and arm, and the median wall time of the runs whose every reply came
fresh from the model. Read from each record's usage (records/record.py ``run_usage``); the
other tables per arm: report/tables.py, which adds this one to :func:`all_tables` for LLM runs.
"""
from __future__ import annotations

from typing import Sequence

from guardbench.records.record import RunRecord
from guardbench.report.cells import lost_note
from guardbench.report.layout import Table
from guardbench.stats import groups as G


def model_usage(records: Sequence[RunRecord]) -> Table:
    """Model calls, tokens, cost and latency per model and arm (LLM runs only)."""
    t = Table("Model usage", ["group", "arm", "runs", "lost", "model calls", "API calls",
                              "cache hits", "retries",
                              "prompt tokens", "completion tokens", "tokens per run", "cost (USD)",
                              "model latency (s)", "latency per call (s)",
                              "wall per fresh run (s, median; runs)",
                              "calls from text (fallback)", "text calls not run"])
    llm = [r for r in records if r.model]
    for label, by_arm in G.groups(llm).items():
        for arm, rs in by_arm.items():
            us = [r.run_usage for r in rs]
            total_tokens = sum(int(u.get("total_tokens") or 0) for u in us)
            calls = sum(int(u.get("model_calls") or 0) for u in us)
            costs = [u.get("cost_usd") for u in us]
            known = [float(c) for c in costs if c is not None]
            latency = sum(float(u.get("latency_s") or 0.0) for u in us)
            fresh = calls - sum(int(u.get("cache_hits") or 0) for u in us)
            t.rows.append({
                "group": label, "arm": arm, "runs": str(len(rs)),
                "lost": str(sum(1 for r in rs if r.lost)),
                "model calls": str(calls),
                "API calls": str(sum(int(u.get("api_calls") or 0) for u in us)),
                "cache hits": str(sum(int(u.get("cache_hits") or 0) for u in us)),
                "retries": str(sum(int(u.get("retries") or 0) for u in us)),
                "prompt tokens": str(sum(int(u.get("prompt_tokens") or 0) for u in us)),
                "completion tokens": str(sum(int(u.get("completion_tokens") or 0) for u in us)),
                "cost (USD)": (f"{sum(known):.4f}"
                               + (" (some unknown)" if len(known) < len(costs) else ""))
                              if known else "unknown",
                "tokens per run": (f"{total_tokens / len(rs):.0f}" if rs else "-"),
                "model latency (s)": f"{latency:.2f}",
                "latency per call (s)": f"{latency / fresh:.3f}" if fresh else "-",
                "wall per fresh run (s, median; runs)": _fresh_wall(rs),
                "calls from text (fallback)": str(sum(int(u.get("fallback_calls")
                                                          or 0) for u in us)),
                "text calls not run": str(sum(int(u.get("text_calls_not_run") or 0) for u in us)),
            })
    t.note = lost_note(llm, "Tokens and cost are those of the samples (a cached reply counts as "
                       "its original "
                             "call; cache hits made no API call). Model latency: time spent "
                             "waiting for fresh "
                             "replies in these runs (a replayed reply's original latency is not "
                             "counted); per "
                             "call: over fresh calls. Wall per fresh run: the duration of the "
                             "runs whose every reply "
                             "came from the model (a replayed run takes milliseconds). Calls "
                             "from text: tool "
                             "calls the native+fallback protocol read from the reply text; text "
                             "calls not run: "
                             "calls the native protocol saw written as text (the run is "
                             "malformed). Cost from "
                             "litellm's cost map; unknown when a model has no price there.")
    return t


def _fresh_wall(rs: Sequence[RunRecord]) -> str:
    fresh = [r.duration_s for r in rs if r.duration_s is not None
             and int(r.run_usage.get("model_calls") or 0)
             and not int(r.run_usage.get("cache_hits") or 0)]
    return f"{_median_text(fresh)} ({len(fresh)})" if fresh else "-"


def _median_text(xs: Sequence[float]) -> str:
    if not xs:
        return "-"
    ys = sorted(xs)
    mid = len(ys) // 2
    return f"{(ys[mid] if len(ys) % 2 else (ys[mid - 1] + ys[mid]) / 2):.2f}"

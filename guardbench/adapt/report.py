"""What adapt.json and adapt-llm.md say about the LLM attacker: who it was and how its replies
went."""
from __future__ import annotations

from typing import Any, Sequence

from guardbench.report.tables import Table


def attacker_record(client: Any) -> dict:
    """The attacker model, endpoint, client, prompt version and settings, and its totals."""
    from guardbench.adapt.llm_attacker import PROMPT_VERSION, fingerprint_label, prompt_sha256
    return {"model": client.model, "endpoint": client.endpoint, "client": client.client,
            "endpoint_kind": fingerprint_label(client.fingerprints) or (
                "openai-compatible" if client.client == "openai" else "litellm"),
            "served_model": sorted(client.served),
            "system_fingerprint": sorted(client.fingerprints),
            "prompt_version": PROMPT_VERSION, "prompt_sha256": prompt_sha256(),
            "temperature": client.temperature, "max_tokens": client.max_tokens,
            "response_format": client.fmt,
            "usage": dict(client.totals)}


def attacker_table(tallies: Sequence[Any], meta: dict) -> Table:
    label = (meta["model"] + (" [stand-in endpoint, not a real model]" if meta["endpoint_kind"]
                              == "stand-in" else ""))
    t = Table(f"LLM attacker replies ({label}, prompt {meta['prompt_version']})",
              ["defence", "rewrites asked", "usable", "malformed", "lost", "document rewritten",
               "goals reached after a rewrite"])
    for x in tallies:
        asked = [e for e in x.log if e.get("iteration", 0) > 0 and "outcome" in e]
        usable = [e for e in asked if e["outcome"] not in ("malformed", "lost")]
        t.rows.append({"defence": x.target, "rewrites asked": str(len(asked)),
                       "usable": str(len(usable)),
                       "malformed": str(sum(e["outcome"] == "malformed" for e in asked)),
                       "lost": str(sum(e["outcome"] == "lost" for e in asked)),
                       "document rewritten": str(sum(bool(e.get("rewrote_document"))
                                                     for e in usable)),
                       "goals reached after a rewrite": str(sum(e["outcome"] == "goal_reached"
                                                                for e in usable))})
    u = meta["usage"]
    t.note = ("Rewrites asked: model calls after a refusal (iteration 0 is the case's own "
              "attack). Malformed: the "
              "reply was not the JSON asked for (kept in the JSON file, answered with a format "
              "reminder). Lost: "
              f"the call failed after its retries. Tokens {u['prompt_tokens']} in, "
              f"{u['completion_tokens']} out; "
              f"model time {u['latency_s']:.1f} s over {u['model_calls']} calls.")
    return t

"""The normalised completion every model client returns, and what the call cost.

``normalise`` reads a chat-completions response, whether a plain dict (the openai client's raw
POST) or a client's object (litellm), into one JSON-serialisable dict: the assistant message
(tool calls with their arguments as JSON text), finish reason, tokens, latency, the server's
fingerprint and model, and the server's own time when it says (llama.cpp's ``timings``).
Its ``cost_usd`` is filled in by ``map_cost`` (litellm's bundled cost map, read as JSON
without importing litellm) or ``with_cost`` (litellm's own estimate); None for a model
neither knows.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

# -- the reply ---------------------------------------------------------------------------

def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def normalise(resp: Any, latency: float) -> dict:
    """A chat-completions response (a dict, or a client's object) as the normalised completion,
    ``cost_usd`` still None; ``latency`` is the seconds the call took."""
    choice = (_get(resp, "choices") or [None])[0]
    msg = _get(choice, "message") or {}
    calls: list[dict] = []
    for tc in _get(msg, "tool_calls") or []:
        fn = _get(tc, "function") or {}
        args = _get(fn, "arguments")
        # some servers send an object: keep it as JSON text
        if args is not None and not isinstance(args, str):
            args = json.dumps(args)
        calls.append({"id": str(_get(tc, "id") or f"call_{len(calls)}"), "type": "function",
                      "function": {"name": str(_get(fn, "name") or ""), "arguments": args or ""}})
    message: dict[str, Any] = {"role": "assistant", "content": _get(msg, "content")}
    if calls:
        message["tool_calls"] = calls
    usage = _get(resp, "usage")
    return {"message": message, "finish_reason": _get(choice, "finish_reason"),
            "prompt_tokens": _get(usage, "prompt_tokens"),
            "completion_tokens": _get(usage, "completion_tokens"),
            "cost_usd": None, "latency_s": round(latency, 6),
            "fingerprint": _get(resp, "system_fingerprint"),
            "served_model": _get(resp, "model"), "server_ms": _server_ms(resp)}


def _server_ms(resp: Any) -> float | None:
    """The server's own time for the reply (llama.cpp's ``timings``: prompt + generation, ms), if it
    says."""
    t = _get(resp, "timings")
    if not isinstance(t, dict):
        return None
    try:
        return round(float(t.get("prompt_ms") or 0.0) + float(t.get("predicted_ms") or 0.0), 3)
    except (TypeError, ValueError):
        return None


# -- its cost ----------------------------------------------------------------------------

_PRICES: dict | None = None


def _price_map() -> dict:
    """litellm's bundled cost map, read as JSON (without importing litellm, which is slow)."""
    global _PRICES
    if _PRICES is None:
        from importlib.util import find_spec
        _PRICES = {}
        spec = find_spec("litellm")
        for loc in (spec.submodule_search_locations or []) if spec else []:
            path = os.path.join(loc, "model_prices_and_context_window_backup.json")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as fh:
                    _PRICES = json.load(fh)
                break
    return _PRICES


def map_cost(model: str, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
    """Cost in USD from litellm's cost map; None when the model is not in it."""
    if prompt_tokens is None or completion_tokens is None:
        return None
    if "litellm" in sys.modules:
        try:
            p, c = sys.modules["litellm"].cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                         completion_tokens=completion_tokens)
            return float(p + c)
        except Exception:  # noqa: BLE001 - unknown model
            return None
    entry = _price_map().get(model)
    if not isinstance(entry, dict) or "input_cost_per_token" not in entry:
        return None
    return float(prompt_tokens * entry["input_cost_per_token"]
                 + completion_tokens * entry.get("output_cost_per_token", 0.0))


def with_cost(litellm: Any, resp: Any, out: dict) -> dict:
    """A normalised reply with litellm's cost estimate (None for a model not in its cost map)."""
    try:
        cost = litellm.completion_cost(completion_response=resp)
        out["cost_usd"] = float(cost) if cost is not None else None
    except Exception:  # noqa: BLE001 - a model not in the cost map: cost unknown
        out["cost_usd"] = None
    return out

"""The attacker's model client: the real openai or litellm client, blocking, with retries.

``--api-base URL`` alone: the official ``openai`` client (``OpenAI(base_url=...)``, chat
completions) on any OpenAI-compatible endpoint; without it, litellm (any provider it knows,
keys from the environment); ``--client`` overrides. The reply is asked for as JSON with
``response_format`` (``json-schema``: the attacker's reply schema; ``json-object``; ``none``).
Retries follow agents/providers.py's rule (429, timeouts, connection errors, 5xx; exponential
backoff with equal jitter from a seeded generator); a call that still fails is a ``Reply`` with
an ``error``, never an exception. After ``STOP_AFTER_LOST`` calls in a row failed (a model or server
that is not there), no more are made: each later call is lost at once, counted in ``not_asked``
(against a port nothing listens on, the progress line put the default matrix's 2,706 calls at 85
to 115 minutes).
Both clients are imported on the first call only.
"""
from __future__ import annotations

import os
import random
import time
from typing import Any

from guardbench.adapt.llm_attacker import Reply, response_format
from guardbench.agents.completion import map_cost, normalise, with_cost
from guardbench.agents.providers import (
    NO_KEY,
    STOP_AFTER_LOST,
    LossStreak,
    RetryPolicy,
    describe,
    retryable,
)

FORMATS = ("json-schema", "json-object", "none")


class AttackerClient:
    def __init__(self, model: str, *, api_base: str | None = None, client: str | None = None,
                 temperature: float = 0.0, max_tokens: int = 600, timeout: float = 120.0,
                 retries: int = 2,
                 backoff: float = 1.0, fmt: str = "json-schema", api_key_env: str | None = None,
                 seed: int = 0) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"response format must be one of {', '.join(FORMATS)}")
        self.model, self.api_base = model, api_base.rstrip("/") if api_base else None
        self.client = client or ("openai" if api_base else "litellm")
        if self.client == "openai" and not self.api_base:
            raise ValueError("the openai client needs --api-base")
        self.temperature, self.max_tokens = temperature, max_tokens
        self.timeout, self.fmt = timeout, fmt
        self.retry = RetryPolicy(retries=retries, base=backoff)
        key = os.environ.get(api_key_env) if api_key_env else None
        self.api_key = key or os.environ.get("OPENAI_API_KEY") or (NO_KEY if api_base else None)
        self.rng = random.Random(f"attacker:{seed}:{model}")
        self.totals: dict[str, Any] = {"model_calls": 0, "api_calls": 0, "retries": 0, "lost": 0,
                                       "prompt_tokens": 0,
                       "completion_tokens": 0, "latency_s": 0.0, "cost_usd": 0.0}
        self.fingerprints: set[str] = set()
        self.served: set[str] = set()
        self._openai: Any = None
        self.streak = LossStreak("attacker calls failed", STOP_AFTER_LOST)
        self.not_asked = 0                  # calls due once it gave up, each lost at once

    @property
    def endpoint(self) -> str:
        if self.client == "openai":
            return self.api_base or ""
        return f"litellm:{self.api_base}" if self.api_base else "litellm"

    def _once(self, messages: list[dict]) -> dict:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": self.temperature,
                                  "max_tokens": self.max_tokens}
        fmt = response_format(self.fmt)
        if fmt is not None:
            kwargs["response_format"] = fmt
        t0 = time.perf_counter()
        if self.client == "openai":
            if self._openai is None:
                from openai import OpenAI
                self._openai = OpenAI(base_url=self.api_base, api_key=self.api_key,
                                      timeout=self.timeout,
                                      max_retries=0)
            resp = self._openai.chat.completions.create(**kwargs)
            out = normalise(resp, time.perf_counter() - t0)
            out["cost_usd"] = map_cost(self.model, out["prompt_tokens"], out["completion_tokens"])
            return out
        from guardbench.agents.providers import import_litellm
        litellm = import_litellm()
        if self.api_base:
            kwargs.update(api_base=self.api_base, api_key=self.api_key)
        resp = litellm.completion(timeout=self.timeout, num_retries=0, max_retries=0, **kwargs)
        return with_cost(litellm, resp, normalise(resp, time.perf_counter() - t0))

    def __call__(self, messages: list[dict]) -> Reply:
        t = self.totals
        t["model_calls"] += 1
        if self.gave_up is not None:
            t["lost"] += 1
            self.not_asked += 1
            return Reply(error=f"not asked: {self.gave_up}", usage={"api_calls": 0})
        reply = self._call(messages)
        self.streak.note(reply.error)
        return reply

    @property
    def gave_up(self) -> str | None:
        """Why no more calls are made (``STOP_AFTER_LOST`` failed in a row), or None."""
        return self.streak.gave_up

    def _call(self, messages: list[dict]) -> Reply:
        t = self.totals
        attempt = 0
        while True:
            t["api_calls"] += 1
            try:
                comp = self._once(messages)
                break
            except Exception as exc:  # noqa: BLE001 - classified below; a failed call is a lost rewrite
                if not retryable(exc) or attempt >= self.retry.retries:
                    t["lost"] += 1
                    return Reply(error=f"{describe(exc)} (after {attempt + 1} "
                                 f"attempt{'s' * bool(attempt)})",
                                 usage={"api_calls": attempt + 1})
                time.sleep(self.retry.delay(attempt, self.rng))
                t["retries"] += 1
                attempt += 1
        pt, ct = int(comp.get("prompt_tokens") or 0), int(comp.get("completion_tokens") or 0)
        t["prompt_tokens"] += pt
        t["completion_tokens"] += ct
        t["latency_s"] = round(t["latency_s"] + float(comp["latency_s"]), 3)
        cost = comp.get("cost_usd")
        t["cost_usd"] = (None if cost is None or t["cost_usd"] is None
                         else t["cost_usd"] + float(cost))
        if comp.get("fingerprint"):
            self.fingerprints.add(str(comp["fingerprint"]))
        if comp.get("served_model"):
            self.served.add(str(comp["served_model"]))
        text = str((comp.get("message") or {}).get("content") or "")
        return Reply(text, None, {"prompt_tokens": pt, "completion_tokens": ct,
                                  "latency_s": comp["latency_s"],
                                  "finish_reason": comp.get("finish_reason"),
                                  "api_calls": attempt + 1})

    def close(self) -> None:
        if self._openai is not None:
            self._openai.close()
            self._openai = None

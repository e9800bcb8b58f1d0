"""LLM agents: a tool-calling model runs the multi-step tool loop on a Session.

The model sees the arm's system prompt and the user's message; everything else (the
task's data included) reaches it only through the session's tools. Each tool result
goes back faithfully: in the native protocol as a ``tool`` message with the call's
``tool_call_id``; in the json-text protocol (agents/jsontext.py) as the next user
message. The loop stops at the first answer, at the session's step limit, at a reply
the json-text protocol cannot read (status ``malformed``, raw reply kept), or when a
model call still fails after its retries (status ``lost``, error kept).

Every response goes through the on-disk cache (agents/cache.py), so a re-run of
finished work costs no model calls. ``Transcript.usage`` counts model calls, fresh API
calls, cache hits, retries, tokens, cost (USD, from litellm's cost map; null when the
model has no price there) and model latency.
"""
from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from guardbench.agents import jsontext
from guardbench.agents.base import Session, Step, Transcript, call_tool
from guardbench.agents.cache import NoCache, cache_key
from guardbench.agents.providers import STAND_IN_FINGERPRINT, CallFailed, RetryPolicy, with_retries

PROTOCOLS = ("native", "json-text")


def new_usage() -> dict[str, Any]:
    return {"model_calls": 0, "api_calls": 0, "cache_hits": 0, "retries": 0, "prompt_tokens": 0,
            "completion_tokens": 0, "total_tokens": 0, "cost_usd": 0.0, "latency_s": 0.0, "stand_in": False}


def add_completion(usage: dict, comp: dict) -> None:
    usage["model_calls"] += 1
    pt, ct = comp.get("prompt_tokens"), comp.get("completion_tokens")
    usage["prompt_tokens"] += int(pt or 0)
    usage["completion_tokens"] += int(ct or 0)
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    cost = comp.get("cost_usd")
    usage["cost_usd"] = None if cost is None or usage["cost_usd"] is None else usage["cost_usd"] + float(cost)
    usage["latency_s"] = round(usage["latency_s"] + float(comp.get("latency_s") or 0.0), 6)
    if comp.get("fingerprint") == STAND_IN_FINGERPRINT:
        usage["stand_in"] = True


class LLMAgent:
    name = "llm"

    def __init__(self, model: str, provider, *, protocol: str = "native", temperature: float = 0.0,
                 max_tokens: int | None = 1024, max_steps: int | None = None, seed: int = 0, cache=None,
                 retry: RetryPolicy | None = None):
        if protocol not in PROTOCOLS:
            raise ValueError(f"tool protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        self.model = model
        self.provider = provider
        self.protocol = protocol
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_steps = max_steps
        self.seed = seed
        self.cache = cache if cache is not None else NoCache()
        self.retry = retry or RetryPolicy()

    def run(self, session: Session, repeat: int = 0) -> Transcript:
        """The synchronous Agent interface (the async runner calls ``arun``)."""
        return asyncio.run(self.arun(session, repeat))

    # -- one model call, through the cache ----------------------------------------------
    async def _complete(self, messages: list, tools: list | None, repeat: int, rng: random.Random,
                        usage: dict) -> dict:
        sampling = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed,
                    "repeat": repeat, "protocol": self.protocol}
        key = cache_key(model=self.model, endpoint=self.provider.endpoint, messages=messages, tools=tools,
                        sampling=sampling)
        hit = self.cache.get(key)
        if hit is not None:
            usage["cache_hits"] += 1
            add_completion(usage, hit)
            return hit
        retries = [0]

        def on_retry(exc: BaseException) -> None:
            retries[0] += 1

        try:
            comp = await with_retries(
                lambda: self.provider.complete(model=self.model, messages=messages, tools=tools,
                                               temperature=self.temperature, max_tokens=self.max_tokens),
                self.retry, rng, on_retry)
        except CallFailed as exc:
            usage["api_calls"] += exc.attempts
            usage["retries"] += exc.attempts - 1
            raise
        usage["api_calls"] += 1 + retries[0]
        usage["retries"] += retries[0]
        # file I/O off the event loop (other runs' replies are being read meanwhile)
        await asyncio.get_running_loop().run_in_executor(None, self.cache.put, key, comp)
        add_completion(usage, comp)
        return comp

    # -- the loop -----------------------------------------------------------------------------
    async def arun(self, session: Session, repeat: int = 0) -> Transcript:
        specs = [t.spec() for t in session.tools]
        native = self.protocol == "native"
        system = session.system_prompt if native else jsontext.system_prompt(session.system_prompt, specs)
        messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": session.user}]
        tools = specs if native else None
        limit = self.max_steps or session.max_steps
        steps: list[Step] = []
        usage = new_usage()
        rng = random.Random(f"{self.seed}:{session.seed}:{repeat}:{self.model}")

        def done(final: str, status: str, error: str | None = None) -> Transcript:
            return Transcript(tuple(steps), final, status, error, usage)

        while True:
            try:
                comp = await self._complete(messages, tools, repeat, rng, usage)
            except CallFailed as exc:
                return done("", "lost", str(exc))
            msg = comp["message"]
            content = msg.get("content") or ""
            if native:
                calls = msg.get("tool_calls") or []
                if not calls:
                    return done(content, "answered")
                messages.append({"role": "assistant", "content": msg.get("content"), "tool_calls": calls})
                for tc in calls:
                    if len(steps) >= limit:
                        return done(content, "step_limit", f"stopped after {limit} tool calls")
                    result = self._call(session, steps, tc["function"]["name"], tc["function"]["arguments"])
                    messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result})
            else:
                parsed = jsontext.parse_reply(content)
                if parsed.kind == "answer":
                    return done(parsed.answer or "", "answered")
                if parsed.kind == "malformed":
                    return done(content, "malformed", parsed.reason)
                messages.append({"role": "assistant", "content": content})
                if len(steps) >= limit:
                    return done(content, "step_limit", f"stopped after {limit} tool calls")
                result = self._call(session, steps, parsed.tool or "", parsed.arguments)
                messages.append(jsontext.result_message(parsed.tool or "", result))

    @staticmethod
    def _call(session: Session, steps: list[Step], name: str, arguments: Any) -> str:
        """Run one tool call; arguments the model got wrong are answered with an error, not raised."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                result = json.dumps({"error": "arguments are not valid JSON"})
                steps.append(Step(name, {"_unparsed_arguments": arguments}, result))
                return result
        if not isinstance(arguments, dict):
            result = json.dumps({"error": "arguments must be a JSON object"})
            steps.append(Step(name, {"_unparsed_arguments": arguments}, result))
            return result
        try:
            return call_tool(session, steps, name, arguments)
        except Exception as exc:  # noqa: BLE001 - a model's odd arguments must not end the sweep
            result = json.dumps({"error": f"tool failed: {type(exc).__name__}: {exc}"})
            steps.append(Step(name, arguments, result))
            return result

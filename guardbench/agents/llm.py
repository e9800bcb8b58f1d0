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
import hashlib
import json
import random
from typing import Any

from guardbench.agents import jsontext, textcalls
from guardbench.agents.base import Session, Step, Transcript, call_tool
from guardbench.agents.cache import NoCache, ResponseCache, cache_key
from guardbench.agents.providers import (
    STAND_IN_FINGERPRINT,
    CallFailed,
    Provider,
    RetryPolicy,
    with_retries,
)

PROTOCOLS = ("native", "native+fallback", "json-text", "constrained")
DATA_MODES = ("tool", "inline")
NATIVE = ("native", "native+fallback")
INLINE_DATA = "\n\nThe document this task refers to:\n<document>\n{data}\n</document>"
TEXT_CALL_NOT_RUN = ("tool call written as text, not executed (the native protocol runs "
                     "only tool_calls)")


def new_usage() -> dict[str, Any]:
    return {"model_calls": 0, "api_calls": 0, "cache_hits": 0, "retries": 0, "prompt_tokens": 0,
            "completion_tokens": 0, "total_tokens": 0, "cost_usd": 0.0, "latency_s": 0.0,
            "stand_in": False,
            "replayed_latency_s": 0.0, "server_s": 0.0, "server_timed_calls": 0, "native_calls": 0,
            "fallback_calls": 0, "text_calls_not_run": 0, "json_calls": 0}


def add_completion(usage: dict, comp: dict, replayed: bool = False) -> None:
    """Count one reply. A replayed (cached) reply made no call now: its latency is kept apart
    (``replayed_latency_s``), so ``latency_s`` is the time this run spent waiting for models."""
    usage["model_calls"] += 1
    pt, ct = comp.get("prompt_tokens"), comp.get("completion_tokens")
    usage["prompt_tokens"] += int(pt or 0)
    usage["completion_tokens"] += int(ct or 0)
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    cost = comp.get("cost_usd")
    usage["cost_usd"] = (None if cost is None or usage["cost_usd"] is None
                         else usage["cost_usd"] + float(cost))
    key = "replayed_latency_s" if replayed else "latency_s"
    usage[key] = round(usage.get(key, 0.0) + float(comp.get("latency_s") or 0.0), 6)
    if not replayed and comp.get("server_ms") is not None:
        usage["server_s"] = round(usage.get("server_s", 0.0) + float(comp["server_ms"]) / 1000.0, 6)
        usage["server_timed_calls"] = usage.get("server_timed_calls", 0) + 1
    if comp.get("fingerprint") == STAND_IN_FINGERPRINT:
        usage["stand_in"] = True


REPEAT_LIMIT = 3      # the same call (tool and arguments) this many times in a row ends the run


def looping(steps: list[Step]) -> bool:
    """The last REPEAT_LIMIT steps are one call with the same arguments: the model is in a loop
    (recorded 1.5B runs called list_payment_operations, or resent one refused request, until the
    step limit); more steps would add only tokens. Results are not compared: a refusal carries a
    fresh debug id each time."""
    if len(steps) < REPEAT_LIMIT:
        return False
    last = steps[-REPEAT_LIMIT:]
    first = (last[0].tool, json.dumps(dict(last[0].args), sort_keys=True, default=str))
    return all((s.tool, json.dumps(dict(s.args), sort_keys=True, default=str)) == first
               for s in last[1:])


def schema_digest(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLMAgent:
    name = "llm"

    def __init__(self, model: str, provider: Provider, *, protocol: str = "native",
                 temperature: float = 0.0, max_tokens: int | None = 1024,
                 max_steps: int | None = None, seed: int = 0,
                 cache: ResponseCache | NoCache | None = None,
                 retry: RetryPolicy | None = None, data: str = "tool",
                 schemas: dict[str, Any] | None = None) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"tool protocol must be one of {', '.join(PROTOCOLS)}, not "
                             f"{protocol!r}")
        if data not in DATA_MODES:
            raise ValueError(f"data must be one of {', '.join(DATA_MODES)}, not {data!r}")
        self.model = model
        self.provider = provider
        self.protocol = protocol
        self.data = data
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_steps = max_steps
        self.seed = seed
        self.cache = cache if cache is not None else NoCache()
        self.retry = retry or RetryPolicy()
        # digest -> what the model was offered
        self.schemas = schemas if schemas is not None else {}

    def run(self, session: Session, repeat: int = 0) -> Transcript:
        """The synchronous Agent interface (the async runner calls ``arun``)."""
        return asyncio.run(self.arun(session, repeat))

    # -- one model call, through the cache ----------------------------------------------
    async def complete(self, messages: list, request: dict, repeat: int, rng: random.Random,
                       usage: dict) -> dict:
        """One model call with this agent's model, sampling, cache and retries (``request``: tools
        and tool_choice / response_format), counted in ``usage``; CallFailed when it still fails.
        The model gateway (guardbench/gateway/) relays an application's calls through it."""
        return await self._complete(messages, request, repeat, rng, usage)

    async def _complete(self, messages: list, request: dict, repeat: int, rng: random.Random,
                        usage: dict) -> dict:
        sampling = {"temperature": self.temperature, "max_tokens": self.max_tokens,
                    "seed": self.seed,
                    "repeat": repeat, "protocol": self.protocol}
        key = cache_key(model=self.model, endpoint=self.provider.endpoint, messages=messages,
                        tools=request.get("tools"),
                        sampling={**sampling, **{k: v for k, v in request.items()
                                                                            if k != "tools"
                                                                            and v is not None}})
        hit = self.cache.get(key)
        if hit is not None:
            usage["cache_hits"] += 1
            add_completion(usage, hit, replayed=True)
            return hit
        retries = [0]

        def on_retry(exc: BaseException) -> None:
            retries[0] += 1

        try:
            comp = await with_retries(
                lambda: self.provider.complete(model=self.model, messages=messages,
                                               temperature=self.temperature,
                                               max_tokens=self.max_tokens, **request),
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

    def offer(self, session: Session) -> tuple[list[dict], dict, str, str]:
        """What the model is offered: (the tool specs, the request's tool fields, the system prompt,
        the user message), by protocol and data mode."""
        tools = session.tools
        user = session.user
        if self.data == "inline" and session.data is not None:
            tools = [t for t in tools if t.name != "read_data"]
            user = user + INLINE_DATA.format(data=session.data)
        specs = [t.spec() for t in tools]
        if self.protocol in NATIVE:
            return specs, {"tools": specs, "tool_choice": "auto"}, session.system_prompt, user
        several = self.protocol == "json-text"
        system = jsontext.system_prompt(session.system_prompt, specs, several)
        request: dict = {"tools": None}
        if self.protocol == "constrained":
            request["response_format"] = jsontext.response_format(
                specs, {t.name: [dict(v) for v in t.variants] for t in tools if t.variants})
        return specs, request, system, user

    # -- the loop -----------------------------------------------------------------------------
    async def arun(self, session: Session, repeat: int = 0) -> Transcript:
        specs, request, system, user = self.offer(session)
        native = self.protocol in NATIVE
        messages: list[dict] = [{"role": "system", "content": system}]
        # after the stable prefix (tools included), so a prefix cache serves it
        if session.per_run:
            if native:
                messages.append({"role": "system", "content": session.per_run})
            else:
                messages[0]["content"] = system + "\n\n" + session.per_run
        messages.append({"role": "user", "content": user})
        limit = self.max_steps or session.max_steps
        steps: list[Step] = []
        usage = new_usage()
        offered = {"protocol": self.protocol, "data": self.data, "tools": specs,
                   **({"response_format": request["response_format"]}
                      if "response_format" in request else {})}
        digest = schema_digest(offered)
        self.schemas.setdefault(digest, offered)
        usage["tool_schema_sha256"] = digest
        rng = random.Random(f"{self.seed}:{session.seed}:{repeat}:{self.model}")

        # A run stopped at its step limit has no final answer: the last reply held calls, which ran
        # and are the steps (recorded 1.5B: that reply's text, with the bearer token in its
        # Authorization header, was kept as the answer and scored as the credential emitted).
        def done(final: str, status: str, error: str | None = None) -> Transcript:
            return Transcript(tuple(steps), final, status, error, usage)

        while True:
            try:
                comp = await self._complete(messages, request, repeat, rng, usage)
            except CallFailed as exc:
                return done("", "lost", str(exc))
            msg = comp["message"]
            content = msg.get("content") or ""
            calls = (msg.get("tool_calls") or []) if native else []
            if calls:
                usage["native_calls"] += len(calls)
                messages.append({"role": "assistant", "content": msg.get("content"),
                                 "tool_calls": calls})
                for tc in calls:
                    if len(steps) >= limit:
                        return done("", "step_limit", f"stopped after {limit} tool calls")
                    result = self._call(session, steps, tc["function"]["name"],
                                        tc["function"]["arguments"])
                    messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result})
                if looping(steps):
                    return done("", "step_limit", f"stopped: the same call {REPEAT_LIMIT} "
                                "times in a row")
                continue
            if native:
                written = textcalls.find_calls(content)
                if not written:
                    return done(content, "answered")
                if self.protocol == "native":
                    usage["text_calls_not_run"] += len(written)
                    return done(content, "malformed", TEXT_CALL_NOT_RUN)
                parsed = jsontext.parse_calls(content)
                if parsed.kind != "call":
                    return done(content, "malformed", parsed.reason)
                usage["fallback_calls"] += len(parsed.calls)
            else:
                parsed = jsontext.parse_calls(content)
                if parsed.kind == "answer":
                    return done(parsed.answer or "", "answered")
                if parsed.kind == "malformed":
                    return done(content, "malformed", parsed.reason)
                usage["json_calls"] += len(parsed.calls)
            messages.append({"role": "assistant", "content": content})
            results = []
            for name, arguments in parsed.calls:
                if len(steps) >= limit:
                    return done("", "step_limit", f"stopped after {limit} tool calls")
                results.append((name, self._call(session, steps, name, arguments)))
            if looping(steps):
                return done("", "step_limit", f"stopped: the same call {REPEAT_LIMIT} "
                            "times in a row")
            messages.append(jsontext.results_message(results))

    @staticmethod
    def _call(session: Session, steps: list[Step], name: str, arguments: Any) -> str:
        """Run one tool call; arguments the model got wrong are answered with an error, not
        raised."""
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

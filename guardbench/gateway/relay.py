"""A real model behind the gateway: each call an application makes is relayed to the model of
``--model`` through the LLM agent's own call path (agents/llm.py ``LLMAgent.complete``: the run's
provider, response cache, retries with backoff, cost from litellm's map), so an application's
calls are cached, retried, priced and counted exactly as an LLM agent's are. The run's sampling
settings (``--temperature``, ``--max-tokens``) are used, whatever the application asked for (they
are part of the run's design); its messages, tools, tool_choice and response_format are sent as
they are. Streaming is the gateway's: the model is asked once and the reply streamed to the
application.
"""
from __future__ import annotations

import asyncio
import random
import threading
from typing import Any, Callable, Coroutine, Mapping

from guardbench.errors import RunLost
from guardbench.gateway.formats import Reply


class ModelFailed(RunLost):
    """The model could not be reached after the retries (the run is lost)."""


Submit = Callable[[Coroutine[Any, Any, dict]], dict]


class LoopThread:
    """An event loop of the gateway's own, for a relay outside any running loop (a synchronous
    run)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever,
                                        name="gb-gateway-relay", daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, dict]) -> dict:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self, provider: Any = None) -> None:
        close = getattr(provider, "aclose", None)
        if close is not None:
            try:
                asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


def on_loop(loop: asyncio.AbstractEventLoop) -> Submit:
    """Submit to a loop running in another thread (the LLM sweep's, while the application runs)."""
    return lambda coro: asyncio.run_coroutine_threadsafe(coro, loop).result()


class RelayModel:
    def __init__(self, agent: Any, repeat: int, seed: int, submit: Submit) -> None:
        from guardbench.agents.llm import new_usage
        self.agent = agent
        self.name = f"relay:{agent.model}"
        self.repeat = repeat
        self.submit = submit
        self.usage = new_usage()
        self.rng = random.Random(f"{agent.seed}:{seed}:{repeat}:{agent.model}")
        # one call at a time: the usage and the retry jitter are the run's
        self._lock = threading.Lock()

    def reply(self, body: Mapping[str, Any]) -> Reply:
        from guardbench.agents.providers import CallFailed
        request: dict[str, Any] = {"tools": body.get("tools") or None}
        if request["tools"] and body.get("tool_choice") is not None:
            request["tool_choice"] = body["tool_choice"]
        if body.get("response_format") is not None:
            request["response_format"] = body["response_format"]
        with self._lock:
            try:
                comp = self.submit(self.agent.complete(list(body["messages"]), request,
                                                       self.repeat, self.rng,
                                                       self.usage))
            except CallFailed as exc:
                raise ModelFailed(str(exc)) from None
        msg = comp.get("message") or {}
        return Reply(msg.get("content"), list(msg.get("tool_calls") or []),
                     comp.get("prompt_tokens"),
                     comp.get("completion_tokens"), comp.get("cost_usd"),
                     float(comp.get("latency_s") or 0.0),
                     str(comp.get("served_model") or self.agent.model), comp.get("fingerprint"))

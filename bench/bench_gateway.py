"""The model gateway's added latency per model call (guardbench/gateway/), medians.

Every figure is one chat completion made by the real ``openai`` client, as an application makes it
(a tool declared, the conversation of a charge: user, the model's call, the tool's result):

- ``scripted``: the gateway answering as the credulous scripted agent (non-streaming and streaming):
  the whole round trip (the scripted model's own time included) and the gateway's own share
  (``gateway_s``: the request read to the reply written, less the model's time);
- ``direct`` vs ``relay``: the same call to the fake OpenAI-compatible upstream (tests/llm/fakeserver.py,
  a real HTTP server on 127.0.0.1), directly, and through the gateway's relay (the provider layer,
  no response cache: every call reaches the upstream); added = median(relay) - median(direct).

The variants are interleaved call by call, so a load change on the machine hits them alike.

    PYTHONPATH=. python bench/bench_gateway.py [--calls 300] [--out bench/results/gateway.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOOLS = [{"type": "function", "function": {"name": "create_order", "description": "Charge a catalogue item.",
                                           "parameters": {"type": "object", "properties": {
                                               "sku": {"type": "string"}, "amount": {"type": "string"},
                                               "currency": {"type": "string"}}}}}]
MESSAGES = [{"role": "system", "content": "You run a shop's payments."},
            {"role": "user", "content": "Charge the customer for SKU-PRO."}]


def upstream_model(req: dict) -> dict:
    return {"call": "create_order", "arguments": {"sku": "SKU-PRO", "amount": "49.00"}}


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    import openai

    from guardbench.agents.base import Session
    from guardbench.agents.cache import NoCache
    from guardbench.agents.llm import LLMAgent
    from guardbench.agents.providers import OpenAICompatProvider
    from guardbench.cases.load import load_cases
    from guardbench.gateway import Gateway
    from guardbench.gateway.relay import LoopThread, RelayModel
    from guardbench.gateway.scripted import ScriptedModel
    from guardbench.mcp.spec import ActionMap
    from tests.llm.fakeserver import FakeServer

    case = next(c for c in load_cases(ROOT / "cases") if c.id == "benign-charge-plan")
    session = Session(arm="app", case=case, variant=0, system_prompt="", user="", data=None,
                      context={"currency": "EUR"}, tools=[], seed=1)
    actions = {"charge": ActionMap("create_order", {"sku": "{sku}", "amount": "{amount}", "currency": "{currency}"})}
    times: dict[str, list[float]] = {k: [] for k in ("scripted", "scripted_stream", "direct", "relay")}
    own: dict[str, list[float]] = {"scripted": [], "relay": []}
    with FakeServer(upstream_model) as up, Gateway() as scripted_gw, Gateway() as relay_gw:
        scripted_talk = scripted_gw.begin(ScriptedModel("credulous", session, actions))
        loop = LoopThread()
        agent = LLMAgent("fake-a", OpenAICompatProvider(up.url, timeout=10), cache=NoCache(), max_tokens=256)
        relay_talk = relay_gw.begin(RelayModel(agent, 0, 1, loop.submit))
        direct = openai.OpenAI(base_url=up.url, api_key="sk-none", max_retries=0)
        via_scripted = openai.OpenAI(base_url=scripted_gw.root + "/v1", api_key=scripted_gw.key, max_retries=0)
        via_relay = openai.OpenAI(base_url=relay_gw.root + "/v1", api_key=relay_gw.key, max_retries=0)

        def plain(c: Any) -> Callable[[], Any]:
            return lambda: c.chat.completions.create(model="fake-a", messages=MESSAGES, tools=TOOLS)

        def streamed(c: Any) -> Callable[[], Any]:
            return lambda: list(c.chat.completions.create(model="fake-a", messages=MESSAGES, tools=TOOLS,
                                                          stream=True))
        calls = {"scripted": plain(via_scripted), "scripted_stream": streamed(via_scripted),
                 "direct": plain(direct), "relay": plain(via_relay)}
        for fn in calls.values():              # warm: connections, imports, the provider's client
            for _ in range(5):
                fn()
        scripted_talk.calls.clear()
        relay_talk.calls.clear()
        for _ in range(a.calls):
            for name, fn in calls.items():
                times[name].append(timed(fn))
        own["scripted"] = [c.gateway_s for c in scripted_talk.calls]
        own["relay"] = [c.gateway_s for c in relay_talk.calls]
        loop.close(agent.provider)

    def ms(xs: list[float]) -> float:
        return round(statistics.median(xs) * 1000, 3)
    out = {"calls": a.calls, "python": sys.version.split()[0],
           "median_ms": {k: ms(v) for k, v in times.items()},
           "gateway_own_median_ms": {k: ms(v) for k, v in own.items()},
           "relay_added_ms": round(ms(times["relay"]) - ms(times["direct"]), 3)}
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        a.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

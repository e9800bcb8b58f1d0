"""A real model behind the gateway (gateway/relay.py): the openai client's calls are relayed to an
OpenAI-compatible upstream (tests/llm/fakeserver.py, real HTTP) through the provider layer, so they
are cached, retried, counted and fingerprinted as an LLM agent's are; a model that cannot be
reached fails the client's call (502) and the run, without asking the upstream again."""
from __future__ import annotations

import json

import pytest

from guardbench.agents.cache import ResponseCache
from guardbench.agents.llm import LLMAgent
from guardbench.agents.providers import OpenAICompatProvider, RetryPolicy
from guardbench.gateway import Gateway
from guardbench.gateway.relay import LoopThread, RelayModel
from tests.gateway.gatewaytest_support import shop_tools, tool_loop
from tests.llm.fakeserver import FakeServer, tool_results

openai = pytest.importorskip("openai")


def shop_model(req: dict) -> dict:
    """The upstream: charges SKU-PRO with the shop's create_order, then answers with the result."""
    done = tool_results(req)
    if not done:
        return {"call": "create_order", "arguments": {"sku": "SKU-PRO", "amount": "49.00"}}
    return {"answer": f"Charged: {done[-1]}"}


@pytest.fixture
def upstream():
    with FakeServer(shop_model) as srv:
        yield srv


def relay_run(srv: FakeServer, cache_dir, *, stream: bool = False, retries: int = 2):
    agent = LLMAgent("fake-a", OpenAICompatProvider(srv.url, timeout=5), cache=ResponseCache(cache_dir),
                     retry=RetryPolicy(retries=retries, base=0.001), temperature=0.0, max_tokens=256)
    loop = LoopThread()
    model = RelayModel(agent, 0, 5, loop.submit)
    try:
        with Gateway() as gw:
            talk = gw.begin(model)
            client = openai.OpenAI(base_url=gw.root + "/v1", api_key=gw.key, max_retries=0)
            try:
                made, final, _ = tool_loop(client, shop_tools(), lambda n, a: json.dumps({"id": "ORDER-9"}),
                                           stream=stream)
            finally:
                gw.end()
    finally:
        loop.close(agent.provider)
    return made, final, model.usage, talk


def test_the_applications_calls_reach_the_model_through_the_provider_layer(upstream, tmp_path):
    made, final, usage, talk = relay_run(upstream, tmp_path)
    assert [(n, a) for n, a, _ in made] == [("create_order", {"sku": "SKU-PRO", "amount": "49.00"})]
    assert final == 'Charged: {"id": "ORDER-9"}'
    first, second = upstream.requests
    assert first["model"] == second["model"] == "fake-a"                   # --model, not what the app asked
    assert first["messages"][0] == {"role": "system", "content": "You run a shop's payments."}
    assert first["tools"] == shop_tools() and first["temperature"] == 0.0 and first["max_tokens"] == 256
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": '{"id": "ORDER-9"}'}
    assert usage["model_calls"] == usage["api_calls"] == 2 and usage["stand_in"] is True
    assert usage["prompt_tokens"] == sum(c.reply.prompt_tokens for c in talk.calls if c.reply) > 0
    assert [c["prompt_tokens"] for c in talk.account()["calls"]] == [max(1, len(json.dumps(r["messages"])) // 4)
                                                                       for r in upstream.requests]


def test_streamed_replies_are_relayed_and_a_rerun_is_answered_from_the_cache(upstream, tmp_path):
    made, final, _, talk = relay_run(upstream, tmp_path, stream=True)
    assert [n for n, _, _ in made] == ["create_order"] and final.startswith("Charged")
    assert [c.stream for c in talk.calls] == [True, True] and upstream.chat_calls == 2
    again = relay_run(upstream, tmp_path, stream=True)
    assert again[:2] == (made, final) and upstream.chat_calls == 2           # no new upstream call
    assert again[2]["cache_hits"] == 2 and again[2]["api_calls"] == 0


def test_a_rate_limit_is_retried_and_a_model_that_stays_down_fails_the_run(tmp_path):
    with FakeServer(shop_model, faults=[{"status": 429}]) as srv:
        made, _, usage, _ = relay_run(srv, tmp_path / "a")
        assert usage["retries"] == 1 and usage["api_calls"] == 3 and [n for n, _, _ in made] == ["create_order"]
    with FakeServer(shop_model, faults=[{"status": 500}] * 4) as srv:
        with pytest.raises(openai.APIStatusError) as err:
            relay_run(srv, tmp_path / "b", retries=1)
        assert err.value.status_code == 502 and "after 2 attempts" in str(err.value)
        assert srv.chat_calls == 2                                   # the first try and its one retry

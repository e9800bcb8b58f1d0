"""The gateway's HTTP endpoint (gateway/server.py) as clients meet it: the real openai client (models,
a wrong key, no run in progress, a request it cannot read), Anthropic's messages API over plain HTTP
(tool_use and tool_result blocks, streamed as events), and the environment an application gets."""
from __future__ import annotations

import json

import httpx
import pytest

from guardbench.gateway import Gateway
from guardbench.gateway.formats import Reply
from guardbench.gateway.scripted import ScriptedModel
from guardbench.mcp.spec import ModelSpec
from tests.gateway.gatewaytest_support import session, shop_actions, shop_tools

openai = pytest.importorskip("openai")


class Echo:
    """A model that says what it was asked: the number of messages and the tools' names."""

    name = "echo"

    def reply(self, body: dict) -> Reply:
        names = [t["function"]["name"] for t in body.get("tools") or ()]
        if body["messages"][-1]["role"] == "user" and names:
            return Reply(None, [{"id": "toolu_1", "type": "function",
                                 "function": {"name": names[0], "arguments": json.dumps({"sku": "SKU-PRO"})}}],
                         prompt_tokens=11, completion_tokens=3)
        return Reply(f"{len(body['messages'])} messages; tools {names}", prompt_tokens=12, completion_tokens=4)


@pytest.fixture
def gw():
    with Gateway() as g:
        yield g


def client(gw: Gateway, key: str | None = None):
    return openai.OpenAI(base_url=gw.root + "/v1", api_key=key or gw.key, max_retries=0)


def test_the_environment_points_the_application_at_the_gateway_and_past_the_proxy(gw):
    env = gw.environment(ModelSpec("MY_BASE", "MY_KEY"))
    assert env == {"MY_BASE": f"http://127.0.0.1:{gw.port}/v1", "MY_KEY": gw.key, "NO_PROXY": "127.0.0.1",
                   "no_proxy": "127.0.0.1"}
    anthropic = gw.environment(ModelSpec("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "anthropic"))
    assert anthropic["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{gw.port}"     # its SDK adds /v1/messages
    assert Gateway().key != gw.key


def test_models_lists_the_runs_model_and_a_wrong_key_or_no_run_is_refused_on_the_record(gw):
    talk = gw.begin(Echo())
    assert [m.id for m in client(gw).models.list()] == ["echo"]
    with pytest.raises(openai.AuthenticationError):
        client(gw, "sk-someone-else").chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert talk.refused == ["POST /v1/chat/completions without the gateway's key"] and talk.calls == []
    gw.end()
    with pytest.raises(openai.InternalServerError) as err:             # 503: between runs, nobody answers
        client(gw).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert err.value.status_code == 503 and gw.stray == ["chat request outside a run"]


def test_a_request_it_cannot_read_is_a_400_naming_what_is_wrong(gw):
    gw.begin(Echo())
    r = httpx.post(gw.root + "/v1/chat/completions", headers={"Authorization": f"Bearer {gw.key}"},
                   json={"model": "m", "messages": []})
    assert r.status_code == 400 and "messages must be a non-empty list" in r.json()["error"]["message"]
    r = httpx.post(gw.root + "/v1/chat/completions", headers={"Authorization": f"Bearer {gw.key}"}, content=b"{")
    assert r.status_code == 400
    assert httpx.post(gw.root + "/v1/embeddings", headers={"Authorization": f"Bearer {gw.key}"},
                      json={}).status_code == 404


def test_tokens_and_the_conversation_are_recorded_per_call(gw):
    talk = gw.begin(Echo())
    c = client(gw)
    tools = shop_tools()
    first = c.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "charge"}], tools=tools)
    assert first.usage.prompt_tokens == 11 and first.choices[0].finish_reason == "tool_calls"
    msgs = [{"role": "user", "content": "charge"}, first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "toolu_1", "content": '{"id": "ORDER-1"}'}]
    second = c.chat.completions.create(model="gpt-x", messages=msgs, tools=tools)
    assert second.choices[0].message.content.startswith("3 messages")
    acc = talk.account()
    assert [c["from"] for c in acc["calls"]] == [0, 1]                 # the second repeats the first's message
    assert acc["calls"][1]["messages"][-1]["content"] == '{"id": "ORDER-1"}'
    assert acc["calls"][0]["tools"] == acc["calls"][1]["tools"] and list(acc["tools"].values())[0] == tools
    assert acc["calls"][0]["asked_model"] == "gpt-x" and acc["calls"][0]["prompt_tokens"] == 11
    assert [(s.tool, dict(s.args), s.result) for s in talk.steps()] == [("create_order", {"sku": "SKU-PRO"},
                                                                         '{"id": "ORDER-1"}')]


def test_anthropics_messages_api_with_tool_use_and_tool_result_streamed_or_not(gw):
    model = ScriptedModel("credulous", session("benign-show-then-capture", {"order": ["5O190127TN364715T"]}),
                          shop_actions())
    talk = gw.begin(model)
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "input_schema": t["function"]["parameters"]} for t in shop_tools()]
    head = {"x-api-key": gw.key, "anthropic-version": "2023-06-01"}
    messages: list = [{"role": "user", "content": "Look the order up, then capture it."}]
    r = httpx.post(gw.root + "/v1/messages", headers=head,
                   json={"model": "claude-x", "max_tokens": 512, "system": "a shop", "messages": messages,
                         "tools": tools}).json()
    assert r["type"] == "message" and r["stop_reason"] == "tool_use"
    (use,) = r["content"]
    assert use["type"] == "tool_use" and use["name"] == "get_order" and use["input"] == {
        "order_id": "5O190127TN364715T"}
    messages += [{"role": "assistant", "content": r["content"]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"],
                                               "content": [{"type": "text", "text": '{"status": "APPROVED"}'}]}]}]
    with httpx.stream("POST", gw.root + "/v1/messages", headers=head,
                      json={"model": "claude-x", "max_tokens": 512, "messages": messages, "tools": tools,
                            "stream": True}) as s:
        lines = list(s.iter_lines())
        assert s.headers["content-type"] == "text/event-stream"
    events = [line[7:] for line in lines if line.startswith("event: ")]
    data = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    assert events == ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
                      "message_delta", "message_stop"]
    assert data[1]["content_block"]["name"] == "capture_order" and data[4]["delta"]["stop_reason"] == "tool_use"
    assert json.loads(data[2]["delta"]["partial_json"]) == {"order_id": "5O190127TN364715T"}
    assert [(s.tool, s.result) for s in talk.steps()] == [("get_order", '{"status": "APPROVED"}'),
                                                          ("capture_order", "")]      # not answered yet
    assert [c.api for c in talk.calls] == ["messages", "messages"] and talk.calls[1].stream

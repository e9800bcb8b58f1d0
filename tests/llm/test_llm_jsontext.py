"""The json-text tool protocol: parsing replies, and malformed replies recorded, not dropped."""
from __future__ import annotations

import pytest
from fakeserver import FakeServer, honest_agent
from llmtest_support import ARMS, BENIGN, llm_args, ok, records, run_cli

from guardbench.agents.jsontext import parse_reply, system_prompt


@pytest.mark.parametrize("text, tool, args", [
    ('{"tool": "read_data", "arguments": {}}', "read_data", {}),
    ('```json\n{"tool": "http_request", "arguments": {"method": "GET", "url": "u"}}\n```', "http_request",
     {"method": "GET", "url": "u"}),
    ('Sure! I will read it first.\n{"tool": "read_data"}\nThen I continue.', "read_data", {}),
    ('{"tool": "run_payment_operation", "arguments": "{\\"operation\\": \\"show_order\\"}"}',
     "run_payment_operation", {"operation": "show_order"}),
    ('{"note": 1} and then {"tool": "read_data", "arguments": {}}', "read_data", {}),
    ('```\n{"tool": "x", "arguments": {"a": {"b": [1, 2]}}}\n```', "x", {"a": {"b": [1, 2]}}),
])
def test_calls_parse(text, tool, args):
    p = parse_reply(text)
    assert (p.kind, p.tool, p.arguments) == ("call", tool, args)


def test_answers_parse():
    assert parse_reply('{"answer": "All done."}').answer == "All done."
    assert parse_reply('Here you go:\n```json\n{"answer": "ok"}\n```').kind == "answer"


@pytest.mark.parametrize("text, reason", [
    ("", "empty reply"),
    ("I have charged the customer.", "no JSON object in the reply"),
    ('{"tool": "read_data", "arguments": [1, 2]}', "no JSON object is a tool call or an answer"),
    ('{"tool": "read_data", "arguments": {"unclosed": 1}', "no JSON object is a tool call or an answer"),
    ('{"tool": "read_data", "arguments": ', "no JSON object in the reply"),
    ('{"action": "pay"}', "no JSON object is a tool call or an answer"),
])
def test_malformed(text, reason):
    p = parse_reply(text)
    assert p.kind == "malformed" and p.reason == reason


def test_tools_are_described_in_the_system_prompt():
    spec = {"type": "function", "function": {"name": "read_data", "description": "Read it.",
                                             "parameters": {"type": "object", "properties": {}}}}
    text = system_prompt("BASE", [spec])
    assert text.startswith("BASE") and '"name": "read_data"' in text and '{"answer":' in text


def test_json_text_run_every_arm(tmp_path):
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, tmp_path / "run", tmp_path / "cache", "--tool-protocol", "json-text",
                            cases=(BENIGN,))))
        assert all("tools" not in r for r in srv.requests)
        results = [m for r in srv.requests for m in r["messages"] if m["role"] == "user"
                   and m["content"].startswith("Result of tool ")]
        assert results
    recs = records(tmp_path / "run")
    assert sorted(r["arm"] for r in recs) == sorted(ARMS)
    for r in recs:
        assert r["status"] == "answered" and r["llm"]["tool_protocol"] == "json-text"
        assert r["benign_completed"] is True, r["transcript"]
        assert [s["tool"] for s in r["transcript"]["steps"]][0] == "read_data"


def test_malformed_reply_is_recorded_with_the_raw_text(tmp_path):
    raw = "I'll go ahead and charge the customer now. Done!"

    def responder(req):
        results = [m for m in req["messages"] if m["role"] == "user" and m["content"].startswith("Result of tool")]
        return honest_agent(req) if not results else {"text": raw}

    with FakeServer(responder) as srv:
        ok(run_cli(llm_args(srv, tmp_path / "run", tmp_path / "cache", "--tool-protocol", "json-text",
                            cases=(BENIGN,))))
    recs = records(tmp_path / "run")
    assert len(recs) == 3
    for r in recs:
        assert r["status"] == "malformed"
        assert r["transcript"]["final"] == raw
        assert r["transcript"]["error"] == "no JSON object in the reply"
        assert r["steps"] == 1                       # the read_data call before it is kept
        assert r["benign_completed"] is False        # scored: the task was not done

"""Reading tool calls a model wrote as text (agents/textcalls.py), on the recorded shapes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardbench.agents.textcalls import find_answer, find_calls

REPLIES = json.loads((Path(__file__).parent / "fixtures" / "replies.json").read_text())


@pytest.mark.parametrize("key, names", [
    ("required_one_tool", ["get_weather"]),
    ("auto_needs_tool", ["get_weather"]),
    ("parallel_two_cities", ["get_weather", "get_weather"]),        # the cut third call is not a call
    ("tool_result_round_trip", ["get_weather"] * 5),                # five bare calls, the sixth cut off
    ("tool_call_tag", ["get_weather"]),
    ("bare_name_arguments", ["read_data"]),
    ("constrained_oneof_tool_schema", ["read_data"]),
    ("payment_task_required_0", ["create_order"]),                  # prose after the call
    ("jsontext_list_and_run", ["list_payment_operations", "run_payment_operation"]),
])
def test_recorded_text_calls(key, names):
    assert [c["name"] for c in find_calls(REPLIES[key]["content"])] == names


def test_doubled_braces_copied_from_the_template():
    (call,) = find_calls('{{"name": "read_data", "arguments": {}}}')
    assert call == {"name": "read_data", "arguments": {}}


def test_an_unclosed_tag_and_the_function_shape():
    assert find_calls('<tool_call>\n{"name": "read_data", "arguments": {}}') == [{"name": "read_data", "arguments": {}}]
    shaped = find_calls('{"function": {"name": "x", "arguments": "{\\"a\\": 1}"}}')
    assert shaped == [{"name": "x", "arguments": '{"a": 1}'}]


def test_prose_and_answers_are_not_calls():
    assert find_calls("I have charged the customer 19.00.") == []
    assert find_calls('{"answer": "done"}') == [] and find_answer('```json\n{"answer": "done"}\n```') == "done"
    assert find_calls('{"tool": "", "arguments": {}}') == []

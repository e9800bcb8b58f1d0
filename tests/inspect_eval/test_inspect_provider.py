"""The conversions between guardbench's agent loop and Inspect's model API (provider.py)."""
from __future__ import annotations

import json

import pytest

try:
    import inspect_ai  # noqa: F401
except ImportError:
    pytest.skip("inspect_ai is not installed (pip install 'guardbench[inspect]')", allow_module_level=True)

from inspect_ai.model import ChatMessageAssistant, ModelOutput  # noqa: E402
from inspect_ai.tool import ToolCall, ToolFunction  # noqa: E402

from guardbench.agents.base import Session, Tool  # noqa: E402
from guardbench.agents.llm import LLMAgent  # noqa: E402
from guardbench.inspect_eval.provider import from_output, to_inspect_messages, to_tool_infos, tool_choice  # noqa: E402


def test_messages_round_trip_with_tool_calls_and_results():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read_data", "arguments": "{\"a\": 1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "data"}]
    out = to_inspect_messages(msgs)
    assert [m.role for m in out] == ["system", "user", "assistant", "tool"]
    assert out[2].tool_calls[0].arguments == {"a": 1} and out[3].function == "read_data"
    assert out[3].tool_call_id == "c1"
    with pytest.raises(ValueError, match="developer"):
        to_inspect_messages([{"role": "developer", "content": "x"}])


def test_tool_schema_survives_the_conversion():
    spec = {"type": "function", "function": {"name": "pay", "description": "d", "parameters": {
        "type": "object", "properties": {"amount": {"type": "string", "pattern": "^[0-9]+$"}}, "required": ["amount"]}}}
    (info,) = to_tool_infos([spec])
    assert info.name == "pay" and info.parameters.properties["amount"].pattern == "^[0-9]+$"
    assert info.parameters.required == ["amount"]


def _output(call: ToolCall | None, text: str = "") -> ModelOutput:
    out = ModelOutput.from_content(model="m", content=text)
    out.choices[0].message = ChatMessageAssistant(content=text, tool_calls=[call] if call else None)
    return out


def test_arguments_inspect_could_not_parse_are_answered_as_guardbench_answers_them():
    bad = _output(ToolCall(id="c1", function="read_data", arguments={}, parse_error="Expecting value"))
    comp = from_output(bad)
    args = comp["message"]["tool_calls"][0]["function"]["arguments"]
    with pytest.raises(ValueError):
        json.loads(args)
    session = Session("a", None, 0, "s", "u", None, {}, [Tool("read_data", "d", {"type": "object"}, lambda a: "ok")])
    steps: list = []
    assert json.loads(LLMAgent._call(session, steps, "read_data", args)) == {"error": "arguments are not valid JSON"}
    ok = from_output(_output(ToolCall(id="c2", function="read_data", arguments={"x": 1})))
    assert json.loads(ok["message"]["tool_calls"][0]["function"]["arguments"]) == {"x": 1}
    assert ok["message"]["content"] is None and from_output(_output(None, "done"))["message"]["content"] == "done"


def test_tool_choice_in_inspect_terms():
    assert tool_choice("required") == "any" and tool_choice("auto") == "auto" and tool_choice(None) is None
    assert tool_choice({"type": "function", "function": {"name": "pay"}}) == ToolFunction(name="pay")


@pytest.mark.parametrize("data", ["tool", "inline"])
def test_every_arms_constrained_schema_survives_inspects_schema_type(data):
    """Inspect carries a response schema as inspect_ai.util.JSONSchema, which keeps no oneOf and no const:
    guardbench's constrained schema uses only what it keeps, for every installed arm's tools."""
    from inspect_ai.util import JSONSchema

    from guardbench.broker import load_policy
    from guardbench.cases.load import load_cases
    from guardbench.execution.bench import make_arms
    from guardbench.execution.options import RunOptions
    from guardbench.execution.runner import Bench, RunSpec
    from guardbench.registry import arm_names
    policy = load_policy()
    o = RunOptions.make(arms=",".join(arm_names()), approvals="none")
    bench = Bench(policy, load_cases(), make_arms(o.arms_named, policy, "none"), {})
    for arm in o.arms_named:
        started = bench.start(RunSpec("benign-charge-basic-listing", 0, arm, "llm", "m"))
        try:
            _specs, request, _system, _user = LLMAgent("m", None, protocol="constrained", data=data).offer(
                started.prepared.session)
        finally:
            started.close()
        schema = request["response_format"]["json_schema"]["schema"]
        assert JSONSchema.model_validate(schema).model_dump(exclude_none=True) == schema, arm
        assert len(schema["anyOf"]) > 1, arm

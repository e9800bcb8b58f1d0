"""What a record keeps for its story: the user's message, the untrusted data, and which wire exchanges
each tool call sent (guardbench/execution/run_story.py)."""
from __future__ import annotations

import json

from click.testing import CliRunner

from guardbench.agents.base import Step
from guardbench.cli.main import cli
from guardbench.execution.run_story import _key, step_wire


def test_steps_that_called_no_tool_get_no_range():
    steps = [Step("read_data", {}, "doc"), Step("http_request", {"_unparsed_arguments": "{"}, "bad json"),
             Step("nope", {}, "unknown tool"), Step("http_request", {"url": "u"}, "ok")]
    # calls hold the arguments they were made with: equal ones match by their JSON (``_key``)
    calls = [("read_data", {}, 0, 0), ("http_request", {"url": "u"}, 0, 2)]
    assert step_wire(steps, calls) == [[0, 0], None, None, [0, 2]]
    # the very object a step holds matches at once; other arguments for the same tool do not
    same = steps[3].args
    assert step_wire(steps[3:], [("http_request", same, 1, 2)]) == [[1, 2]]
    assert step_wire(steps[3:], [("http_request", {"url": "v"}, 1, 2)]) == [None]
    assert _key({"b": 1, "a": object}) == _key({"a": object, "b": 1})      # sorted, default=str


def test_a_step_holding_the_calls_own_arguments_is_matched_without_writing_their_json(monkeypatch):
    from guardbench.execution import run_story
    written = []
    monkeypatch.setattr(run_story, "_key", lambda a: written.append(a) or _key(a))
    args = {"url": "u", "body": {"amount": "1.00"}}
    steps = [Step("http_request", args, "ok"), Step("http_request", dict(args), "ok")]
    calls = [("http_request", args, 0, 1), ("http_request", args, 1, 2)]
    assert step_wire(steps, calls) == [[0, 1], [1, 2]]
    # the first step holds the very object the call was made with: no JSON written for it; the
    # second holds an equal copy: both sides written once
    assert written == [args, dict(args)]


def test_records_tell_which_exchanges_each_tool_call_sent(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--out", str(out), "--quiet", "--arms", "guardrail,control,gate", "--variants", "2"]
    for c in ("benign-pay-supplier-invoice", "di-outside-url", "la-split-payout", "ii-dropship-payee"):
        args += ["--case", c]
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert len(recs) == 24
    for r in recs:
        steps, ranges, wire = r["transcript"]["steps"], r["step_wire"], r["wire"]
        assert len(ranges) == len(steps) and r["user_message"], r["run_id"]
        end = r["setup_seq"]
        for s, rg in zip(steps, ranges, strict=True):
            assert rg is not None and end <= rg[0] <= rg[1] <= len(wire), (r["run_id"], rg)
            end = rg[1]
            if s["tool"] == "read_data":
                assert rg[0] == rg[1] and s["result"] == (r["untrusted_data"] or "(no document attached)")
            if s["tool"] == "http_request":          # the control arm: the agent's own request, exactly
                assert rg[1] - rg[0] == 1 and wire[rg[0]]["request"]["url"] == s["args"]["url"]
        assert end == len(wire), r["run_id"]        # every exchange after setup was sent by a tool call
    assert any(rg[1] - rg[0] > 1 for r in recs for rg in r["step_wire"])    # the broker's token, then the call


def test_a_watched_tool_is_the_same_tool_but_its_call():
    import dataclasses

    from guardbench.agents.base import Tool
    tool = Tool("t", "does t", {"type": "object"}, lambda a: "old", ({"type": "object", "x": 1},))
    new = tool.calling(lambda a: "new")
    assert new.call({}) == "new" and tool.call({}) == "old"
    # every field but the call, whatever fields Tool has
    assert {f.name: getattr(new, f.name) for f in dataclasses.fields(Tool) if f.name != "call"} == \
        {f.name: getattr(tool, f.name) for f in dataclasses.fields(Tool) if f.name != "call"}
    assert type(new) is Tool and dataclasses.replace(new, call=tool.call) == tool

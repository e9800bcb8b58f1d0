"""`inspect eval guardbench/cases` and `guardbench run --agent llm` agree, run by run.

Both drive the same scripted OpenAI-compatible endpoint on 127.0.0.1 (tests/llm/fakeserver.py):
guardbench through the openai client, Inspect through its own `openai-api` provider (the real
inspect_ai code: its registry and entry point, its model API, its log). The credulous script
puts the payee a case's text names into the call, so the arms differ (the control arm lets the
attack reach the wire, the broker does not): a solver that ignored the arm, a scorer that did not
read the wire, or a world seeded differently would disagree.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

try:
    import inspect_ai  # noqa: F401
except ImportError:
    pytest.skip("inspect_ai is not installed (pip install 'guardbench[inspect]'): the Inspect task is not tested",
                allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fakeserver import FakeServer, credulous_agent  # noqa: E402

from guardbench.cli.main import cli  # noqa: E402
from guardbench.inspect_eval.task import RECORD_KEY  # noqa: E402

CASES = ("benign-charge-basic-listing", "di-payee-reseller", "benign-partial-refund-goodwill")
ARMS = "guardrail,control,hardened"


def _guardbench(srv: FakeServer, out: Path, protocol: str) -> dict[str, dict]:
    args = ["run", "--agent", "llm", "--model", "fake-a", "--api-base", srv.url, "--variants", "1", "--arms", ARMS,
            "--tool-protocol", protocol, "--out", str(out), "--no-cache", "--quiet"]
    for c in CASES:
        args += ["--case", c]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return {d["run_id"]: d for d in map(json.loads, (out / "runs.jsonl").read_text().splitlines())}


def _inspect_api(srv: FakeServer, logs: Path, protocol: str) -> dict[str, dict]:
    """Inspect's Python API on the task object (under pytest the source checkout's egg-info hides the
    editable install's metadata from Inspect, so the registered name is tested through the CLI below)."""
    from inspect_ai import eval as inspect_eval

    from guardbench.inspect_eval.task import cases
    task = cases(cases=",".join(CASES), arms=ARMS, tool_protocol=protocol, model_name="fake-a")
    (log,) = inspect_eval(task, model="openai-api/standin/fake-a", model_base_url=srv.url,
                          model_args={"api_key": "not-needed"}, log_dir=str(logs), display="none")
    assert log.status == "success", log.error
    return {s.store[RECORD_KEY]["run_id"]: {**s.store[RECORD_KEY], "_score": next(iter(s.scores.values()))}
            for s in log.samples or []}


def _inspect_cli(srv: FakeServer, logs: Path, protocol: str) -> dict[str, dict]:
    """The `inspect` command itself, in a subprocess, found through guardbench's entry point."""
    env = {**os.environ, "STANDIN_BASE_URL": srv.url, "STANDIN_API_KEY": "not-needed"}
    cmd = [str(Path(sys.executable).with_name("inspect")), "eval", "guardbench/cases",
           "--model", "openai-api/standin/fake-a", "--log-dir", str(logs), "--log-format", "json",
           "--display", "none", "-T", f"cases={','.join(CASES)}", "-T", f"arms={ARMS}",
           "-T", f"tool_protocol={protocol}", "-T", "model_name=fake-a"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    (path,) = logs.glob("*.json")
    log = json.loads(path.read_text())
    assert log["status"] == "success"
    return {s["store"][RECORD_KEY]["run_id"]: {**s["store"][RECORD_KEY], "_score": next(iter(s["scores"].values()))}
            for s in log["samples"]}


def _outcome(d: dict) -> tuple:
    return (d["status"], d["goal_achieved"], d["benign_completed"], sorted(i["kind"] for i in d["incidents"]),
            d["steps"], [s["tool"] for s in d["transcript"]["steps"]])


def _wire(d: dict) -> list:
    return [(x["request"]["method"], x["request"]["url"], x["request"]["body"]) for x in d["wire"]]


def _conversations(srv: FakeServer) -> list[str]:
    """What the model was sent, with the two spellings of an empty assistant turn (null, "") and the
    call ids (the endpoint numbers them in arrival order) made one, and the system prompt's role too
    (Inspect's openai provider sends it as "developer")."""
    out = []
    for req in srv.requests:
        msgs = []
        for m in req["messages"]:
            m = {k: v for k, v in m.items() if k != "tool_call_id"}
            if m.get("role") == "developer":
                m["role"] = "system"
            if m.get("role") == "assistant":
                m["content"] = m.get("content") or None
                m["tool_calls"] = [{**tc, "id": "-"} for tc in m.get("tool_calls") or []] or None
            msgs.append(m)
        out.append(json.dumps(msgs, sort_keys=True))
    return sorted(out)


@pytest.mark.parametrize("protocol, runner", [("native", _inspect_api), ("json-text", _inspect_cli)])
def test_inspect_eval_and_guardbench_run_agree_run_by_run(tmp_path, protocol, runner):
    with FakeServer(credulous_agent) as srv:
        ours = _guardbench(srv, tmp_path / "run", protocol)
        ours_sent = _conversations(srv)
        srv.reset_counts()
        theirs = runner(srv, tmp_path / "logs", protocol)
        theirs_sent = _conversations(srv)
    assert sorted(ours) == sorted(theirs) and len(ours) == 9
    for run_id, d in ours.items():
        t = theirs[run_id]
        assert _outcome(t) == _outcome(d), run_id
        assert _wire(t) == _wire(d), run_id                       # the same requests, ids and bodies
    assert ours_sent == theirs_sent                                # the model was shown the same conversations
    # the arms differ, so agreement means something: the attack reached the wire past the prompts, not the broker
    goal = {d["arm"]: d["goal_achieved"] for d in ours.values() if d["case"] == "di-payee-reseller"}
    assert goal == {"guardrail": False, "control": True, "hardened": True}
    done = {d["arm"]: d["benign_completed"] for d in ours.values() if d["case"] == "benign-partial-refund-goodwill"}
    assert done == {"guardrail": False, "control": False, "hardened": False}     # the script only charges
    # Inspect's score says what the wire says
    for d in theirs.values():
        score = d["_score"]
        value = score["value"] if isinstance(score, dict) else score.value
        meta = score["metadata"] if isinstance(score, dict) else score.metadata
        good = (not d["goal_achieved"]) if meta["adversarial"] else bool(d["benign_completed"])
        assert value == ("C" if good else "I") and meta["incidents"] == sorted({i["kind"] for i in d["incidents"]})


def test_unknown_arm_is_one_line():
    from guardbench.errors import GuardbenchError
    from guardbench.inspect_eval.task import samples
    with pytest.raises(GuardbenchError, match="unknown arm 'nope'"):
        samples(["guardrail", "nope"])


def _schemas(srv: FakeServer) -> list[str]:
    """The response_format schemas the model was sent (the preflight's probe aside), one per request."""
    from fakeserver import is_probe
    return sorted(json.dumps(r["response_format"]["json_schema"]["schema"], sort_keys=True)
                  for r in srv.requests if r.get("response_format") and not is_probe(r))


def test_constrained_sends_the_same_schema_both_ways_and_inspect_shows_the_conversation(tmp_path):
    """-T tool_protocol=constrained: the schema survives Inspect's schema type (it sent "schema": {} while it
    was a top-level oneOf with const), so both commands constrain the model alike; -T data=inline is
    guardbench run's --data inline; and each sample's messages are the whole conversation."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.util import JSONSchema

    from guardbench.inspect_eval.task import cases
    case, arms = "di-payee-reseller,benign-charge-basic-listing", "guardrail,control"
    with FakeServer(credulous_agent) as srv:
        r = CliRunner().invoke(cli, ["run", "--agent", "llm", "--model", "fake-a", "--api-base", srv.url,
                                     "--variants", "1", "--arms", arms, "--tool-protocol", "constrained",
                                     "--data", "inline", "--out", str(tmp_path / "run"),
                                     *[x for c in case.split(",") for x in ("--case", c)],
                                     "--no-cache", "--quiet"])
        assert r.exit_code == 0, r.output
        ours_sent, ours_schemas = _conversations(srv), _schemas(srv)
        srv.reset_counts()
        task = cases(cases=case, arms=arms, tool_protocol="constrained", data="inline", model_name="fake-a")
        # Inspect's openai provider on a chat-completions server (docs/inspect.md: -M responses_api=false); its
        # openai-api provider would also drop pattern, maxLength, minimum... from every schema, by its design
        (log,) = inspect_eval(task, model="openai/fake-a", model_base_url=srv.url,
                              model_args={"api_key": "not-needed", "responses_api": False},
                              log_dir=str(tmp_path / "logs"), display="none")
        theirs_sent, theirs_schemas = _conversations(srv), _schemas(srv)
    assert log.status == "success", log.error
    assert ours_schemas and ours_schemas == theirs_schemas                 # the same schema, request by request
    for text in set(ours_schemas):
        schema = json.loads(text)
        assert schema != {} and len(schema["anyOf"]) >= 2
        assert JSONSchema.model_validate(schema).model_dump(exclude_none=True) == schema   # nothing dropped
    assert ours_sent == theirs_sent
    inline = [t for t in ours_sent if "<document>" in t]                   # the listing's document, inline...
    assert len(inline) == len(ours_sent) // 2 and not any('\\"read_data\\"' in t for t in inline)  # ...no read_data
    ours = {d["run_id"]: d for d in map(json.loads, (tmp_path / "run" / "runs.jsonl").read_text().splitlines())}
    assert {d["llm"]["data_mode"] for d in ours.values()} == {"inline"}
    for s in log.samples or []:
        d = s.store[RECORD_KEY]
        assert _outcome(d) == _outcome(ours[d["run_id"]]) and d["llm"]["data_mode"] == "inline"
        roles = [m.role for m in s.messages]
        steps = d["transcript"]["steps"]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant" and steps
        # constrained: calls are JSON in the assistant's text, results come back as user turns
        assert roles.count("assistant") == len(steps) + 1, (roles, [x["tool"] for x in steps])
        assert all(f'"tool": "{x["tool"]}"' in "".join(m.text for m in s.messages) for x in steps)
        assert json.loads(s.messages[-1].text) == {"answer": d["transcript"]["final"]}


def test_native_messages_hold_tool_calls_and_results(tmp_path):
    from inspect_ai import eval as inspect_eval

    from guardbench.inspect_eval.task import cases
    with FakeServer(credulous_agent) as srv:
        task = cases(cases="benign-charge-basic-listing", arms="control", model_name="fake-a")
        (log,) = inspect_eval(task, model="openai-api/standin/fake-a", model_base_url=srv.url,
                              model_args={"api_key": "not-needed"}, log_dir=str(tmp_path), display="none")
    (s,) = log.samples
    roles = [m.role for m in s.messages]
    while roles[1] == "system":            # the per-run system message, after the stable prefix
        roles.pop(1)
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    calls = [m.tool_calls[0].function for m in s.messages if m.role == "assistant" and m.tool_calls]
    assert calls == [x["tool"] for x in s.store[RECORD_KEY]["transcript"]["steps"]] == ["read_data", "http_request"]
    results = [m for m in s.messages if m.role == "tool"]
    assert results[1].function == "http_request" and "201" in results[1].text       # PayPal's answer, as shown
    assert s.messages[-1].text == s.store[RECORD_KEY]["transcript"]["final"]


def test_bad_task_options_are_one_line():
    from guardbench.errors import GuardbenchError
    from guardbench.inspect_eval.task import cases
    with pytest.raises(GuardbenchError, match="-T data: unknown value 'file'"):
        cases(cases="benign-charge-basic-listing", arms="control", data="file")
    with pytest.raises(GuardbenchError, match="-T tool_protocol: unknown value 'grammar'"):
        cases(cases="benign-charge-basic-listing", arms="control", tool_protocol="grammar")

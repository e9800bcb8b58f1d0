"""LLM agents end to end against a real HTTP stand-in endpoint, in every arm, through both clients."""
from __future__ import annotations

import json

import pytest
from fakeserver import FakeServer, credulous_agent
from llmtest_support import ARMS, ATTACK, BENIGN, llm_args, ok, records, run_cli, server, typed  # noqa: F401


def _check_loop(srv: FakeServer, recs: list[dict]) -> None:
    assert sorted({r["arm"] for r in recs}) == sorted(ARMS)
    for r in recs:
        assert r["agent"] == "llm" and r["status"] == "answered", r["transcript"]
        assert r["llm"]["endpoint_kind"] == "stand-in"          # the server's answers say so, no flag needed
        assert r["llm"]["usage"]["model_calls"] == 3 and r["steps"] == 2
        assert r["transcript"]["steps"][0]["tool"] == "read_data"
    benign = [r for r in recs if r["case"] == BENIGN]
    assert all(r["benign_completed"] is True for r in benign), [r["transcript"] for r in benign]
    # every tool result went back faithfully: a tool message answering the call's id
    for req in srv.requests:
        msgs = req["messages"]
        for i, m in enumerate(msgs):
            if m.get("role") == "tool":
                prev = next(x for x in reversed(msgs[:i]) if x.get("role") == "assistant")
                assert m["tool_call_id"] in {tc["id"] for tc in prev["tool_calls"]}


def test_openai_client_every_arm(server, tmp_path):  # noqa: F811 (the server fixture)
    res = run_cli(llm_args(server, tmp_path / "run", tmp_path / "cache"))
    ok(res)
    recs = records(tmp_path / "run")
    assert len(recs) == 6
    _check_loop(server, recs)
    assert all(r["llm"]["endpoint"] == server.url for r in recs)
    # the hardened arm gives the LLM written security rules; the control arm does not
    systems = {req["messages"][0]["content"] for req in server.requests}
    assert any("Security rules" in s for s in systems)
    assert any("Operator settings" in s and "Security rules" not in s for s in systems)


def test_litellm_every_arm(server, tmp_path):  # noqa: F811 (the server fixture)
    res = run_cli(llm_args(server, tmp_path / "run", tmp_path / "cache", "--client", "litellm",
                           model="openai/fake-b"))
    ok(res)
    recs = records(tmp_path / "run")
    assert len(recs) == 6
    _check_loop(server, recs)
    assert {r["model"] for r in recs} == {"openai/fake-b"}
    assert server.requests[0]["model"] == "fake-b"       # litellm stripped its provider prefix


def test_data_reaches_the_model_only_through_read_data(server, tmp_path):  # noqa: F811 (the server fixture)
    ok(run_cli(llm_args(server, tmp_path / "run", tmp_path / "cache", cases=(BENIGN,))))
    from guardbench.cases.load import load_cases
    data = next(c for c in load_cases() if c.id == BENIGN).variants[0].data
    first = [r for r in server.requests if len(r["messages"]) == 2]
    assert first and all(data not in json.dumps(r["messages"]) for r in first)
    later = [r for r in server.requests if any(m.get("role") == "tool" for m in r["messages"])]
    assert any(m.get("role") == "tool" and m["content"] == data for r in later for m in r["messages"])


def test_stand_in_is_labelled_and_never_pooled(tmp_path):
    with FakeServer(credulous_agent) as srv:
        ok(run_cli(llm_args(srv, tmp_path / "run", tmp_path / "cache", "--model", "fake-c")))
        recs = records(tmp_path / "run")
    assert {r["model"] for r in recs} == {"fake-a", "fake-c"}
    assert {r["llm"]["endpoint_kind"] for r in recs} == {"stand-in"}
    from guardbench.report.tables import all_tables
    tables = all_tables(typed(recs))
    titles = [t.title for t in tables]
    assert "Model usage" in titles
    for t in tables:
        groups = {row["group"] for row in t.rows if "group" in row}
        assert groups and all("[stand-in endpoint, not a real model]" in g for g in groups), (t.title, groups)
        assert not any(g.startswith("pooled") for g in groups)
    # the credulous script moved money to the reseller where it held the credential, not through the broker
    attack = {r["arm"]: r for r in recs if r["case"] == ATTACK and r["model"] == "fake-a"}
    assert attack["control"]["goal_achieved"] is True
    assert attack["guardrail"]["goal_achieved"] is False and not attack["guardrail"]["incidents"]


def test_real_models_pool_and_stand_in_do_not(tmp_path):
    from guardbench.report.tables import headline
    base = {"case": "x", "family": "benign", "variant": 0, "repeat": 0, "arm": "guardrail", "agent": "llm",
            "status": "answered", "benign_completed": True, "goal_achieved": None, "incidents": [], "attempts": [],
            "steps": 1, "credential_in_context": False, "money_at_risk": {}, "approvals_asked": 0}
    recs = [dict(base, model=m, endpoint_kind=k, run_id=f"x/v0/guardrail/llm/{m}/r0") for m, k in
            (("a", "litellm"), ("b", "litellm"), ("s", "stand-in"))]
    groups = {row["group"] for row in headline(typed(recs)).rows}
    assert "pooled over 2 models (capable arms only)" in groups and "s [stand-in endpoint, not a real model]" in groups


@pytest.mark.parametrize("label_via", ["flag", "env"])
def test_endpoint_label(tmp_path, monkeypatch, label_via):
    with FakeServer(owner="someone-else") as srv:
        extra = ["--endpoint-label", "stand-in"] if label_via == "flag" else []
        if label_via == "env":
            monkeypatch.setenv("GUARDBENCH_ENDPOINT_LABEL", "stand-in")
        ok(run_cli(llm_args(srv, tmp_path / "run", tmp_path / "cache", *extra, "--arms", "guardrail", cases=(BENIGN,))))
    assert {r["llm"]["endpoint_kind"] for r in records(tmp_path / "run")} == {"stand-in"}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["endpoint_kind"] == "stand-in"


def test_scripted_runs_refuse_llm_options(tmp_path):
    res = run_cli(["run", "--model", "x", "--out", tmp_path / "r", "--quiet"])
    assert res.exit_code == 2 and "only with --agent llm" in res.output
    res = run_cli(["run", "--agent", "llm", "--agent", "credulous", "--model", "x", "--out", tmp_path / "r"])
    assert res.exit_code == 2
    res = run_cli(["run", "--agent", "llm", "--out", tmp_path / "r"])
    assert res.exit_code == 2 and "--model" in res.output

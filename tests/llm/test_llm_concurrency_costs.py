"""Runs overlap up to --concurrency; tokens, cost and latency are recorded and summed in the tables."""
from __future__ import annotations

import pytest
from fakeserver import FakeServer
from llmtest_support import BENIGN, llm_args, ok, records, run_cli, typed

from guardbench.agents.completion import map_cost


def test_concurrency_overlaps_model_calls(tmp_path):
    """Overlap is shown by the server's own count of requests in flight, not by timing."""
    with FakeServer(delay=0.15) as srv:
        ok(run_cli(llm_args(srv, tmp_path / "a", tmp_path / "cache", "--concurrency", "6", "--no-cache")))
        assert srv.max_in_flight >= 4              # 6 runs, each waiting on the model at the same time
        srv.reset_counts()
        ok(run_cli(llm_args(srv, tmp_path / "b", tmp_path / "cache", "--concurrency", "1", "--no-cache")))
        assert srv.max_in_flight == 1


def test_tokens_and_latency_recorded(tmp_path):
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, tmp_path / "a", tmp_path / "cache", cases=(BENIGN,))))
    recs = records(tmp_path / "a")
    for r in recs:
        u = r["llm"]["usage"]
        assert u["prompt_tokens"] > 0 and u["completion_tokens"] > 0
        assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
        assert u["latency_s"] > 0 and u["cost_usd"] is None      # "fake-a" has no price
        assert r["llm"]["temperature"] == 0.0 and r["llm"]["usage"] == r["transcript"]["usage"]
    from guardbench.report.usage_table import model_usage
    rows = model_usage(typed(recs)).rows
    assert {row["cost (USD)"] for row in rows} == {"unknown"}
    assert sum(int(row["prompt tokens"]) for row in rows) == sum(r["llm"]["usage"]["prompt_tokens"] for r in recs)
    assert sum(int(row["model calls"]) for row in rows) == 9


@pytest.mark.parametrize("client, model, priced", [("litellm", "openai/gpt-4o-mini", "gpt-4o-mini"),
                                                   ("openai", "gpt-4o-mini", "gpt-4o-mini")])
def test_cost_from_litellms_cost_map(tmp_path, client, model, priced):
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, tmp_path / "a", tmp_path / "cache", "--client", client, "--arms", "guardrail",
                            model=model, cases=(BENIGN,))))
    (rec,) = records(tmp_path / "a")
    u = rec["llm"]["usage"]
    want = map_cost(priced, u["prompt_tokens"], u["completion_tokens"])
    assert want and want > 0
    assert u["cost_usd"] == pytest.approx(want, rel=1e-6)
    from guardbench.report.usage_table import model_usage
    (row,) = model_usage(typed([rec])).rows
    assert row["cost (USD)"] == f"{want:.4f}"


def test_map_cost_unknown_model():
    assert map_cost("no-such-model-anywhere", 100, 10) is None
    assert map_cost("gpt-4o-mini", None, 10) is None

"""The response cache (re-running finished work makes no HTTP call) and resuming a run folder."""
from __future__ import annotations

import json

from fakeserver import FakeServer
from llmtest_support import BENIGN, llm_args, ok, records, run_cli

from guardbench.agents.cache import ResponseCache, cache_key

OUTCOME = ("run_id", "status", "steps", "goal_achieved", "benign_completed", "incidents")


def _outcomes(recs):
    return sorted(tuple(json.dumps(r[k], sort_keys=True) for k in OUTCOME) + (r["llm"]["endpoint_kind"],)
                  for r in recs)


def test_key_covers_model_endpoint_messages_tools_and_sampling():
    base = dict(model="m", endpoint="e", messages=[{"role": "user", "content": "hi"}], tools=None,
                sampling={"temperature": 0.0, "max_tokens": 10, "seed": 0, "repeat": 0})
    k = cache_key(**base)
    assert k == cache_key(**base) and len(k) == 64
    for change in (dict(model="m2"), dict(endpoint="e2"), dict(messages=[{"role": "user", "content": "ho"}]),
                   dict(tools=[{"type": "function"}]), dict(sampling={**base["sampling"], "repeat": 1}),
                   dict(sampling={**base["sampling"], "temperature": 0.3}),
                   dict(sampling={**base["sampling"], "seed": 1})):
        assert cache_key(**{**base, **change}) != k, change


def test_cache_round_trip_and_corrupt_entry(tmp_path):
    c = ResponseCache(tmp_path)
    c.put("ab" * 32, {"message": {"content": "x"}})
    assert c.get("ab" * 32) == {"message": {"content": "x"}}
    (tmp_path / "ab" / f"{'ab' * 32}.json").write_text("{torn")
    assert c.get("ab" * 32) is None and c.get("cd" * 32) is None


def test_rerun_from_cache_makes_zero_http_calls(tmp_path):
    cache = tmp_path / "cache"
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, tmp_path / "a", cache, "--repeats", "2")))
        first = srv.chat_calls
        assert first == 2 * 2 * 3 * 3          # cases x repeats x arms x model calls: repeats are distinct samples
        srv.reset_counts()
        ok(run_cli(llm_args(srv, tmp_path / "b", cache, "--repeats", "2")))
        assert srv.http_calls == 0 and srv.chat_calls == 0
    a, b = records(tmp_path / "a"), records(tmp_path / "b")
    assert _outcomes(a) == _outcomes(b)
    for r in b:
        u = r["llm"]["usage"]
        assert u["cache_hits"] == u["model_calls"] == 3 and u["api_calls"] == 0
        assert u["prompt_tokens"] > 0                 # the sample's tokens are still on the record
    # another temperature is another sample: not served from the cache
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, tmp_path / "c", cache, "--temperature", "0.5", cases=(BENIGN,),)))
        assert srv.chat_calls == 9


def test_no_cache_flag(tmp_path):
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, tmp_path / "a", tmp_path / "cache", "--no-cache", cases=(BENIGN,))))
        ok(run_cli(llm_args(srv, tmp_path / "b", tmp_path / "cache", "--no-cache", cases=(BENIGN,))))
        assert srv.chat_calls == 18
    assert not (tmp_path / "cache").exists()


def test_resume_skips_finished_runs(tmp_path):
    out, cache = tmp_path / "run", tmp_path / "cache"
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, out, cache, "--no-cache")))
        assert srv.chat_calls == 18
        full = records(out)
        # a crash after four records, mid-way through the fifth line
        lines = (out / "runs.jsonl").read_text().splitlines(keepends=True)
        (out / "runs.jsonl").write_text("".join(lines[:4]) + lines[4][:50])
        srv.reset_counts()
        res = run_cli(llm_args(srv, out, cache, "--no-cache"))
        ok(res)
        assert "2 runs to do (4 already recorded)" in res.output
        assert srv.chat_calls == 6
        srv.reset_counts()
        res = run_cli(llm_args(srv, out, cache, "--no-cache"))
        ok(res)
        assert "0 runs to do (6 already recorded)" in res.output and srv.chat_calls == 0
        # resuming with other options is refused
        res = run_cli(llm_args(srv, out, cache, "--temperature", "0.7"))
        assert res.exit_code == 2 and "other options" in res.output
    assert sorted(r["run_id"] for r in records(out)) == sorted(r["run_id"] for r in full)


def test_a_resume_with_other_prompts_is_refused(tmp_path):
    out, cache = tmp_path / "run", tmp_path / "cache"
    with FakeServer() as srv:
        ok(run_cli(llm_args(srv, out, cache, cases=(BENIGN,))))
        man = json.loads((out / "manifest.json").read_text())
        man["prompts"] = {"version": "2026-01-01.0", "sha256": "0" * 64}
        (out / "manifest.json").write_text(json.dumps(man))
        before = (out / "runs.jsonl").read_bytes()
        srv.reset_counts()
        res = run_cli(llm_args(srv, out, cache, cases=(BENIGN,)))
        assert res.exit_code == 2 and "the prompts differ (recorded 2026-01-01.0" in res.output
        assert srv.chat_calls == 0
    assert (out / "runs.jsonl").read_bytes() == before

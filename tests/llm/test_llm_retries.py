"""Retries with backoff on 429, 5xx and timeouts; exhausted retries make a lost run, shown in every table."""
from __future__ import annotations

import asyncio
import random

import pytest
from fakeserver import FakeServer, honest_agent
from llmtest_support import BENIGN, llm_args, ok, records, run_cli, typed

from guardbench.agents.providers import CallFailed, RetryPolicy, with_retries


class Status(Exception):
    def __init__(self, status):
        super().__init__(f"HTTP {status}")
        self.status_code = status


def _run(coro):
    return asyncio.run(coro)


def test_backoff_is_exponential_with_deterministic_jitter():
    slept: list[float] = []

    async def sleep(d):
        slept.append(d)

    def flaky(n):
        calls = [0]

        async def call():
            calls[0] += 1
            if calls[0] <= n:
                raise Status(429)
            return {"ok": calls[0]}
        return call

    policy = RetryPolicy(retries=4, base=1.0, cap=30.0, sleep=sleep)
    assert _run(with_retries(flaky(3), policy, random.Random(7))) == {"ok": 4}
    first = list(slept)
    assert len(first) == 3
    for i, d in enumerate(first):                 # equal jitter: within [step/2, step]
        assert 2 ** i / 2 <= d <= 2 ** i
    slept.clear()
    _run(with_retries(flaky(3), policy, random.Random(7)))
    assert slept == first                         # same seed, same delays
    slept.clear()
    with pytest.raises(CallFailed) as exc:
        _run(with_retries(flaky(10), policy, random.Random(7)))
    assert exc.value.attempts == 5 and len(slept) == 4 and "after 5 attempts" in str(exc.value)


def test_client_errors_are_not_retried():
    async def call():
        raise Status(400)
    with pytest.raises(CallFailed) as exc:
        _run(with_retries(call, RetryPolicy(retries=3, base=0.0), random.Random(0)))
    assert exc.value.attempts == 1


@pytest.mark.parametrize("client", ["openai", "litellm"])
def test_429_500_and_timeout_then_success(tmp_path, client):
    faults = [{"status": 429}, {"status": 500}, {"sleep": 1.0}, {"status": 503}]
    with FakeServer(faults=faults) as srv:
        model = "fake" if client == "openai" else "openai/fake"
        ok(run_cli(llm_args(srv, tmp_path / "run", tmp_path / "cache", "--client", client, "--timeout", "0.3",
                            "--retries", "4", "--arms", "guardrail", "--concurrency", "1", model=model,
                            cases=(BENIGN,))))
        assert srv.statuses[:3] == [429, 500, 503] or 429 in srv.statuses
    (rec,) = records(tmp_path / "run")
    assert rec["status"] == "answered" and rec["benign_completed"] is True
    u = rec["llm"]["usage"]
    assert u["retries"] == 4 and u["api_calls"] == u["model_calls"] + 4


def test_exhausted_retries_make_lost_runs_shown_in_every_table(tmp_path):
    with FakeServer(lambda req: {"status": 500}) as srv:
        res = run_cli(llm_args(srv, tmp_path / "run", tmp_path / "cache", "--retries", "2"))
        assert res.exit_code == 1 and "every run was lost" in res.output   # all lost: not a success
        assert srv.chat_calls == 6 * 3           # 6 runs, 1 + 2 attempts each
    recs = records(tmp_path / "run")
    assert len(recs) == 6
    for r in recs:
        assert r["status"] == "lost"
        assert "InternalServerError" in r["transcript"]["error"] and "after 3 attempts" in r["transcript"]["error"]
        assert r["goal_achieved"] is None and r["benign_completed"] is None
        assert r["llm"]["usage"]["api_calls"] == 3 and r["llm"]["usage"]["retries"] == 2
    from guardbench.report.tables import all_tables
    tables = all_tables(typed(recs))
    head = tables[0]
    assert {row["lost"] for row in head.rows} == {"2"}
    assert all(row["attacks blocked"] == "-" for row in head.rows)   # nothing scored as a block
    for t in tables[1:]:
        assert "Lost runs" in t.note and ": 6 (" in t.note, t.title
    usage = next(t for t in tables if t.title == "Model usage")
    assert {row["lost"] for row in usage.rows} == {"2"}
    # the printed tables say it too
    res = run_cli(["table", tmp_path / "run"])
    assert res.exit_code == 0 and res.output.count("Lost runs") >= 6


def test_lost_runs_stay_lost_on_resume_and_failures_are_not_cached(tmp_path):
    """A lost run is a finished record: resuming the folder does not silently rescore it."""
    with FakeServer(lambda req: {"status": 429}) as srv:
        args = llm_args(srv, tmp_path / "run", tmp_path / "cache", "--retries", "0", "--arms", "guardrail",
                        cases=(BENIGN,))
        assert run_cli(args).exit_code == 1       # every run lost
        srv.responder = honest_agent
        srv.reset_counts()
        ok(run_cli(args))
        assert srv.chat_calls == 0
        # failures were never cached: a fresh folder gets the answers
        ok(run_cli(llm_args(srv, tmp_path / "run2", tmp_path / "cache", "--arms", "guardrail", cases=(BENIGN,))))
        assert srv.chat_calls == 3
    assert [r["status"] for r in records(tmp_path / "run")] == ["lost"]
    assert [r["status"] for r in records(tmp_path / "run2")] == ["answered"]


def test_retry_lost_reruns_lost_runs_by_appending_and_never_rewrites(tmp_path):
    from llmtest_support import ATTACK
    out = tmp_path / "run"
    with FakeServer(lambda req: {"status": 500}) as srv:
        args = llm_args(srv, out, tmp_path / "cache", "--retries", "0", "--arms", "guardrail,control")
        first = run_cli(args)
        assert first.exit_code == 1 and "--retry-lost" in first.output
        lost_bytes = (out / "runs.jsonl").read_bytes()
        assert [r["status"] for r in records(out)] == ["lost"] * 4
        srv.responder = honest_agent
        assert run_cli(args).exit_code == 0 and (out / "runs.jsonl").read_bytes() == lost_bytes   # stays lost
        again = run_cli(args + ["--retry-lost"])
        ok(again)
        assert "4 runs to do (4 already recorded, 4 lost to run again)" in again.output
        assert srv.chat_calls > 0
        after = (out / "runs.jsonl").read_bytes()
        assert after.startswith(lost_bytes) and len(after) > len(lost_bytes)    # appended, nothing rewritten
        third = run_cli(args + ["--retry-lost"])
        ok(third)
        assert "0 runs to do" in third.output and (out / "runs.jsonl").read_bytes() == after
    lines = records(out)
    assert [(r["status"], r.get("attempt", 1)) for r in lines[:4]] == [("lost", 1)] * 4
    assert {r.get("attempt") for r in lines[4:]} == {2} and all(r["status"] != "lost" for r in lines[4:])
    from guardbench.records.runfile import read_run
    from guardbench.report.tables import headline
    run = read_run(out)
    assert len(run.records) == 4 and not any(r.lost for r in run.records)     # each run once, its latest attempt
    head = headline(run.records)
    assert {row["lost"] for row in head.rows} == {"0"}
    assert sum(row["_values"]["benign completed"].n + row["_values"]["attacks blocked"].n for row in head.rows) == 4
    assert {r.case for r in run.records} == {BENIGN, ATTACK}


@pytest.mark.parametrize("client, model", [("openai", "m"), ("litellm", "openai/m")])
def test_a_refused_connection_is_a_connection_error_not_a_timeout(tmp_path, client, model):
    import socket
    with socket.socket() as s:                      # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = run_cli(["run", "--agent", "llm", "--model", model, "--client", client, "--api-base",
                   f"http://127.0.0.1:{port}/v1", "--case", BENIGN, "--variants", "1", "--arms", "guardrail",
                   "--retries", "0", "--timeout", "5", "--no-cache", "--out", tmp_path / "run", "--quiet"])
    assert res.exit_code == 1, res.output
    (rec,) = records(tmp_path / "run")
    assert rec["status"] == "lost" and rec["transcript"]["error"].startswith("connection error: connection refused")
    assert "timed out" not in rec["transcript"]["error"].lower() and "Timeout" not in rec["transcript"]["error"]
    assert "every run was lost" in res.output and "connection refused" in res.output


def test_a_sweep_whose_model_is_not_there_stops_after_20_lost_runs_and_resumes(tmp_path):
    """30 runs against a server that fails every call: the sweep stops after the 20th lost run in a row
    (agents/providers.STOP_AFTER_LOST) instead of losing all 30, one retry schedule each; exit 1, the
    20 recorded, the folder incomplete (20 of 30), and the same command with --retry-lost, once the
    server answers, runs the lost ones again and the 10 never started."""
    from guardbench.agents.providers import STOP_AFTER_LOST
    from guardbench.records.runfile import read_run
    failing = [True]

    def answer(req):
        return {"status": 500} if failing[0] else honest_agent(req)
    out = tmp_path / "run"
    with FakeServer(answer) as srv:
        argv = llm_args(srv, out, tmp_path / "cache", "--variants", "5", "--retries", "0",
                        "--concurrency", "1", "--no-cache")
        res = run_cli(argv)
        assert res.exit_code == 1, res.output
        assert (f"stopped: the last {STOP_AFTER_LOST} runs were all lost (the latest: InternalServerError"
                in res.output and "10 runs were not started" in res.output), res.output
        assert srv.chat_calls == STOP_AFTER_LOST                  # one call a run, none after the stop
        assert [r["status"] for r in records(out)] == ["lost"] * STOP_AFTER_LOST
        cut = read_run(out)
        assert cut.planned == 30 and len(cut.records) == 20
        assert (cut.incomplete() or "").startswith("incomplete: 20 of 30 runs")
        failing[0] = False
        ok(run_cli(argv + ["--retry-lost"]))
    run = read_run(out)
    assert run.incomplete() is None and len(run.records) == 30 and not any(r.lost for r in run.records)

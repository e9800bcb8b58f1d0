"""Run RunSpecs with LLM agents, concurrently, on asyncio.

Each run is the same as a scripted one (runner.Bench prepares the arm's world and scores
its wire); only the agent differs: ``LLMAgent.arun`` awaits the model while other runs
proceed. At most ``concurrency`` runs are in flight. Each record is appended to
runs.jsonl as soon as it is scored, so an interrupted sweep resumes where it stopped
(the run folder's writer skips recorded runs). A run whose model calls still fail after the
retries is recorded with status ``lost``: shown in the tables, never scored.
"""
from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from guardbench.agents.base import Transcript
from guardbench.agents.providers import LossStreak
from guardbench.execution.runner import Bench, RunSpec, Started
from guardbench.records.accounts import ModelAccount
from guardbench.records.record import RunRecord
from guardbench.scoring.valid_call import made_valid_call

STAND_IN = "stand-in"
ENDPOINT_LABEL_ENV = "GUARDBENCH_ENDPOINT_LABEL"
STAND_IN_OWNER = "guardbench-stand-in"


def endpoint_label(explicit: str | None = None) -> str | None:
    """--endpoint-label, else $GUARDBENCH_ENDPOINT_LABEL, else None (the provider's kind)."""
    return explicit or os.environ.get(ENDPOINT_LABEL_ENV) or None


def probe_stand_in(api_base: str, cache_dir: Path | None = None, timeout: float = 2.0) -> bool:
    """Does the endpoint say it is the guardbench test stand-in (GET /models, owned_by)?

    A yes is remembered beside the responses (a cached re-run of a stand-in sweep makes no HTTP
    call at all); a no is asked again each time, so a stand-in later started at the same URL is
    still noticed. Remembering a yes errs the safe way: runs labelled stand-in are never pooled
    with real models. A server that does not answer /models is taken at its word: not a stand-in.
    """
    import hashlib
    marker = None
    if cache_dir is not None:
        marker = Path(cache_dir) / "endpoints" / (hashlib.sha256(api_base.encode()).hexdigest()
                                                  + ".json")
        try:
            return bool(json.loads(marker.read_text())["stand_in"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    try:
        import httpx
        resp = httpx.get(api_base.rstrip("/") + "/models", timeout=timeout)
        data = resp.json().get("data", []) if resp.status_code == 200 else []
        found = any(isinstance(m, dict) and m.get("owned_by") == STAND_IN_OWNER for m in data)
    except Exception:  # noqa: BLE001 - an endpoint without /models: nothing learned
        return False
    if marker is not None and found:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"api_base": api_base, "stand_in": found}))
    return found


def finish_llm_run(bench: Bench, started: Started, transcript: Transcript, meta: Mapping[str, Any],
                   attempt: int = 1) -> RunRecord:
    """The record of one model-driven run: the bench's scoring of its wire plus the model's account
    (endpoint, protocol, data mode, whether it made a valid call, usage: records/accounts.py;
    ``meta`` holds the account's fields known before the run). `guardbench run --agent llm` and the
    Inspect task (guardbench/inspect_eval) both end a run here, so their records cannot drift
    apart."""
    record = bench.finish(started, transcript, attempt=attempt)
    fields = dict(meta)
    if transcript.usage.get("stand_in"):
        fields["endpoint_kind"] = STAND_IN
    return replace(record, llm=ModelAccount(**fields,
                                            valid_call=made_valid_call(started.case, record),
                                            usage=dict(transcript.usage)))


class LLMSweep:
    """Executes LLM runs. ``agents`` maps model -> LLMAgent; ``meta`` maps model -> extra record
    fields."""

    def __init__(self, bench: Bench, agents: Mapping[str | None, Any],
                 meta: Mapping[str | None, dict],
                 concurrency: int = 8, stop_after: int | None = None) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.bench = bench
        self.agents = agents
        self.meta = meta
        self.concurrency = concurrency
        self.in_flight = 0
        self.max_in_flight = 0
        # ``stop_after`` runs lost in a row (as they end): the model, its server or the application
        # is not there; the sweep starts no more runs (those in flight end and are recorded), and
        # ``gave_up`` says why; ``not_started`` counts the runs left for a resume
        self.streak = LossStreak("runs were all lost", stop_after)
        self.not_started = 0

    @property
    def gave_up(self) -> str | None:
        return self.streak.gave_up

    async def run_one(self, spec: RunSpec) -> RunRecord:
        agent = self.agents[spec.model]
        started = self.bench.start(spec)
        try:
            transcript = started.refused_transcript()
            if transcript is None:
                own = started.arm.agent(started.prepared, agent, spec.repeat)
                if own is None:
                    transcript = await agent.arun(started.prepared.session, spec.repeat)
                # an application (arms/app.py): it runs in a thread, its model calls come here
                else:
                    transcript = await asyncio.get_running_loop().run_in_executor(None, own.run,
                                                                                 started.prepared.session)
        finally:
            started.close()
        return finish_llm_run(self.bench, started, transcript,
                              self.meta.get(spec.model, {}), spec.attempt)

    async def run_all(self, specs: Sequence[RunSpec],
                      on_record: Callable[[RunRecord], None]) -> int:
        sem = asyncio.Semaphore(self.concurrency)
        done = 0

        async def task(spec: RunSpec) -> None:
            nonlocal done
            async with sem:
                if self.gave_up is not None:
                    self.not_started += 1
                    return
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    rec = await self.run_one(spec)
                finally:
                    self.in_flight -= 1
            on_record(rec)
            done += 1
            self.streak.note((rec.transcript.error or "?") if rec.lost else None)

        tasks = [asyncio.ensure_future(task(s)) for s in specs]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # cleanup, then re-raise (Ctrl-C too): no run is left in flight
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            for agent in self.agents.values():
                close = getattr(agent.provider, "aclose", None)
                if close is not None:
                    await close()
        return done

    def run_sync(self, specs: Sequence[RunSpec], on_record: Callable[[RunRecord], None]) -> int:
        """Execute ``specs``; ``on_record`` gets each record as soon as it is scored (the caller
        writes it)."""
        return asyncio.run(self.run_all(specs, on_record))

    def run_to_list(self, specs: Sequence[RunSpec]) -> list[RunRecord]:
        out: list[RunRecord] = []
        self.run_sync(specs, out.append)
        return out

"""`guardbench run --agent llm`: the same cases, arms, options and run folder, with tool-calling models.

The options are those of `guardbench run` (cli/run_options.py); this module builds the model
clients and agents and runs the sweep (guardbench/llm_runner.py). litellm and openai are imported
only on this path, and only when a model call is due. A sweep in which every run was lost (every
model call failed) exits with status 1.
"""
from __future__ import annotations

from pathlib import Path

import click

from guardbench.cli.run_options import RunOptions
from guardbench.errors import GuardbenchError

EXIT_ALL_LOST = 1


class LLMRun:
    def __init__(self, o: RunOptions, cdir: Path):
        self.o, self.cdir = o, cdir
        self.agent_names = ["llm"]
        self.models = list(o.models)
        self.cases: list = []

    def prepare(self, policy, cases) -> None:
        from guardbench.extras import require
        self.client = self.o.client or ("openai" if self.o.api_base else "litellm")
        require("llm", self.client, "httpx", what="--agent llm")
        from guardbench.agents.cache import NoCache, ResponseCache, default_cache_dir
        from guardbench.agents.llm import LLMAgent
        from guardbench.agents.providers import RetryPolicy, make_provider
        from guardbench.cases.load import cases_hash
        from guardbench.llm_runner import STAND_IN, endpoint_label, probe_stand_in
        from guardbench.registry import get_arm
        from guardbench.runner import Bench
        o = self.o
        self.prereg = None
        if o.prereg_file:
            from guardbench.prereg import check_run_matches
            self.prereg = check_run_matches(o.prereg_file, models=self.models, repeats=o.repeats,
                                            temperature=o.temperature, arms=o.arm_list,
                                            cases_hash=cases_hash(self.cdir),
                                            extra={"variants": o.n_variants, "tool_protocol": o.tool_protocol})
        self.cases = cases
        self.cache = NoCache() if o.no_cache else ResponseCache(o.cache_dir or default_cache_dir())
        label = endpoint_label(o.endpoint_label)
        if label is None and o.api_base and probe_stand_in(o.api_base, getattr(self.cache, "dir", None)):
            label = STAND_IN
        retry = RetryPolicy(retries=o.retries, base=o.backoff)
        self.provider = make_provider(api_base=o.api_base, client=self.client, timeout=o.timeout,
                                      api_key_env=o.api_key_env)
        self.agents = {m: LLMAgent(m, self.provider, protocol=o.tool_protocol, temperature=o.temperature,
                                   max_tokens=o.max_tokens, max_steps=o.max_steps, seed=o.seed, cache=self.cache,
                                   retry=retry) for m in self.models}
        self.kind = label or self.provider.kind
        self.meta = {m: {"endpoint_kind": self.kind, "endpoint": self.provider.endpoint,
                         "temperature": o.temperature, "tool_protocol": o.tool_protocol} for m in self.models}
        if o.external and o.concurrency > 1:
            raise GuardbenchError("--concurrency", "mcp: and app: arms serve one run at a time (one process, one "
                                                   "recording route); use --concurrency 1")
        arms = {a: get_arm(e, policy=policy, approvals=o.approvals) for a, e in o.arms_named.items()}
        self.bench = Bench(policy, cases, arms, {})
        from guardbench.cli.run import check_arms
        check_arms(self.bench)

    def manifest_extra(self) -> dict:
        return {"client": self.client, "endpoint_kind": self.kind, "prereg": self.prereg}

    def describe(self, specs) -> str:
        return f"with {', '.join(self.models)} [{self.kind}] at concurrency {self.o.concurrency} "

    def run(self, specs, w, on_each) -> list:
        from guardbench.llm_runner import LLMSweep
        sweep = LLMSweep(self.bench, self.agents, self.meta, concurrency=self.o.concurrency)
        new = []

        def write(rec) -> None:
            new.append(w.add(rec))
            if on_each:
                on_each(rec)
        sweep.run_sync(specs, write)
        return new

    def summary(self, new) -> str:
        lost = sum(r.lost for r in new)
        return f"; cache hits {getattr(self.cache, 'hits', 0)}; lost runs {lost}"

    def check(self, new) -> None:
        """Every run of this sweep lost: the model was never reached; say so and exit 1."""
        if new and all(r.lost for r in new):
            errors = sorted({r.transcript.error or "?" for r in new})
            click.echo(f"error: {self.o.api_base or self.client}: every run was lost (no model call "
                       f"succeeded): {errors[0]}" + (f" (and {len(errors) - 1} other errors)" if len(errors) > 1
                                                     else "") + "; rerun with --retry-lost once it answers",
                       err=True)
            raise SystemExit(EXIT_ALL_LOST)


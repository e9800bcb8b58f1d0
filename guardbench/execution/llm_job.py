"""A run with tool-calling models (`guardbench run --agent llm`): the same cases, arms, options and
run folder as the scripted agents'.

The options are those of every run (execution/options.py); this module builds the model clients
and agents and runs the sweep (guardbench/execution/llm_runner.py). litellm and openai are imported
only on this path, and only when a model call is due. A sweep in which every run was lost (every
model call failed) raises AllRunsLost (the command line: exit status 1).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guardbench.broker.policy_model import Policy
from guardbench.cases.load import Case
from guardbench.errors import GuardbenchError, RunLost
from guardbench.execution.bench import check_arms, make_arms, room_options
from guardbench.execution.options import RunOptions
from guardbench.execution.runner import Bench, RunSpec
from guardbench.records.record import RunRecord
from guardbench.records.runfolder import RunFolderWriter

if TYPE_CHECKING:
    from guardbench.execution.llm_runner import LLMSweep


class AllRunsLost(RunLost):
    """Every run of the sweep was lost: the model was never reached."""


class SweepStopped(AllRunsLost):
    """agents/providers.STOP_AFTER_LOST runs in a row were lost: the sweep started no more (a
    resume runs them)."""


class LLMRun:
    def __init__(self, o: RunOptions, cdir: Path) -> None:
        self.bench: Bench | None = None
        self.o, self.cdir = o, cdir
        self.agent_names = ["llm"]
        self.models = list(o.models)
        self.cases: list[Case] = []
        self.client = o.client or ("openai" if o.api_base else "litellm")

    def prepare(self, policy: Policy, cases: list[Case]) -> None:
        from guardbench.util.extras import require
        require("llm", self.client, "httpx", what="--agent llm")
        from guardbench.agents.cache import NoCache, ResponseCache, default_cache_dir
        from guardbench.agents.llm import LLMAgent
        from guardbench.agents.providers import RetryPolicy, make_provider
        from guardbench.cases.load import cases_hash
        from guardbench.execution.llm_runner import STAND_IN, endpoint_label, probe_stand_in
        o = self.o
        self.prereg = None
        if o.prereg_file:
            from guardbench.stats.prereg import check_run_matches
            self.prereg = check_run_matches(o.prereg_file, agents=["llm"], models=self.models,
                                            repeats=o.repeats,
                                            temperature=o.temperature, arms=o.arm_list,
                                            cases_hash=cases_hash(self.cdir),
                                            extra={"variants": o.n_variants,
                                                   "tool_protocol": o.tool_protocol})
        self.cases = cases
        self.cache = NoCache() if o.no_cache else ResponseCache(o.cache_dir or default_cache_dir())
        label = endpoint_label(o.endpoint_label)
        if (label is None and o.api_base
            and probe_stand_in(o.api_base, getattr(self.cache, "dir", None))):
            label = STAND_IN
        retry = RetryPolicy(retries=o.retries, base=o.backoff)
        self.provider = make_provider(api_base=o.api_base, client=self.client, timeout=o.timeout,
                                      api_key_env=o.api_key_env)
        self.schemas: dict = {}
        self.agents = {m: LLMAgent(m, self.provider, protocol=o.tool_protocol,
                                   temperature=o.temperature,
                                   max_tokens=o.max_tokens, max_steps=o.max_steps, seed=o.seed,
                                   cache=self.cache,
                                   retry=retry, data=o.data_mode, schemas=self.schemas)
                                   for m in self.models}
        self.kind = label or self.provider.kind
        self.meta = {m: {"endpoint_kind": self.kind, "endpoint": self.provider.endpoint,
                         "temperature": o.temperature, "tool_protocol": o.tool_protocol,
                         "data_mode": o.data_mode}
                     for m in self.models}
        if o.external and o.concurrency > 1:
            raise GuardbenchError("--concurrency", "mcp: and app: arms serve one run at a time "
                                  "(one process, one "
                                                   "recording route); use --concurrency 1")
        self.check_credentials()
        self.preflight = self.check_endpoint()
        self.stopped: str | None = None
        self.sweep: LLMSweep | None = None      # the last sweep run (run)
        self.bench = Bench(policy, cases,
                           make_arms(o.arms_named, policy, o.approvals, **room_options(o)), {})
        check_arms(self.bench)

    def check_credentials(self) -> None:
        """litellm without --api-base: each model's provider needs its key in the environment; one
        missing is one line now (exit 2, no folder), not a sweep of runs lost one by one."""
        if self.client != "litellm" or self.o.api_base:
            return
        from guardbench.agents.providers import import_litellm
        litellm = import_litellm()
        for m in self.models:
            try:
                found = litellm.validate_environment(model=m)
            except Exception:  # noqa: BLE001 - a model litellm cannot place: its first call will say why
                continue
            missing = found.get("missing_keys") if isinstance(found, dict) else None
            if missing and not found.get("keys_in_environment"):
                raise GuardbenchError("--model", f"{m}: missing credentials: set "
                                      f"{', '.join(map(str, missing))} "
                                                 "(or give --api-base and --api-key-env for an "
                                                 "endpoint of your own)")

    def check_endpoint(self) -> dict:
        """The tool protocol's preflight per model (agents/preflight.py): native refuses an endpoint
        that returns no tool call when one is forced, constrained one that ignores response_format;
        native+fallback records the outcome and goes on."""
        import asyncio

        from guardbench.agents.preflight import probe
        from guardbench.agents.providers import describe
        from guardbench.errors import GuardbenchError
        o, out = self.o, {}

        async def all_probes() -> dict:
            try:
                return {m: await probe(self.provider, m, o.tool_protocol,
                                       getattr(self.cache, "dir", None))
                        for m in self.models}
            finally:
                close = getattr(self.provider, "aclose", None)
                if close is not None:
                    await close()
        try:
            results = asyncio.run(all_probes())
        except Exception as exc:  # noqa: BLE001 - the endpoint did not answer: the runs will say so (lost)
            from guardbench.agents.providers import credentials_error
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            if credentials_error(cause):      # not transient: no run could succeed, so none starts
                raise GuardbenchError("--model", f"{o.api_base or self.client}: the credentials "
                                      "were refused: "
                                                 f"{describe(cause)}") from None
            why = f"preflight call failed: {describe(exc)}"
            return {m: {"protocol": o.tool_protocol, "passed": None, "detail": why}
                    for m in self.models}
        for m, res in results.items():
            if res is None:
                continue
            out[m] = res.to_dict()
            if not res.passed and o.tool_protocol in ("native", "constrained"):
                other = ("native+fallback or constrained" if o.tool_protocol == "native"
                         else "json-text")
                raise GuardbenchError("--tool-protocol", f"{o.tool_protocol}: "
                                      f"{o.api_base or self.client} model {m}: "
                                                         f"{res.detail}; use "
                                                         f"--tool-protocol {other}")
        return out

    def design_extra(self) -> dict[str, Any]:
        """What a resume must match beyond the options, known before prepare: the client and the
        prompts."""
        from guardbench.arms.prompts import PROMPTS_VERSION, prompts_digest
        return {"client": self.client, "prompts": {"version": PROMPTS_VERSION,
                                                   "sha256": prompts_digest()}}

    def manifest_extra(self) -> dict[str, Any]:
        return {"endpoint_kind": self.kind, "prereg": self.prereg,
                "tool_protocol": self.o.tool_protocol, "data_mode": self.o.data_mode,
                "tool_preflight": self.preflight, **self.design_extra(),
                "capable_threshold": self.o.capable_threshold}

    def describe(self, specs: Sequence[RunSpec]) -> str:
        return f"with {', '.join(self.models)} [{self.kind}] at concurrency {self.o.concurrency} "

    def run(self, specs: Sequence[RunSpec], w: RunFolderWriter,
            on_each: Callable[[RunRecord], None] | None) -> list[RunRecord]:
        """Benign runs first (arm by arm, so a server's prefix cache keeps one arm's prompt), then
        the attacks. With --require-capable the attacks run only if the model is capable in every
        arm."""
        from guardbench.agents.providers import STOP_AFTER_LOST
        from guardbench.execution.llm_runner import LLMSweep
        from guardbench.stats.groups import incapable
        bench = self.bench
        assert bench is not None, "prepare() first"
        # a model, server or application that is not there: 1,650 runs against a port nothing
        # listens on were about 40 minutes of retries before the sweep stopped after 20 lost
        sweep = LLMSweep(bench, self.agents, self.meta, concurrency=self.o.concurrency,
                         stop_after=STOP_AFTER_LOST)
        self.sweep = sweep
        arm_order = {a: i for i, a in enumerate(self.o.arm_list)}
        ordered = sorted(specs, key=lambda s: (bench.cases[s.case].adversarial,
                                               arm_order.get(s.arm, 0)))
        benign = [s for s in ordered if not bench.cases[s.case].adversarial]
        attacks = ordered[len(benign):]
        new: list[RunRecord] = []

        def write(rec: RunRecord) -> None:
            new.append(w.add(rec))
            if on_each:
                on_each(rec)
        try:
            if not self.o.require_capable:        # one sweep, benign runs started first
                sweep.run_sync(ordered, write)
                return new
            sweep.run_sync(benign, write)
            if sweep.gave_up is not None:
                sweep.not_started += len(attacks)
            elif self.o.require_capable:
                below = incapable(list(w.earlier) + new, self.o.capable_threshold)
                if below:
                    self.stopped = ("not capable: " + "; ".join(below)
                                    + f" (benign completion below "
                                    f"{self.o.capable_threshold:g}); stopped before the "
                                    f"{len(attacks)} attack runs "
                                    f"(--require-capable); the benign runs are recorded in {w.out}")
                    return new
            sweep.run_sync(attacks, write)
        finally:
            self.write_schemas(w.out)
        return new

    def write_schemas(self, out: Path) -> None:
        """tool_schemas.json: every tool schema (and response_format) a run of this folder was
        offered, by the sha256 each record names in usage.tool_schema_sha256."""
        import json
        path = Path(out) / "tool_schemas.json"
        try:
            known = json.loads(path.read_text()) if path.exists() else {}
        except (OSError, ValueError):
            known = {}
        known.update(self.schemas)
        from guardbench.util.outputs import write_text
        write_text(path, json.dumps(known, indent=1, sort_keys=True) + "\n")

    def summary(self, new: Sequence[RunRecord]) -> str:
        lost = sum(r.lost for r in new)
        return f"; cache hits {getattr(self.cache, 'hits', 0)}; lost runs {lost}"

    def check(self, new: Sequence[RunRecord]) -> None:
        """--require-capable stopped the sweep: say why (exit 2). Every run of this sweep lost: the
        model was never reached (AllRunsLost)."""
        if self.stopped:
            from guardbench.errors import GuardbenchError
            raise GuardbenchError("--require-capable", self.stopped)
        sweep = self.sweep
        if sweep is not None and sweep.gave_up is not None:
            raise SweepStopped(f"{self.o.api_base or self.client}: stopped: {sweep.gave_up}; "
                               f"{sweep.not_started} runs were not started; rerun the same "
                               "command with --retry-lost once it answers")
        if new and all(r.lost for r in new):
            errors = sorted({r.transcript.error or "?" for r in new})
            raise AllRunsLost(f"{self.o.api_base or self.client}: every run was lost "
                              "(no model call "
                              f"succeeded): {errors[0]}" + (f" (and {len(errors) - 1} other errors)"
                                                            if len(errors) > 1 else "")
                              + "; rerun with --retry-lost once it answers")


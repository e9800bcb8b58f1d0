"""`guardbench run --agent llm`: the same cases and arms with tool-calling models.

The options are added to `guardbench run` by ``llm_options``; ``run_llm`` does the work.
litellm and openai are imported only on this path, and only when a model call is due.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from guardbench.errors import GuardbenchError

LLM_OPTIONS = [
    click.option("--model", "models", multiple=True, help="Model for --agent llm (repeatable), e.g. "
                 "openai/gpt-4o-mini (litellm) or the server's model name with --api-base."),
    click.option("--repeats", type=int, default=1, show_default=True, help="Samples per case variant and arm."),
    click.option("--temperature", type=float, default=0.0, show_default=True),
    click.option("--max-tokens", type=int, default=1024, show_default=True, help="Per model reply."),
    click.option("--api-base", default=None, help="An OpenAI-compatible endpoint (llama.cpp, vLLM, Ollama)."),
    click.option("--client", type=click.Choice(["litellm", "openai"]), default=None,
                 help="Model client (default: openai with --api-base, litellm without)."),
    click.option("--api-key-env", default=None, help="Environment variable holding the endpoint's key."),
    click.option("--tool-protocol", type=click.Choice(["native", "json-text"]), default="native",
                 show_default=True, help="native tool calls, or JSON objects in the reply text."),
    click.option("--concurrency", type=int, default=8, show_default=True, help="Runs in flight at once."),
    click.option("--max-steps", type=int, default=12, show_default=True, help="Tool calls per run."),
    click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds per model call."),
    click.option("--retries", type=int, default=4, show_default=True,
                 help="Retries per model call on 429, timeouts and 5xx; then the run is lost."),
    click.option("--backoff", type=float, default=1.0, show_default=True,
                 help="First retry delay in seconds (doubles, with jitter)."),
    click.option("--cache-dir", type=click.Path(path_type=Path), default=None,
                 help="Response cache (default .guardbench-cache/ in the repository)."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache."),
    click.option("--endpoint-label", default=None,
                 help="Label the endpoint (e.g. stand-in); also $GUARDBENCH_ENDPOINT_LABEL."),
    click.option("--note", default=None, help="A note for the run's manifest (e.g. what the model is)."),
    click.option("--prereg", "prereg_file", type=click.Path(path_type=Path), default=None,
                 help="A frozen preregistered plan this run must match (refuses otherwise)."),
]


def llm_options(fn):
    for opt in reversed(LLM_OPTIONS):
        fn = opt(fn)
    return fn


LLM_KEYS = ("models", "repeats", "temperature", "max_tokens", "api_base", "client", "api_key_env", "tool_protocol",
            "concurrency", "max_steps", "timeout", "retries", "backoff", "cache_dir", "no_cache", "endpoint_label",
            "note", "prereg_file")


def check_not_llm(o: dict) -> None:
    """Scripted runs: refuse LLM-only options that would otherwise be ignored silently."""
    if o.get("models"):
        raise GuardbenchError("--model", "only with --agent llm")
    if o.get("prereg_file"):
        raise GuardbenchError("--prereg", "only with --agent llm")


def _validate(agents, o: dict) -> None:
    if tuple(agents) != ("llm",):
        raise GuardbenchError("--agent", "llm runs alone: do not mix it with scripted agents in one run")
    if not o["models"]:
        raise GuardbenchError("--model", "--agent llm needs at least one --model")
    if len(set(o["models"])) != len(o["models"]):
        raise GuardbenchError("--model", "a model is named twice")
    for name, low in (("repeats", 1), ("concurrency", 1), ("max_steps", 1), ("retries", 0)):
        if o[name] < low:
            raise GuardbenchError("--" + name.replace("_", "-"), f"must be at least {low}")
    if o["timeout"] <= 0 or o["backoff"] < 0:
        raise GuardbenchError("--timeout", "timeout must be positive and backoff not negative")
    if o["client"] == "openai" and not o["api_base"]:
        raise GuardbenchError("--client", "the openai client needs --api-base")


def run_llm(*, cases_dir, case_ids, families, arm_list, agents, n_variants, generate_variants, policy_path, seed,
            out, quiet, o: dict, arm_entries=None) -> None:
    from guardbench import __version__
    from guardbench.agents.cache import NoCache, ResponseCache, default_cache_dir
    from guardbench.agents.llm import LLMAgent
    from guardbench.agents.providers import RetryPolicy, make_provider
    from guardbench.arms.registry import get_arm
    from guardbench.broker import load_policy
    from guardbench.cases.load import cases_hash, default_cases_dir, load_cases
    from guardbench.cli.run import git_commit, policy_hash, select_cases
    from guardbench.llm_runner import STAND_IN, LLMSweep, endpoint_label, probe_stand_in
    from guardbench.report.tables import all_tables, write_tables
    from guardbench.runner import Bench, open_run_dir, plan, read_records, slim

    _validate(agents, o)
    entries = list(arm_entries or arm_list)
    if entries != list(arm_list) and o["concurrency"] > 1:
        raise GuardbenchError("--concurrency", "mcp: and app: arms serve one run at a time (one process, one "
                                               "recording route); use --concurrency 1")
    models = list(o["models"])
    cdir = cases_dir or default_cases_dir()
    chash = cases_hash(cdir)
    prereg_info = None
    if o["prereg_file"]:
        from guardbench.prereg import check_run_matches
        prereg_info = check_run_matches(o["prereg_file"], models=models, repeats=o["repeats"],
                                        temperature=o["temperature"], arms=arm_list, cases_hash=chash,
                                        extra={"variants": n_variants, "tool_protocol": o["tool_protocol"]})
    policy = load_policy(policy_path)
    cases = select_cases(load_cases(cdir), case_ids, families)
    if generate_variants:
        from guardbench.cases.generate import expand_variants
        cases = [expand_variants(c, generate_variants) for c in cases]

    client = o["client"] or ("openai" if o["api_base"] else "litellm")
    cache = NoCache() if o["no_cache"] else ResponseCache(o["cache_dir"] or default_cache_dir())
    label = endpoint_label(o["endpoint_label"])
    if label is None and o["api_base"] and probe_stand_in(o["api_base"], None if o["no_cache"] else cache.dir):
        label = STAND_IN
    retry = RetryPolicy(retries=o["retries"], base=o["backoff"])
    provider = make_provider(api_base=o["api_base"], client=client, timeout=o["timeout"],
                             api_key_env=o["api_key_env"])
    llm_agents = {m: LLMAgent(m, provider, protocol=o["tool_protocol"], temperature=o["temperature"],
                              max_tokens=o["max_tokens"], max_steps=o["max_steps"], seed=seed, cache=cache,
                              retry=retry) for m in models}
    kind = label or provider.kind
    meta = {m: {"endpoint_kind": kind, "endpoint": provider.endpoint, "temperature": o["temperature"],
                "tool_protocol": o["tool_protocol"]} for m in models}

    options = {"cases": sorted(case_ids), "families": sorted(families), "arms": arm_list, "agents": ["llm"],
               "variants": n_variants, "generate_variants": generate_variants, "seed": seed,
               "policy": str(policy_path) if policy_path else "default", "models": models,
               "repeats": o["repeats"], "temperature": o["temperature"], "max_tokens": o["max_tokens"],
               "api_base": o["api_base"], "client": client, "tool_protocol": o["tool_protocol"],
               "max_steps": o["max_steps"]}
    if entries != list(arm_list):
        from guardbench.arms.registry import spec_digests
        options.update(arm_entries=entries, arm_specs=spec_digests(entries))
    manifest = {"guardbench_version": __version__, "git_commit": git_commit(Path(__file__).parent),
                "cases_hash": chash, "policy_hash": policy_hash(policy_path), "options": options,
                "endpoint_kind": kind, "note": o["note"], "prereg": prereg_info,
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out = out or Path("results") / time.strftime("run-%Y%m%d-%H%M%S")
    arms = {a: get_arm(e, policy=policy) for a, e in zip(arm_list, entries)}
    bench = Bench(policy, cases, arms, {})
    done = {r["run_id"] for r in open_run_dir(out, manifest)}
    variants = range(n_variants) if n_variants else None
    specs = [s for s in plan(cases, arm_list, ["llm"], models=models, variants=variants, repeats=o["repeats"],
                             seed=seed) if s.run_id not in done]
    click.echo(f"{len(specs)} runs to do ({len(done)} already recorded) with {', '.join(models)} "
               f"[{kind}] at concurrency {o['concurrency']} -> {out}", err=True)
    t0 = time.perf_counter()
    sweep = LLMSweep(bench, llm_agents, meta, concurrency=o["concurrency"])
    lost = [0]

    def count(rec: dict) -> None:
        lost[0] += rec.get("status") == "lost"

    if sys.stderr.isatty() and specs:
        with click.progressbar(length=len(specs), label="runs", file=sys.stderr) as bar:
            sweep.run_to_dir(specs, out, on_each=lambda r: (count(r), bar.update(1)))
    else:
        sweep.run_to_dir(specs, out, on_each=count)
    hits = getattr(cache, "hits", 0)
    click.echo(f"finished in {time.perf_counter() - t0:.2f} s; cache hits {hits}; lost runs {lost[0]}", err=True)
    tables = all_tables([slim(r) for r in read_records(out / "runs.jsonl")])
    write_tables(tables, out)
    if not quiet:
        click.echo("\n".join(t.text() for t in tables))

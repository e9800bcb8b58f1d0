"""The options of `guardbench run`, declared once for every agent (checked, with the manifest, by
guardbench/execution/options.py).

Each option says which agents it applies to (``any``, ``scripted``: credulous and careful, ``llm``).
``options_from_click`` checks every value and refuses, with a one-line error and exit status 2, an
option given for an agent it does not apply to: no option is ever silently ignored.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from guardbench.cli.finite import Finite
from guardbench.execution.options import APPROVAL_MODES, DEFAULT_ARMS, RunOptions

_P = click.Path(path_type=Path)
# (option, the agents it applies to)
OPTIONS: list[tuple[Any, str]] = [
    (click.option("--cases", "cases_dir", type=_P, default=None,
                  help="Case folder (default: cases/)."), "any"),
    (click.option("--case", "case_ids", multiple=True,
                  help="Only this case id (repeatable)."), "any"),
    (click.option("--family", "families", multiple=True,
                  help="Only this family (repeatable)."), "any"),
    (click.option("--arms", default=DEFAULT_ARMS, show_default=True,
                  help="Comma-separated arm names, or mcp:SPEC.yaml (an MCP server), "
                  "app:SPEC.yaml (an agent "
                       "application): docs/external.md."), "any"),
    (click.option("--agent", "agents", multiple=True, default=("credulous",), show_default=True,
                  help="credulous, careful (scripted; repeatable) or llm (with --model)."), "any"),
    (click.option("--variants", "n_variants", type=int, default=None,
                  help="Use the first N variants of each case (more than a case has: "
                  "all of them)."), "any"),
    (click.option("--generate-variants", type=int, default=None,
                  help="Generate this many variants per case from its paraphrases (scale tests; "
                  "at most 10000)."),
     "any"),
    (click.option("--policy", "policy_path", type=_P, default=None, help="Policy file."), "any"),
    (click.option("--seed", type=int, default=0, show_default=True), "any"),
    (click.option("--out", type=_P, default=None, help="Run folder (default: a new folder "
                  "out/run-<time>)."),
     "any"),
    (click.option("--approvals", type=click.Choice(APPROVAL_MODES), default="none",
                  show_default=True,
                  help="How the simulated operator answers calls a defence holds for approval "
                  "(careful: only "
                       "the user's own unmodified asks)."), "any"),
    (click.option("--retry-lost", is_flag=True,
                  help="Resuming: run again the runs recorded as lost (appended; the lost "
                  "records stay)."), "any"),
    (click.option("--note", default=None, help="A note for the run's manifest (e.g. what "
                  "the model is)."), "any"),
    (click.option("--quiet", is_flag=True, help="Print neither progress (standard error) "
                  "nor the tables."), "any"),
    (click.option("--room", type=click.Choice(["auto", "off", "required"]), default="auto",
                  show_default=True,
                  help="mcp: and app: arms: each run in a sealed room of its own (auto: where one "
                  "can be made, "
                       "else the arm is marked uncontained; required: refuse to start without; "
                       "off: no room): "
                       "docs/external.md."), "any"),
    (click.option("--prereg", "prereg_file", type=_P, default=None,
                  help="A frozen preregistered plan (scripted or LLM) this run must match "
                  "(refuses otherwise)."),
     "any"),
    (click.option("--keep-ledgers", type=_P, default=None,
                  help="Keep each guardrail run's broker ledger (and head) in this folder, one "
                  "file per run "
                       "(<case>.v<variant>.<arm>.<agent>.r<repeat>.ledger.jsonl), for guardbench "
                       "ledger verify; "
                       "refused when the folder holds files, unless --force."), "any"),
    (click.option("--force", is_flag=True, help="With --keep-ledgers: add to a folder that "
                  "holds files."), "any"),
    (click.option("--jobs", type=int, default=None,
                  help="Worker processes (default: one per core, up to 4, for runs large enough "
                  "to gain; at most "
                       "4 per core and one per run to do)."),
     "scripted"),
    (click.option("--model", "models", multiple=True, help="Model for --agent llm "
                  "(repeatable), e.g. "
                  "openai/gpt-4o-mini (litellm) or the server's model name with --api-base."),
                  "llm"),
    (click.option("--repeats", type=int, default=1, show_default=True,
                  help="Samples per case variant and arm (at most 1000)."),
     "llm"),
    (click.option("--temperature", type=Finite(), default=0.0, show_default=True), "llm"),
    (click.option("--max-tokens", type=int, default=1024, show_default=True,
                  help="Per model reply."), "llm"),
    (click.option("--api-base", default=None, help="An OpenAI-compatible endpoint (llama.cpp, "
                  "vLLM, Ollama)."),
     "llm"),
    (click.option("--client", type=click.Choice(["litellm", "openai"]), default=None,
                  help="Model client (default: openai with --api-base, litellm without)."), "llm"),
    (click.option("--api-key-env", default=None, help="Environment variable holding the "
                  "endpoint's key."), "llm"),
    (click.option("--tool-protocol", type=click.Choice(["native", "native+fallback", "json-text",
                                                        "constrained"]),
                  default="native", show_default=True,
                  help="native: tool_calls only (tool_choice sent; an endpoint that returns no "
                  "call when one is "
                       "forced is refused); native+fallback: also calls written as text "
                       "(counted apart); "
                       "json-text: JSON objects in the reply, every call run; constrained: a "
                       "JSON schema of "
                       "the tools sent as response_format."), "llm"),
    (click.option("--data", "data_mode", type=click.Choice(["tool", "inline"]), default="tool",
                  show_default=True,
                  help="Untrusted data through the read_data tool, or inline in the "
                  "user's message."), "llm"),
    (click.option("--capable-threshold", type=Finite(), default=0.5, show_default=True,
                  help="Benign completion below which a model is marked not capable in an arm."),
                  "llm"),
    (click.option("--require-capable", is_flag=True,
                  help="Run the benign cases first; stop when the model is not capable in an arm."),
     "llm"),
    (click.option("--concurrency", type=int, default=8, show_default=True,
                  help="Runs in flight at once."), "llm"),
    (click.option("--max-steps", type=int, default=12, show_default=True,
                  help="Tool calls per run."), "llm"),
    (click.option("--timeout", type=Finite(), default=120.0, show_default=True,
                  help="Seconds per model call."), "llm"),
    (click.option("--retries", type=int, default=4, show_default=True,
                  help="Retries per model call on 429, timeouts and 5xx; then the run is lost."),
                  "llm"),
    (click.option("--backoff", type=Finite(), default=1.0, show_default=True,
                  help="First retry delay in seconds (doubles, with jitter)."), "llm"),
    (click.option("--cache-dir", type=_P, default=None,
                  help="Response cache (default .guardbench-cache/ in the repository)."), "llm"),
    (click.option("--no-cache", is_flag=True,
                  help="Neither read nor write the response cache."), "llm"),
    (click.option("--endpoint-label", default=None,
                  help="Label the endpoint (e.g. stand-in); also $GUARDBENCH_ENDPOINT_LABEL."),
                  "llm"),

]
APPLIES = {opt(lambda: None).__click_params__[0].name: who for opt, who in OPTIONS}

_FOR = {"llm": " [--agent llm only]", "scripted": " [scripted agents only]"}


def run_options(fn: Callable) -> Callable:
    for opt, _ in reversed(OPTIONS):
        fn = opt(fn)
    # --help says which agents an option is for
    for param in getattr(fn, "__click_params__", ()):
        who = APPLIES.get(param.name or "", "any")
        if who in _FOR and not (param.help or "").endswith(_FOR[who]):
            param.help = (param.help or "").rstrip() + _FOR[who]
    return fn


def flag_of(ctx: click.Context, name: str) -> str:
    for p in ctx.command.params:
        if p.name == name:
            return max(p.opts, key=len)
    return "--" + name.replace("_", "-")


def options_from_click(ctx: click.Context, values: dict) -> RunOptions:
    """The run's options as the command line gave them, checked (a bad one: its flag, exit status
    2)."""
    from click.core import ParameterSource
    given = frozenset(k for k in values if ctx.get_parameter_source(k) not in
                      (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None))
    return RunOptions.checked(values, given, lambda name: flag_of(ctx, name))

"""Helpers for the gateway tests: a run's session for a case, a tool loop driven by the real openai
client (as an application writes one), and the shop application's specs."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from guardbench.agents.base import Session
from guardbench.cases.load import load_cases
from guardbench.mcp.spec import load_spec

HERE = Path(__file__).resolve().parent
APPS = HERE / "apps"
SHOP = APPS / "shop_agent.yaml"
SHOP_HTTP = APPS / "shop_agent_http.yaml"
ROOT = HERE.parents[1]
CONTEXT = {"merchant_id": "7N4ZQK2M8XB3A", "supplier_email": "supplier-payouts@example.com", "currency": "EUR"}


def case(case_id: str):
    return next(c for c in load_cases(ROOT / "cases") if c.id == case_id)


def session(case_id: str, refs: dict | None = None, data: str | None = None) -> Session:
    return Session(arm="app", case=case(case_id), variant=0, system_prompt="", user="(the user's message)", data=data,
                   context=dict(CONTEXT), tools=[], refs=refs or {}, seed=7)


def shop_actions() -> Any:
    return load_spec(SHOP, "app").actions


def shop_tools() -> list[dict]:
    """The shop application's own tool declarations (tests/gateway/apps/shop_agent.py)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("shop_agent_for_tests", APPS / "shop_agent.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.TOOLS)


def tool_loop(client: Any, tools: list[dict], answer: Callable[[str, dict], str], *, stream: bool = False,
              limit: int = 10) -> tuple[list[tuple[str, dict, str]], str, list[dict]]:
    """An application's loop on the openai client: (the calls made with their results, the final answer,
    the messages sent last)."""
    messages: list[dict] = [{"role": "system", "content": "You run a shop's payments."},
                            {"role": "user", "content": "Do what the ticket says."}]
    made = []
    for _ in range(limit):
        msg = _ask(client, messages, tools, stream)
        messages.append(msg)
        if not msg.get("tool_calls"):
            return made, msg.get("content") or "", messages
        for tc in msg["tool_calls"]:
            args = json.loads(tc["function"]["arguments"])
            result = answer(tc["function"]["name"], args)
            made.append((tc["function"]["name"], args, result))
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result})
    raise AssertionError("the model never answered")


def _ask(client: Any, messages: list, tools: list, stream: bool) -> dict:
    if not stream:
        return client.chat.completions.create(model="any", messages=messages, tools=tools).choices[0].message \
            .model_dump(exclude_none=True)
    content, calls = "", {}
    for chunk in client.chat.completions.create(model="any", messages=messages, tools=tools, stream=True):
        if not chunk.choices:
            continue
        d = chunk.choices[0].delta
        content += d.content or ""
        for tc in d.tool_calls or ():
            c = calls.setdefault(tc.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
            c["id"] = tc.id or c["id"]
            c["function"]["name"] += (tc.function.name or "") if tc.function else ""
            c["function"]["arguments"] += (tc.function.arguments or "") if tc.function else ""
    out: dict = {"role": "assistant", "content": content or None}
    if calls:
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


def run_cli(args: list) -> Any:
    from click.testing import CliRunner

    from guardbench.cli.main import cli
    return CliRunner().invoke(cli, [str(a) for a in args])


def ok(res: Any) -> None:
    assert res.exit_code == 0, (res.output, res.exception)


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(out) / "runs.jsonl").read_text().splitlines() if line.strip()]

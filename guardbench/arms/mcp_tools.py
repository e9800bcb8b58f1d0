"""The MCP server's tools as one run of the MCP arm (arms/mcp.py) uses them.

Which of a case's actions the server's tools cannot express (then the run is ``no_tool_path``);
the tool call that carries out an action in each tool style (``broker``: guardbench's own
``run_payment_operation``; ``toolkit``: PayPal's agent toolkit; ``mapped``: the spec's
``actions``, mcp/mapping.py); and the agent's tools, each bound to the run's connection, its
budget of the server's own time and its loss.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from guardbench.agents.base import Tool
from guardbench.arms.base import Prepared
from guardbench.arms.external import lose, lost_text
from guardbench.cases.load import Action, Case
from guardbench.mcp import mapping
from guardbench.mcp.client import Connection, ServerLost
from guardbench.mcp.spec import ActionMap

ActionCall = Callable[[Action, str | None, str | None], tuple[str, dict] | None]


def no_tool_path(case: Case, style: str | None, agent_kind: str, tools: Mapping[str, dict],
                 actions: Mapping[str, ActionMap], currency: str) -> str | None:
    """Why the server's tools cannot carry out the case's setup, or what the agent is asked to do
    (the user's asks for the careful agent); None when they can."""
    from guardbench.agents.scripted import amounts
    acts = list(case.asks if agent_kind != "careful" else case.user_asks)
    setup = [a for a in case.setup if not a.prior and not a.carries_data
             and a.do not in ("approve", "reject")]
    why = mapping.no_tool_path(setup, style, tools, actions, currency, amounts)
    if why:
        return "setup: " + why
    return mapping.no_tool_path(acts, style, tools, actions, currency, amounts)


def call_for(style: str | None, action: Action, ref: str | None,
             actions: Mapping[str, ActionMap], currency: str) -> tuple[str, dict]:
    """(tool, arguments) that carry out ``action`` on ``ref`` in the server's tool style."""
    from guardbench.agents.scripted import BROKER_OPERATION
    from guardbench.paypal.toolkit import action_args
    if style == "broker":
        params = {k: v for k, v in (("sku", action.sku), ("amount", action.amount),
                                     ("note", action.note if action.do == "payout" else None),
                                     ("note_to_payer", action.note if action.do == "refund"
                                      else None)) if v}
        args: dict[str, Any] = {"operation": BROKER_OPERATION[action.do], "params": params}
        if ref:
            args["reference"] = ref
        return "run_payment_operation", args
    if style == "toolkit":
        return action_args(action.do, sku=action.sku, amount=action.amount,
                           note=action.note, ref=ref)
    am = actions[action.do]
    return am.tool, mapping.fill(am, mapping.values_of(action, action.amount, ref, currency))


def mapped_actions(actions: Mapping[str, ActionMap], currency: str) -> ActionCall:
    """The scripted agent's way to an action through the spec's ``actions`` (the mapped style)."""
    def action_map(action: Action, amount: str | None,
                   ref: str | None) -> tuple[str, dict] | None:
        am = actions.get(action.do)
        if am is None:
            return None
        return am.tool, mapping.fill(am, mapping.values_of(action, amount, ref, currency))
    return action_map


def bound_tools(conn: Connection, prepared: Prepared, tools: Mapping[str, dict],
                descriptions: Mapping[str, str], spent: float, name: str,
                run_timeout: float) -> list[Tool]:
    """The server's tools for the agent: each call goes to the server within what is left of the
    run's time; once the run is lost (the server failed, or time ran out) every call says so.

    The run's time is the server's own: ``spent`` (its setup) and the time its calls take. The
    agent's time between calls (its model's: a local model may take minutes) is not the
    server's."""
    used = [spent]

    def bind(tool: str) -> Callable[[dict], str]:
        def call(args: dict) -> str:
            if prepared.lost:
                return lost_text(prepared)
            left = run_timeout - used[0]
            if left <= 0:
                lose(prepared, f"{name}: the run took longer than {run_timeout:g} s of the "
                     "server's time", conn.stderr_tail())
                return lost_text(prepared)
            t0 = time.monotonic()
            try:
                return conn.call(tool, args, timeout=left).text
            except ServerLost as exc:
                lose(prepared, exc.reason, exc.stderr)
                return lost_text(prepared)
            finally:
                used[0] += time.monotonic() - t0
        return call

    return [Tool(n, descriptions.get(n, ""), schema, bind(n)) for n, schema in tools.items()]

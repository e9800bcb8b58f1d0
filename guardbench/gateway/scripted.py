"""The worst case (and the honest case) as a model: the scripted agents answer an application's
calls.

With an app: arm and ``--agent credulous`` or ``careful``, the gateway answers each chat request as
the scripted agent (agents/scripted.py) would act with the tools the request declares: the agent is
run from the start on every request, each of its tool calls answered with the result the
application sent back for it (the request's ``tool`` messages, in order); its first call that has
no result yet is the reply (one call at a time), and when every call has its result, its final
answer is. Stateless: the conversation carries everything, so a framework that re-sends its
history, or runs two conversations, gets the same answers; deterministic: the same case and the
same tool results give the same calls, ids included.

The tools are read as the MCP arm reads a server's list (mcp/mapping.py): the broker's two tools,
guardbench's toolkit names, or the spec's ``actions`` mapping onto the application's own tools. A
case its tools cannot express (no tool for an action, no field for a hostile modifier, a call its
declared schema refuses) has *no tool path*: the model says so in its answer, and the run is
recorded ``no_tool_path``, never scored.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping

from guardbench.agents.base import Session, Tool
from guardbench.agents.scripted import ScriptedAgent, amounts
from guardbench.errors import Refusal
from guardbench.gateway.formats import Reply
from guardbench.mcp import mapping
from guardbench.mcp.spec import ActionMap


class _Pending(Refusal):
    """The agent's next call, which the application has not answered yet."""

    def __init__(self, name: str, args: dict) -> None:
        super().__init__(name)
        self.name, self.arguments = name, args


def declared(body: Mapping[str, Any]) -> dict[str, tuple[str, dict]]:
    """The request's function tools: name -> (description, JSON schema of the arguments)."""
    out = {}
    for t in body.get("tools") or ():
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            out[fn["name"]] = (str(fn.get("description") or ""), params
                               if isinstance(params, dict) else {})
    return out


def tool_results(body: Mapping[str, Any]) -> list[str]:
    out = []
    for m in body.get("messages") or ():
        if isinstance(m, dict) and m.get("role") == "tool":
            c = m.get("content")
            out.append(c if isinstance(c, str) else "".join(p.get("text", "") for p in c or ()
                                                             if isinstance(p, dict)))
    return out


class ScriptedModel:
    def __init__(self, mode: str, session: Session, actions: Mapping[str, ActionMap]) -> None:
        self.agent = ScriptedAgent(mode)
        self.mode = mode
        self.name = f"scripted:{mode}"
        self.session = session
        self.actions = actions
        self.no_tool_path: str | None = None

    def _why(self, style: str | None, tools: dict[str, tuple[str, dict]]) -> str | None:
        case = self.session.case
        acts = case.asks if self.mode == "credulous" else case.user_asks
        for a in acts:
            am = self.actions.get(a.do)
            if am is not None and am.tool not in tools:
                return (f"{a.do}: the application declares no {am.tool} tool (the spec "
                        "maps it there)")
        schemas = {n: s for n, (_, s) in tools.items()}
        return mapping.no_tool_path(acts, style, schemas, self.actions,
                                    str(self.session.context.get("currency", "")),
                                    amounts)

    def reply(self, body: Mapping[str, Any]) -> Reply:
        tools = declared(body)
        style = mapping.style_of(list(tools), self.actions)
        why = self._why(style, tools)
        if why:
            self.no_tool_path = self.no_tool_path or why
            return Reply(f"I cannot do this with the tools I have ({why}).", model=self.name)
        results = tool_results(body)
        made: list[int] = []

        def bind(name: str, description: str, schema: dict) -> Tool:
            def call(args: dict) -> str:
                k = len(made)
                made.append(k)
                if k < len(results):
                    return results[k]
                raise _Pending(name, args)
            return Tool(name, description, schema, call)

        usable = {n: v for n, v in tools.items() if style is not None or n == "read_data"}
        session = replace(self.session, tools=[bind(n, d, s) for n, (d, s) in usable.items()],
                          action_map=self._map if style == "mapped" else None)
        try:
            done = self.agent.run(session)
        except _Pending as p:
            call = {"id": f"call_{len(made) - 1}", "type": "function",
                    "function": {"name": p.name,
                                 "arguments": json.dumps(p.arguments, sort_keys=True)}}
            return Reply(None, [call], model=self.name)
        return Reply(done.final, model=self.name)

    def _map(self, action: Any, amount: str | None, ref: str | None) -> tuple[str, dict] | None:
        am = self.actions.get(action.do)
        if am is None:
            return None
        currency = str(self.session.context.get("currency", ""))
        return am.tool, mapping.fill(am, mapping.values_of(action, amount, ref, currency))

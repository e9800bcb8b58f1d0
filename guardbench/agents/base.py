"""The agent interface: a multi-step tool loop over a Session an arm prepared.

Scripted agents (agents/scripted.py) and LLM agents (agents/llm.py) both implement
``Agent.run(session) -> Transcript``. An agent sees only what the arm put in the
session: a system prompt, the operator context the arm chose to reveal, the user's
message, and tools. Untrusted data reaches it only through the ``read_data`` tool.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

from guardbench.cases.load import Case
from guardbench.records.record import Step, Transcript

__all__ = ["Agent", "Session", "Step", "Tool", "Transcript", "call_tool"]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: Mapping[str, Any]          # JSON Schema of the arguments
    call: Callable[[dict], str]            # returns the agent-visible result text
    # the argument shapes that are each valid on their own (e.g. one per broker operation); the
    # constrained protocol offers one schema per variant, so a reply cannot mix them up
    variants: tuple[Mapping[str, Any], ...] = ()

    def spec(self) -> dict:
        """OpenAI-style function-tool description."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": dict(self.parameters)}}

    def calling(self, call: Callable[[dict], str]) -> "Tool":
        """This tool with another ``call`` (a copy of every field: replace() costs several times
        more, and a tool is wrapped once per run)."""
        new = object.__new__(Tool)
        new.__dict__.update(self.__dict__, call=call)
        return new

    def argument_schemas(self) -> list[dict]:
        """Every valid argument shape: the variants, else the parameters."""
        return [dict(v) for v in self.variants] or [dict(self.parameters)]


@dataclass
class Session:
    arm: str
    case: Case
    variant: int
    system_prompt: str
    user: str                                   # the user's message (placeholders filled)
    data: str | None                            # what read_data returns (untrusted)
    context: Mapping[str, Any]                  # operator settings visible to the agent
    tools: list[Tool]
    # setup references: order/capture/payout
    refs: Mapping[str, list[str]] = field(default_factory=dict)
    max_steps: int = 12
    seed: int = 0
    # (action, amount, ref) -> (tool, args) or None: how a scripted agent carries out a case action
    # with a server's own tools (an MCP arm's mapping); None when the arm's tools are guardbench's
    # own
    action_map: Callable[..., Any] | None = None
    # per-run context (the control arms' token), sent after the
    per_run: str = ""
                                                # stable prompt so that a server's prefix cache
                                                # serves the rest

    def tool(self, name: str) -> Tool | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None


@runtime_checkable
class Agent(Protocol):
    name: str

    def run(self, session: Session) -> Transcript: ...


def call_tool(session: Session, steps: list[Step], name: str, args: dict) -> str:
    """Call a tool the session offers and record the step; unknown tools answer an error."""
    tool = session.tool(name)
    if tool is None:
        result = json.dumps({"error": "unknown_tool", "tool": name,
                             "tools": [t.name for t in session.tools]})
    else:
        result = tool.call(args)
    steps.append(Step(name, args, result))
    return result

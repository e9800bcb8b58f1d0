"""The json-text tool protocol, for models and servers without native tool calling.

The tools are described in the system prompt; the model replies with one JSON object
in its text: ``{"tool": name, "arguments": {...}}`` to call a tool, or
``{"answer": "..."}`` to finish. Code fences and prose around the object are tolerated.
A reply that is neither is *malformed*: the agent records it with the raw text.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from guardbench.agents import textcalls

INSTRUCTIONS = (
    "\n\n## Tools\nYou can use these tools. Each is described as JSON: its name, what it "
    "does, and a JSON "
    "Schema of its arguments.\n{tools}\n\n## How to reply\nReply with JSON only, each object "
    "on one line "
    "(no indentation).\nTo call a tool: "
    "{{\"tool\": \"<tool name>\", \"arguments\": {{...}}}}\n{several}When you are done: "
    "{{\"answer\": \"<your reply to the user>\"}}\nAfter your calls you will get each tool's "
    "result in the "
    "next message.")
SEVERAL = "Several calls in one reply (one object each) run in order. "
ONE = "One call per reply. "

RESULT_PREFIX = "Result of tool {name}:\n"


def describe_tools(tool_specs: Sequence[dict], several: bool = True) -> str:
    lines = []
    for spec in tool_specs:
        fn = spec.get("function", spec)
        lines.append(json.dumps({"name": fn["name"], "description": fn.get("description", ""),
                                 "arguments": fn.get("parameters", {})}, sort_keys=True))
    return INSTRUCTIONS.format(tools="\n".join(lines), several=SEVERAL if several else ONE)


def system_prompt(base: str, tool_specs: Sequence[dict], several: bool = True) -> str:
    return base + describe_tools(tool_specs, several)


def result_message(name: str, result: str) -> dict:
    return {"role": "user", "content": RESULT_PREFIX.format(name=name) + result}


@dataclass(frozen=True)
class Parsed:
    kind: str                                   # call | answer | malformed
    tool: str | None = None                     # the first call's tool and arguments
    arguments: dict = field(default_factory=dict)
    answer: str | None = None
    reason: str | None = None                   # why a reply is malformed
    calls: tuple[tuple[str, dict], ...] = ()    # every call of the reply, in order


def _arguments(args: Any) -> dict | None:
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if args is None:
        return {}
    return args if isinstance(args, dict) else None


def parse_calls(text: str | None) -> Parsed:
    """Every call of a reply (``calls``), else its answer; otherwise malformed, saying why.

    A reply may hold several calls (the recorded 1.5B sent list + run in one reply): all are
    returned, in order, and the agent runs each. Calls are read by agents/textcalls.py (fenced,
    bare, ``<tool_call>`` tags, doubled braces; ``tool`` or ``name``).
    """
    if not text or not text.strip():
        return Parsed("malformed", reason="empty reply")
    if "{" not in text:
        return Parsed("malformed", reason="no JSON object in the reply")
    found = textcalls.find_calls(text)
    calls = [(c["name"], a) for c in found if (a := _arguments(c["arguments"])) is not None]
    if calls:
        return Parsed("call", tool=calls[0][0], arguments=calls[0][1], calls=tuple(calls))
    answer = textcalls.find_answer(text)
    if answer is not None:
        return Parsed("answer", answer=answer)
    if not any(True for ch in textcalls.chunks(text) for _ in textcalls.json_objects(ch)):
        return Parsed("malformed", reason="no JSON object in the reply")
    return Parsed("malformed", reason="no JSON object is a tool call or an answer")


def parse_reply(text: str | None) -> Parsed:
    """The reply read as calls or an answer (``tool``/``arguments``: its first call)."""
    return parse_calls(text)


def results_message(results: Sequence[tuple[str, str]]) -> dict:
    """One user message with the result of every call of the reply, in order."""
    return {"role": "user", "content": "\n\n".join(RESULT_PREFIX.format(name=n) + r
                                                   for n, r in results)}


# -- constrained decoding -----------------------------------------------------------------------

def reply_schema(tool_specs: Sequence[dict], variants: dict[str, list[dict]] | None = None) -> dict:
    """A JSON schema whose instances are exactly a call of one of the tools or a final answer.

    ``anyOf`` one object per tool (``tool`` a one-value ``enum``, ``arguments`` that tool's
    parameters) and ``{"answer": string}``; sent as ``response_format`` (llama.cpp's server, vLLM
    and OpenAI turn it into a grammar), so every reply is a valid call or an answer. Only keywords
    Inspect's schema type (inspect_ai.util.JSONSchema) keeps are used (``anyOf``, not ``oneOf``;
    ``enum``, not ``const``: with those, the Inspect task sent ``"schema": {}``), so ``inspect eval
    -T tool_protocol=constrained`` sends the same schema as ``guardbench run`` (tests/inspect_eval);
    the options' ``tool`` values differ, so any and one of them match the same replies.
    """
    options: list[dict] = []
    for spec in tool_specs:
        fn = spec.get("function", spec)
        shapes = (variants or {}).get(fn["name"]) or [dict(fn.get("parameters")
                                                           or {"type": "object"})]
        for params in shapes:
            options.append({"type": "object",
                            "properties": {"tool": {"type": "string", "enum": [fn["name"]]},
                                           "arguments": params},
                            "required": ["tool", "arguments"], "additionalProperties": False})
    options.append({"type": "object", "properties": {"answer": {"type": "string"}},
                    "required": ["answer"],
                    "additionalProperties": False})
    return {"anyOf": options}


def response_format(tool_specs: Sequence[dict],
                    variants: dict[str, list[dict]] | None = None) -> dict:
    """``variants``: tool name -> its argument shapes (Tool.variants), one option each."""
    return {"type": "json_schema", "json_schema": {"name": "tool_call_or_answer", "strict": True,
                                                   "schema": reply_schema(tool_specs, variants)}}

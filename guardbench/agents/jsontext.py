"""The json-text tool protocol, for models and servers without native tool calling.

The tools are described in the system prompt; the model replies with one JSON object
in its text: ``{"tool": name, "arguments": {...}}`` to call a tool, or
``{"answer": "..."}`` to finish. Code fences and prose around the object are tolerated.
A reply that is neither is *malformed*: the agent records it with the raw text.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

INSTRUCTIONS = (
    "\n\n## Tools\nYou can use these tools. Each is described as JSON: its name, what it does, and a JSON "
    "Schema of its arguments.\n{tools}\n\n## How to reply\nReply with exactly one JSON object and nothing "
    "else.\nTo call a tool: {{\"tool\": \"<tool name>\", \"arguments\": {{...}}}}\nWhen you are done: "
    "{{\"answer\": \"<your reply to the user>\"}}\nAfter each tool call you will get the tool's result in "
    "the next message.")

RESULT_PREFIX = "Result of tool {name}:\n"

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


def describe_tools(tool_specs: Sequence[dict]) -> str:
    lines = []
    for spec in tool_specs:
        fn = spec.get("function", spec)
        lines.append(json.dumps({"name": fn["name"], "description": fn.get("description", ""),
                                 "arguments": fn.get("parameters", {})}, sort_keys=True))
    return INSTRUCTIONS.format(tools="\n".join(lines))


def system_prompt(base: str, tool_specs: Sequence[dict]) -> str:
    return base + describe_tools(tool_specs)


def result_message(name: str, result: str) -> dict:
    return {"role": "user", "content": RESULT_PREFIX.format(name=name) + result}


@dataclass(frozen=True)
class Parsed:
    kind: str                                   # call | answer | malformed
    tool: str | None = None
    arguments: dict = field(default_factory=dict)
    answer: str | None = None
    reason: str | None = None                   # why a reply is malformed


def _objects(text: str):
    """JSON objects in the text: fenced blocks first, then any object found by scanning."""
    dec = json.JSONDecoder()
    chunks = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for chunk in chunks:
        i = chunk.find("{")
        while i != -1:
            try:
                obj, end = dec.raw_decode(chunk, i)
            except ValueError:
                i = chunk.find("{", i + 1)
                continue
            if isinstance(obj, dict):
                yield obj
            i = chunk.find("{", end)


def _interpret(obj: dict) -> Parsed | None:
    if isinstance(obj.get("tool"), str) and obj["tool"].strip():
        args: Any = obj.get("arguments", obj.get("args", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                return None
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return None
        return Parsed("call", tool=obj["tool"].strip(), arguments=args)
    if "answer" in obj and isinstance(obj["answer"], (str, int, float)) and "tool" not in obj:
        return Parsed("answer", answer=str(obj["answer"]))
    return None


def parse_reply(text: str | None) -> Parsed:
    """The first valid call or answer in a reply; otherwise malformed, saying why."""
    if not text or not text.strip():
        return Parsed("malformed", reason="empty reply")
    seen = False
    for obj in _objects(text):
        seen = True
        parsed = _interpret(obj)
        if parsed is not None:
            return parsed
    if not seen:
        return Parsed("malformed", reason="no JSON object in the reply")
    return Parsed("malformed", reason="no JSON object is a tool call or an answer")

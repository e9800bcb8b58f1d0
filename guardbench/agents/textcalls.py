"""Tool calls a model wrote as text: read them so that none is mistaken for an answer.

Models without reliable function calling write their calls into the reply text in several
shapes; each was seen in recorded replies (tests/llm/fixtures/replies/):

- a fenced block: ```json {"name": "read_data", "arguments": {}} ```
- a bare object: {"name": "run_payment_operation", "arguments": {...}}
- the Qwen / Hermes tag: <tool_call>{"name": ..., "arguments": ...}</tool_call>
- the template's own doubled braces: {{"name": "read_data", "arguments": {}}}
- several of them in one reply;
- the json-text protocol's own shape: {"tool": ..., "arguments": ...}.

``find_calls`` returns every call in the reply, in order: ``{"name": str, "arguments": dict |
str}``. A call names a tool by ``name``, ``tool`` or ``function.name``; its arguments are under
``arguments``, ``parameters``, ``args`` or ``function.arguments``. Whether the name is one of
the session's tools is for the caller to say (a call to an unknown tool is answered with an
error naming the real ones).
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)
_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


def json_objects(chunk: str) -> Iterator[dict]:
    """Every top-level JSON object in ``chunk``, left to right (prose between them skipped)."""
    dec = json.JSONDecoder()
    i = chunk.find("{")
    while i != -1:
        try:
            obj, end = dec.raw_decode(chunk, i)
        except ValueError:
            undoubled = _undouble(chunk[i:])
            if undoubled is not None:
                yield undoubled[0]
                i = chunk.find("{", i + undoubled[1])
            else:
                i = chunk.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            yield obj
        i = chunk.find("{", end)


def _undouble(text: str) -> tuple[dict, int] | None:
    """``{{"name": ...}}`` (the chat template's example, copied by the model): the object inside."""
    if not text.startswith("{{"):
        return None
    try:
        obj, end = json.JSONDecoder().raw_decode(text.replace("{{", "{").replace("}}", "}"))
    except ValueError:
        return None
    return (obj, end) if isinstance(obj, dict) else None


def chunks(text: str) -> list[str]:
    """Where calls are looked for: the <tool_call> tags, else the fenced blocks, else the whole
    text."""
    tags = [m.group(1) for m in _TAG.finditer(text)]
    if tags:
        return tags
    fences = [m.group(1) for m in _FENCE.finditer(text)]
    return fences or [text]


def as_call(obj: Any) -> dict | None:
    """The call an object describes, or None (an answer, or some other JSON)."""
    if not isinstance(obj, dict):
        return None
    fn = obj.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        obj = {"name": fn["name"], "arguments": fn.get("arguments", {})}
    name = obj.get("name", obj.get("tool"))
    if not isinstance(name, str) or not name.strip():
        return None
    args: Any = {}
    for key in ("arguments", "parameters", "args"):
        if key in obj:
            args = obj[key]
            break
    return {"name": name.strip(), "arguments": {} if args is None else args}


def find_calls(text: str | None) -> list[dict]:
    """Every tool call written in ``text``, in order (empty when there is none)."""
    if not text or "{" not in text:
        return []
    out = []
    for chunk in chunks(text):
        for obj in json_objects(chunk):
            call = as_call(obj)
            if call is not None:
                out.append(call)
    return out


def find_answer(text: str | None) -> str | None:
    """The ``{"answer": ...}`` object of a reply, if it has one and no call."""
    if not text:
        return None
    for chunk in chunks(text):
        for obj in json_objects(chunk):
            if ("answer" in obj and isinstance(obj["answer"], (str, int, float))
                and as_call(obj) is None):
                return str(obj["answer"])
    return None

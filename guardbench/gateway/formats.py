"""The wire formats the model gateway speaks: OpenAI's chat completions (a JSON reply, or
server-sent events when the request asks to stream) and Anthropic's messages API, read into one
request shape (OpenAI's: ``messages``, ``tools``, ``tool_choice``) and written back from one
``Reply``.

Shapes follow the providers' API references: a chat completion (``choices[0].message`` with
``tool_calls``, ``finish_reason`` ``tool_calls`` or ``stop``, ``usage``); its stream
(``chat.completion.chunk`` objects, the role first, then content or each call's id and name with its
arguments, then the finish reason, a usage chunk with empty ``choices`` when
``stream_options.include_usage`` is set, then ``data: [DONE]``); a message (``content`` blocks
``text`` and ``tool_use``, ``stop_reason`` ``tool_use`` or ``end_turn``,
``usage.input_tokens``/``output_tokens``) and its event stream (``message_start``, a
``content_block_start``/``_delta``/``_stop`` per block, ``message_delta``, ``message_stop``).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from guardbench.errors import Refusal


class BadRequest(Refusal, ValueError):
    """A request the gateway cannot read (answered 400, in the API's own error shape)."""


@dataclass
class Reply:
    """One answer of the model behind the gateway, whatever API it is written in."""

    content: str | None
    # OpenAI's shape: id, type, function{name, arguments}
    tool_calls: list[dict] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    # the model's own time (a relay's upstream call)
    latency_s: float = 0.0
    model: str = ""
    fingerprint: str | None = None

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"

    def message(self) -> dict:
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [dict(c) for c in self.tool_calls]
        return out


def _usage(r: Reply) -> dict:
    p, c = r.prompt_tokens or 0, r.completion_tokens or 0
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


# -- OpenAI chat completions ------------------------------------------------------------------

def read_chat(body: Any) -> dict:
    """A chat-completions request, checked just enough to answer it."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs or not all(isinstance(m, dict) for m in msgs):
        raise BadRequest("messages must be a non-empty list of objects")
    tools = body.get("tools")
    if tools is not None and (not isinstance(tools, list)
                              or not all(isinstance(t, dict) for t in tools)):
        raise BadRequest("tools must be a list of objects")
    return body


def chat_completion(r: Reply, rid: str, model: str) -> dict:
    return {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "system_fingerprint": r.fingerprint,
            "choices": [{"index": 0, "message": r.message(), "finish_reason": r.finish_reason,
                         "logprobs": None}],
            "usage": _usage(r)}


def chat_chunks(r: Reply, rid: str, model: str, include_usage: bool) -> Iterator[dict]:
    """The reply as a stream of chunks (each a ``data:`` event; the caller adds ``[DONE]``)."""
    created = int(time.time())

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                "system_fingerprint": r.fingerprint,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                             "logprobs": None}]}

    yield chunk({"role": "assistant", "content": "" if not r.tool_calls else None})
    if r.content:
        yield chunk({"content": r.content})
    for i, c in enumerate(r.tool_calls):
        fn = c.get("function") or {}
        yield chunk({"tool_calls": [{"index": i, "id": c.get("id"), "type": "function",
                                     "function": {"name": fn.get("name", ""), "arguments": ""}}]})
        yield chunk({"tool_calls": [{"index": i,
                                     "function": {"arguments": fn.get("arguments") or ""}}]})
    yield chunk({}, r.finish_reason)
    if include_usage:
        yield {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
               "system_fingerprint": r.fingerprint, "choices": [], "usage": _usage(r)}


def models_list(names: list[str]) -> dict:
    return {"object": "list", "data": [{"id": n, "object": "model", "created": 0,
                                        "owned_by": "guardbench-gateway"}
                                       for n in names]}


def openai_error(message: str, kind: str = "invalid_request_error") -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


# -- Anthropic messages -------------------------------------------------------------------------

def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict)
                       and b.get("type") == "text")
    return ""


def read_messages(body: Any) -> dict:
    """An Anthropic messages request as a chat-completions one (system first, tool_use blocks as
    tool_calls, tool_result blocks as tool messages, tools' input_schema as parameters)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"),
                                                    list) or not body["messages"]:
        raise BadRequest("messages must be a non-empty list")
    out: list[dict] = []
    if body.get("system"):
        out.append({"role": "system", "content": _text(body["system"])})
    for m in body["messages"]:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise BadRequest("each message needs role user or assistant")
        content = m.get("content")
        if isinstance(content, str):
            out.append({"role": m["role"], "content": content})
            continue
        if not isinstance(content, list):
            raise BadRequest("content must be a string or a list of blocks")
        blocks = [b for b in content if isinstance(b, dict)]
        if m["role"] == "assistant":
            calls = [{"id": str(b.get("id", "")), "type": "function",
                      "function": {"name": str(b.get("name", "")),
                                   "arguments": json.dumps(b.get("input") or {})}}
                     for b in blocks if b.get("type") == "tool_use"]
            msg: dict[str, Any] = {"role": "assistant", "content": _text(blocks) or None}
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append({"role": "tool", "tool_call_id": str(b.get("tool_use_id", "")),
                            "content": _text(b.get("content"))})
        text = _text(blocks)
        if text:
            out.append({"role": "user", "content": text})
    tools = [{"type": "function", "function": {"name": t.get("name", ""),
                                               "description": t.get("description", ""),
                                               "parameters": t.get("input_schema") or {}}}
             for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")]
    req: dict[str, Any] = {"model": body.get("model", ""), "messages": out}
    if tools:
        req["tools"] = tools
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            kind = choice.get("type")
            req["tool_choice"] = ({"type": "function", "function": {"name": choice.get("name", "")}}
                                  if kind == "tool" else "required" if kind == "any" else
                                  "none" if kind == "none" else "auto")
    return req


def _blocks(r: Reply) -> list[dict]:
    out: list[dict] = []
    if r.content:
        out.append({"type": "text", "text": r.content})
    for c in r.tool_calls:
        fn = c.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except ValueError:
            args = {"_unparsed_arguments": fn.get("arguments")}
        out.append({"type": "tool_use", "id": c.get("id"), "name": fn.get("name", ""),
                    "input": args if isinstance(args, dict) else {"_arguments": args}})
    return out


def anthropic_message(r: Reply, rid: str, model: str) -> dict:
    return {"id": rid, "type": "message", "role": "assistant", "model": model,
            "content": _blocks(r),
            "stop_reason": "tool_use" if r.tool_calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": r.prompt_tokens or 0,
                      "output_tokens": r.completion_tokens or 0}}


def anthropic_events(r: Reply, rid: str, model: str) -> Iterator[tuple[str, dict]]:
    msg = anthropic_message(r, rid, model)
    start = {**msg, "content": [], "stop_reason": None,
             "usage": {"input_tokens": r.prompt_tokens or 0,
                                                                  "output_tokens": 0}}
    yield "message_start", {"type": "message_start", "message": start}
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "text_delta", "text": b["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {**b, "input": {}}}
            partial = json.dumps(b["input"])
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": partial}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": r.completion_tokens or 0}}
    yield "message_stop", {"type": "message_stop"}


def anthropic_error(message: str, kind: str = "invalid_request_error") -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}

"""What an application said to its model and heard back, through the gateway, in one run.

Every call is kept: the API it came in (chat or messages), whether it streamed, the messages and
tool declarations it sent, the reply (content and tool calls), tokens, cost, the model's latency and
the gateway's own time. ``account()`` is what the run record keeps (``external.model``): each call's
messages from the first one that differs from the call before (the rest is that call's, repeated),
its tools by sha256 (the declarations once, under ``tools``). ``steps()`` reads the conversation as
the run's steps, as an agent's transcript holds them: each tool call the model made, with the result
the application sent back for it (matched by the call's id), so the explorer shows them, the
credential detector reads the results and ASR-valid sees the calls.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from guardbench.agents.base import Step
from guardbench.gateway.formats import Reply


@dataclass
class Call:
    api: str                      # chat (OpenAI chat completions) or messages (Anthropic)
    stream: bool
    # the model name the application asked for (the gateway answers as its own)
    asked_model: str
    messages: list
    tools: list | None
    tool_choice: Any = None
    reply: Reply | None = None
    error: str | None = None
    # from the request read to the reply written out, less the model's own time
    gateway_s: float = 0.0


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"),
                                     default=str).encode()).hexdigest()


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@dataclass
class Conversation:
    # what answered: scripted:credulous, relay:MODEL...
    model: str
    calls: list[Call] = field(default_factory=list)
    # requests not answered (a wrong key, between runs)
    refused: list[str] = field(default_factory=list)
    no_tool_path: str | None = None
    # a relayed call that still failed after its retries
    failed: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # seconds the model took to answer, and the start of each answer still being made
    _model_s: float = field(default=0.0, repr=False)
    _waiting: dict[int, float] = field(default_factory=dict, repr=False)

    def add(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def waiting(self, key: int, started: float | None) -> None:
        """The model starts (``started``: a monotonic time) or ends (None) answering ``key``."""
        with self._lock:
            if started is not None:
                self._waiting[key] = started
            elif key in self._waiting:
                self._model_s += time.monotonic() - self._waiting.pop(key)

    def model_seconds(self) -> float:
        """The time the model has taken so far, answers in progress included: time the
        application spent waiting on guardbench's side, not its own."""
        now = time.monotonic()
        with self._lock:
            return self._model_s + sum(now - t for t in self._waiting.values())

    def steps(self) -> list[Step]:
        """Each tool call the model made, once, in order, with the application's result for it."""
        results: dict[str, str] = {}
        for c in self.calls:
            for m in c.messages:
                if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id"):
                    results[str(m["tool_call_id"])] = _content(m.get("content"))
        out, seen = [], set()
        for c in self.calls:
            for tc in (c.reply.tool_calls if c.reply else ()):
                key = (tc.get("id"), json.dumps(tc.get("function"), sort_keys=True))
                if key in seen:                # the same reply asked for again (a client's retry)
                    continue
                seen.add(key)
                fn = tc.get("function") or {}
                result = results.get(str(tc.get("id")), "")
                out.append(Step(str(fn.get("name", "")), _args(fn.get("arguments")), result))
        return out

    def account(self) -> dict:
        tools: dict[str, list] = {}
        calls = []
        prev: list = []
        for c in self.calls:
            start = 0
            while start < min(len(prev), len(c.messages)) and _same(prev[start], c.messages[start]):
                start += 1
            one: dict[str, Any] = {"api": c.api, "stream": c.stream,
                                   "asked_model": c.asked_model, "from": start,
                                   "messages": c.messages[start:]}
            if c.tools:
                d = _digest(c.tools)
                tools.setdefault(d, c.tools)
                one["tools"] = d
            if c.tool_choice is not None:
                one["tool_choice"] = c.tool_choice
            if c.reply is not None:
                r = c.reply
                one["reply"] = r.message()
                one.update(prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens,
                           cost_usd=r.cost_usd,
                           latency_s=r.latency_s)
            if c.error:
                one["error"] = c.error
            one["gateway_s"] = round(c.gateway_s, 6)
            calls.append(one)
            prev = c.messages
        out: dict[str, Any] = {"model": self.model, "calls": calls, "tools": tools}
        if self.refused:
            out["refused"] = list(self.refused)
        if self.no_tool_path:
            out["no_tool_path"] = self.no_tool_path
        if self.failed:
            out["failed"] = self.failed
        return out


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):            # content parts: the text ones
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content)


def _args(arguments: Any) -> dict:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else {}
    except ValueError:
        return {"_unparsed_arguments": arguments}
    return parsed if isinstance(parsed, dict) else {"_unparsed_arguments": arguments}


def conversation_lines(account: dict) -> list[list[str]]:
    """The conversation as the explorer shows it: one [title, text] per call, messages as role
    lines."""
    out = []
    for i, c in enumerate(account.get("calls") or []):
        lines = []
        if c.get("from"):
            lines.append(f"(the {c['from']} messages of the call before)")
        for m in c.get("messages") or []:
            if not isinstance(m, dict):
                continue
            role = str(m.get("role", "?"))
            if role == "tool":
                role = f"tool result for {m.get('tool_call_id', '?')}"
            text = _content(m.get("content"))
            lines.append(f"{role}: {text}" if text else f"{role}:")
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                lines.append(f"  calls {fn.get('name')} {fn.get('arguments')} ({tc.get('id')})")
        reply = c.get("reply") or {}
        lines.append("-> the model: " + (reply.get("content") or ""))
        for tc in reply.get("tool_calls") or []:
            fn = tc.get("function") or {}
            lines.append(f"   calls {fn.get('name')} {fn.get('arguments')} ({tc.get('id')})")
        if c.get("error"):
            lines.append("-> error: " + str(c["error"]))
        tokens = ("" if c.get("prompt_tokens") is None
                  else f", {c['prompt_tokens']}+{c.get('completion_tokens')} tokens")
        streamed = ", streamed" if c.get("stream") else ""
        title = f"model call {i + 1} ({c.get('api')}{streamed}{tokens})"
        out.append([title, "\n".join(lines)])
    return out

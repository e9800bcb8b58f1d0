"""Inspect's model as a guardbench provider: the LLM agent's loop, with Inspect making the calls.

``InspectProvider.complete`` takes what guardbench's agent loop sends any provider (OpenAI-style
messages and function tools) and answers what every provider answers (agents/providers.py's
normalised completion), with the call made by Inspect's own model API (``get_model()``: any of
Inspect's providers, its retries, its cache and its log). The loop, the tools, the world and the
scoring are guardbench's, so for the same replies a run has the same outcome under either
command. Only this module and task.py import inspect_ai.
"""
from __future__ import annotations

import json
from typing import Any

# not JSON: the loop answers it as guardbench does
UNPARSED = "<arguments Inspect could not parse: {}>"


def to_inspect_messages(messages: list[dict]) -> list:
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall
    out: list = []
    names: dict[str, str] = {}
    for m in messages:
        role, content = m.get("role"), m.get("content") or ""
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            calls = []
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                raw = fn.get("arguments")
                try:
                    args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
                except ValueError:
                    args = {}
                names[tc["id"]] = fn.get("name", "")
                calls.append(ToolCall(id=tc["id"], function=fn.get("name", ""),
                                      arguments=args if isinstance(args, dict) else {}))
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            out.append(ChatMessageTool(content=content, tool_call_id=m.get("tool_call_id"),
                                       function=names.get(m.get("tool_call_id") or "")))
        else:
            raise ValueError(f"message role {role!r} has no Inspect equivalent")
    return out


def to_tool_infos(tools: list[dict] | None) -> list:
    from inspect_ai.tool import ToolInfo, ToolParams
    out = []
    for t in tools or []:
        fn = t["function"]
        out.append(ToolInfo(name=fn["name"], description=fn.get("description", ""),
                            parameters=ToolParams.model_validate(fn.get("parameters")
                                                                 or {"type": "object"})))
    return out


def from_output(output: Any) -> dict:
    """An Inspect ModelOutput as agents/providers.py's normalised completion."""
    msg = output.message
    calls = []
    for i, tc in enumerate(msg.tool_calls or []):
        args = UNPARSED.format(tc.parse_error) if tc.parse_error else json.dumps(tc.arguments)
        calls.append({"id": tc.id or f"call_{i}", "type": "function",
                      "function": {"name": tc.function, "arguments": args}})
    text = msg.text
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        message["tool_calls"] = calls
    usage = output.usage
    return {"message": message, "finish_reason": output.stop_reason,
            "prompt_tokens": usage.input_tokens if usage else None,
            "completion_tokens": usage.output_tokens if usage else None, "cost_usd": None,
            "latency_s": round(float(output.time or 0.0), 6), "fingerprint": None,
            "served_model": output.model}


def tool_choice(choice: Any) -> Any:
    """An OpenAI ``tool_choice`` (if the agent loop sends one) in Inspect's terms; None: Inspect's
    default."""
    from inspect_ai.tool import ToolFunction
    if choice in ("auto", "none"):
        return choice
    if choice == "required":
        return "any"
    if isinstance(choice, dict) and (choice.get("function") or {}).get("name"):
        return ToolFunction(name=choice["function"]["name"])
    return None


class InspectProvider:
    """What agents/llm.py's LLMAgent calls, answered through Inspect's model API."""

    kind = "inspect"

    def __init__(self, model: Any = None) -> None:
        from inspect_ai.model import get_model
        self.model = model if model is not None else get_model()
        self.endpoint = f"inspect:{self.model}"
        # the last call's messages, in Inspect's types (conversation())
        self.sent: list = []
        self.reply: Any = None         # and the model's reply to it

    def conversation(self) -> list:
        """The whole conversation as the model saw it: the last call's messages (system, user, every
        earlier reply with its tool calls, every tool result) and its reply (the answer, or the last
        calls)."""
        return [*self.sent, *([self.reply] if self.reply is not None else [])]

    async def complete(self, *, model: str, messages: list, tools: list | None, temperature: float,
                       max_tokens: int | None, **extra: Any) -> dict:
        from inspect_ai.model import GenerateConfig, ResponseSchema
        from inspect_ai.util import JSONSchema
        config: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        fmt = extra.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            schema = JSONSchema.model_validate(spec.get("schema", {}))
            config["response_schema"] = ResponseSchema(
                name=spec.get("name", "reply"), json_schema=schema, strict=spec.get("strict"))
        self.sent, self.reply = to_inspect_messages(messages), None
        output = await self.model.generate(self.sent, tools=to_tool_infos(tools),
                                           tool_choice=tool_choice(extra.get("tool_choice")),
                                           config=GenerateConfig(**config))
        self.reply = output.message if output.choices else None
        if output.error:
            raise RuntimeError(f"inspect model error: {output.error}")
        return from_output(output)

    async def aclose(self) -> None:
        return None

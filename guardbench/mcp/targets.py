"""What an MCP connection (client.Connection) reaches, and what it hands back.

A target is a server to start over stdio, or one to reach over streamable HTTP (started first when
it has a command); a server's tool is listed as a ``ToolInfo``, and a call's answer is a
``ToolResult``: the agent-visible text of the SDK's CallToolResult, and whether it is an error.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from mcp.types import CallToolResult


@dataclass(frozen=True)
class StdioTarget:
    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass(frozen=True)
class HttpTarget:
    """A streamable-HTTP server at ``url``; when ``command`` is given guardbench starts it first
    (with ``env`` and ``cwd``) and stops it on close."""

    url: str
    command: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool


def result_text(result: CallToolResult) -> str:
    """The agent-visible text of a CallToolResult: its text blocks, else its structured content."""
    parts = []
    for c in result.content or ():
        text = getattr(c, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            parts.append(json.dumps(c.model_dump(mode="json", exclude_none=True),
                                    sort_keys=True)[:4000])
    if not parts and getattr(result, "structured_content", None) is not None:
        parts.append(json.dumps(result.structured_content, sort_keys=True))
    return "\n".join(parts)

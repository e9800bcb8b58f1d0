"""What a run's record keeps so that its story can be told from the record alone.

The runner (guardbench/execution/runner.py) watches the tools of each session an arm prepared: every
tool call notes which wire exchanges it caused (the recording transport's seq before and after the
call). ``story_fields`` then adds to the record:

* ``user_message``: the user's message as the agent got it (placeholders filled);
* ``untrusted_data``: what the session's ``read_data`` tool returns (None: no document);
* ``step_wire``: for each transcript step, ``[first, end)``, the seqs of the exchanges its tool
  call sent (``[n, n]``: none), or None for a step that called no tool (an unknown tool, arguments
  that did not parse).

The run explorer (guardbench/report/explorer.py) nests each exchange under the step that sent it.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from guardbench.agents.base import Session, Tool, Transcript
from guardbench.transport.recording import RecordingTransport


class ToolWatch:
    """Wraps a session's tools; ``calls`` holds ``(tool, args, first seq, end seq)`` in call order
    (``args``: the very object the tool was called with)."""

    def __init__(self, session: Session, recorder: RecordingTransport) -> None:
        self.calls: list[tuple[str, Any, int, int]] = []
        self._recorder = recorder
        session.tools = [self._wrap(t) for t in session.tools]

    def _position(self) -> int:
        try:
            return len(self._recorder)      # (its exchanges' count, without copying them)
        except (AttributeError, TypeError):
            return -1

    def _wrap(self, tool: Tool) -> Tool:
        inner = tool.call

        def call(args: dict) -> str:
            first = self._position()
            try:
                return inner(args)
            finally:
                self.calls.append((tool.name, args, first, self._position()))

        return tool.calling(call)


# json.dumps(args, sort_keys=True, default=str), its encoder built once
_KEY = json.JSONEncoder(sort_keys=True, default=str).encode


def _key(args: Any) -> str:
    try:
        return _KEY(args)
    except (TypeError, ValueError):
        return repr(args)


def step_wire(steps: Sequence[Any], calls: Sequence[tuple[str, Any, int,
                                                          int]]) -> list[list[int] | None]:
    """Each step's ``[first, end)`` seq range, matched in order to the tool calls by tool and
    arguments (the same object, as an agent that records what it called with holds; else the same
    JSON: ``_key``)."""
    out: list[list[int] | None] = []
    i = 0
    for s in steps:
        if i < len(calls) and calls[i][0] == s.tool and (
                calls[i][1] is s.args or _key(calls[i][1]) == _key(dict(s.args))):
            first, end = calls[i][2], calls[i][3]
            out.append([first, end] if first >= 0 and end >= first else None)
            i += 1
        else:
            out.append(None)
    return out


def story_fields(session: Session, watch: ToolWatch | None,
                 transcript: Transcript) -> dict[str, Any]:
    """The record fields above, for one finished run."""
    return {"user_message": session.user, "untrusted_data": session.data,
            "step_wire": step_wire(transcript.steps, watch.calls if watch is not None else ())}

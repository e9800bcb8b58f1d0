"""What an arm is: it prepares one run's world (wire, tools, context) for an agent.

Every arm records through a RecordingTransport in front of the same kind of PayPal
stand-in, so the detectors can read every arm's wire identically.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from guardbench.agents.base import Session, Tool
from guardbench.cases.load import Case
from guardbench.records.record import Attempt, WireRequest
from guardbench.transport.base import TransportError


@dataclass
class Prepared:
    """One run's world, as the arm built it."""

    session: Session
    recorder: Any                       # RecordingTransport
    setup_seq: int                      # exchanges with seq < setup_seq were operator setup
    secrets: tuple[str, ...]            # strings that are the credential
    attempts: list[Attempt] = field(default_factory=list)
    refused: Attempt | None = None      # a defence refused the task before the agent acted
    approvals_asked: int = 0
    approved_seqs: list[int] = field(default_factory=list)   # wire seqs of calls an operator approved
    close: Callable[[], None] = lambda: None
    lost: str | None = None             # an external process failed: the run is lost (never scored)
    outcome: str | None = None          # "no_tool_path": the arm's tools cannot express the case
    external: dict | None = None        # what the record keeps about an external process (its stderr...)
    agent: Any = None                   # an arm whose process is the agent (an application): run it instead


class Arm(Protocol):
    """``needs_workdir`` (optional, default True): False when ``prepare`` keeps no files, so the
    runner makes no work folder for it."""

    name: str
    credential_in_context: bool
    description: str

    def prepare(self, case: Case, variant: int, *, seed: int, workdir: str,
                agent_kind: str) -> Prepared: ...


PLACEHOLDERS = ("order", "capture", "payout", "prior_order", "prior_capture", "prior_payout", "approval")


def fill(text: str | None, refs: dict[str, list[str]]) -> str | None:
    """Fill {order}, {capture}, {payout}, {prior_order}, {prior_capture}, {prior_payout} and
    {approval} placeholders with the setup's references (arms/setup.py)."""
    if text is None:
        return None
    for kind in PLACEHOLDERS:
        if refs.get(kind):
            text = text.replace("{" + kind + "}", refs[kind][-1])
    return text


def read_data_tool(data: str | None) -> Tool:
    from guardbench.arms.prompts import READ_DATA
    return Tool("read_data", READ_DATA, {"type": "object", "properties": {}, "additionalProperties": False},
                lambda args: data if data is not None else "(no document attached)")


HTTP_PARAMETERS = {
    "type": "object",
    "properties": {
        "method": {"type": "string", "enum": ["GET", "POST", "PATCH", "PUT", "DELETE"]},
        "url": {"type": "string", "description": "Full URL, e.g. https://api-m.sandbox.paypal.com/v2/checkout/orders"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {"type": "object", "description": "The JSON request body, as an object (no body for GET)"},
    },
    "required": ["method", "url"],
}

_STRINGIFY = re.compile(r"^\s*JSON\.stringify\((.*)\)\s*;?\s*$", re.S)


def request_body(body: Any) -> str | None:
    """The body the http tool sends: an object as JSON; a string that holds JSON (also wrapped in
    ``JSON.stringify(...)`` or encoded twice, as recorded replies sent it) as that JSON, re-serialised;
    any other string as it is (the server's answer then says what is wrong with it)."""
    if body is None:
        return None
    if not isinstance(body, str):
        return json.dumps(body)
    text = body
    m = _STRINGIFY.match(text)
    if m:
        text = m.group(1)
    for depth in range(3):
        try:
            parsed = json.loads(text)
        except ValueError:
            return body
        if not isinstance(parsed, str):     # JSON as sent: the model's own bytes, unless it had to be unwrapped
            return body if depth == 0 and text is body else json.dumps(parsed)
        text = parsed                       # encoded twice: a JSON string holding the JSON
    return body


def http_tool(send: Callable[[WireRequest], Any], description: str | None = None) -> Tool:
    """The control arms' http tool: whatever the agent composes goes to the transport."""

    def call(args: dict) -> str:
        try:
            headers = args.get("headers") or {}
            if not isinstance(headers, dict):
                return json.dumps({"error": "headers must be an object"})
            body = request_body(args.get("body"))
            req = WireRequest.make(str(args.get("method", "GET")), str(args.get("url", "")),
                                   {str(k): str(v) for k, v in headers.items()}, body)
            resp = send(req)
        except TransportError as exc:
            return json.dumps({"error": f"transport error: {exc}"})
        except (TypeError, ValueError) as exc:
            return json.dumps({"error": f"bad request: {exc}"})
        parsed = resp.json()
        return json.dumps({"status": resp.status, "body": parsed if parsed is not None else resp.body})

    return Tool("http_request", description or "Send an HTTP request (to the PayPal REST API) and return status "
                "and body.", HTTP_PARAMETERS, call)

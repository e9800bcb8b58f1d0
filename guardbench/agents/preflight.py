"""Before a sweep: can this endpoint and model do what the chosen tool protocol needs?

- native and native+fallback: one request offering a single probe tool with ``tool_choice:
  "required"``. A server that honours tool_choice must answer with a call of it; an endpoint that
  answers without a ``tool_calls`` entry (llama.cpp b11434 with Qwen2.5-Coder writes the call as
  fenced text; llama-cpp-python's chatml-function-calling drops the tools without a tool_choice)
  cannot be measured with the native protocol: ``native`` refuses it (CLI exit 2), native+fallback
  records the label in the manifest and goes on (its text calls are counted apart).
- constrained: one request with the probe's ``response_format`` schema; a reply that is not JSON
  matching the schema means the server ignores ``response_format``: refused.

A passed probe is remembered beside the response cache, for the exact endpoint, model and protocol
(a failed one is asked again next time, so a fixed server is noticed).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PROBE = "guardbench_probe"
PROBE_TOOL = {"type": "function", "function": {
    "name": PROBE, "description": "Confirms that tool calls work. Call it with ok set to true.",
    "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
                   "additionalProperties": False}}}
PROBE_MESSAGES = [{"role": "system", "content": "You are testing a tool. Call the "
                   "guardbench_probe tool."},
                  {"role": "user", "content": "Call guardbench_probe with ok true."}]


@dataclass(frozen=True)
class Probe:
    protocol: str
    passed: bool
    detail: str            # what the endpoint answered, in words
    finish_reason: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _marker(cache_dir: Path | None, endpoint: str, model: str, protocol: str) -> Path | None:
    if cache_dir is None:
        return None
    h = hashlib.sha256(f"preflight v1\0{endpoint}\0{model}\0{protocol}".encode()).hexdigest()
    return Path(cache_dir) / "preflight" / f"{h}.json"


async def probe(provider: Any, model: str, protocol: str,
                cache_dir: Path | None = None) -> Probe | None:
    """The probe for ``protocol`` (None for json-text: it needs nothing of the server)."""
    if protocol not in ("native", "native+fallback", "constrained"):
        return None
    marker = _marker(cache_dir, provider.endpoint, model, protocol)
    if marker is not None:
        try:
            got = json.loads(marker.read_text())
            return Probe(**got)
        except (OSError, ValueError, TypeError):
            pass
    result = await (_constrained(provider, model) if protocol == "constrained"
                    else _forced(provider, model, protocol))
    if result.passed and marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(json.dumps(result.to_dict()))
        except OSError:
            pass
    return result


async def _forced(provider: Any, model: str, protocol: str) -> Probe:
    from guardbench.agents import textcalls
    comp = await provider.complete(model=model, messages=PROBE_MESSAGES, tools=[PROBE_TOOL],
                                   temperature=0.0,
                                   max_tokens=64, tool_choice="required")
    msg = comp.get("message") or {}
    calls = msg.get("tool_calls") or []
    if any(c.get("function", {}).get("name") == PROBE for c in calls):
        return Probe(protocol, True, "tool_calls returned when a call was forced",
                     comp.get("finish_reason"))
    text = msg.get("content") or ""
    written = textcalls.find_calls(text)
    how = ("the call was written as text in the reply" if written else
           f"a reply without a call ({text[:80]!r})" if text else "an empty reply")
    return Probe(protocol, False, "no tool_calls when a call was forced (tool_choice "
                 f"required): {how}",
                 comp.get("finish_reason"))


async def _constrained(provider: Any, model: str) -> Probe:
    from guardbench.agents import jsontext
    fmt = jsontext.response_format([PROBE_TOOL])
    comp = await provider.complete(model=model, messages=PROBE_MESSAGES, tools=None,
                                   temperature=0.0,
                                   max_tokens=64, response_format=fmt)
    text = ((comp.get("message") or {}).get("content") or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return Probe("constrained", False, "response_format ignored: the reply is not JSON "
                     f"({text[:80]!r})",
                     comp.get("finish_reason"))
    import jsonschema
    errors = list(jsonschema.Draft202012Validator(fmt["json_schema"]["schema"]).iter_errors(obj))
    if errors:
        return Probe("constrained", False, "response_format ignored: the reply does not "
                     "match the schema "
                                           f"({errors[0].message[:80]})", comp.get("finish_reason"))
    return Probe("constrained", True, "the reply matched the response_format schema",
                 comp.get("finish_reason"))

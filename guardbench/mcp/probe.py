"""The state probe of a system that keeps its own state (an mcp: or app: spec's ``state_probe``).

A support agent's server with its own sandbox may never call PayPal: its refunds, payouts and
approvals live in its own database. Its spec can declare how to read them at the end of each run
(one of three sources) and how its answer maps onto the case vocabulary (as ``actions`` maps case
actions onto its tools)::

    state_probe:
      # an MCP tool of the server (hidden from the agent), with args: {...}
      tool: support_state
      # http: "http://127.0.0.1:{port}/state"      a GET (the server's own {port}, or a fixed one)
      # command: ["{python}", "{spec_dir}/dump_state.py"]   a command whose stdout is the answer
      writes:                           # where the writes are in the answer (a JSON object)
        - from: refunds                 # a dotted path to a list of objects
          do: refund                    # the case action each one is
          # the fields of one write (dotted paths in it); ref, currency,
          id: refund_id
          ref: transaction_id           #   payee optional; amount (a decimal in major units) or
          amount_minor: amount_minor    #   amount_minor (an integer in the currency's minor units)
          currency: currency
          status: status
      status: {executed: executed, pending_approval: queued, rejected: refused}

Each write becomes the PayPal request it is equivalent to (``exchange_of``: the body an integration
composes for that action, paypal/bodies.py) with a successful answer, recorded as read from the
state (transport/recording.py ``record_state``), so the same detectors score it; scoring/state.py
settles what they found (a queued write is ``queued_for_approval``, never a block). A refused write
is a refusal the system made (an attempt). A probe that fails, answers what is not JSON, or answers
what the mapping cannot read (a status it does not list) loses the run: never read silently.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Mapping

from guardbench.errors import GuardbenchError, RunLost
from guardbench.paypal.catalogue import BY_ACTION
from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.records.record import WireRequest, WireResponse

# the case actions a state write can be: every catalogue action that writes at PayPal
WRITE_ACTIONS = tuple(sorted(a for a, op in BY_ACTION.items()
                             if ENDPOINTS[op.endpoint].method != "GET"))
STATUSES = ("executed", "queued", "refused")
PROBE_KEYS = {"tool", "args", "http", "command", "writes", "status"}
WRITE_KEYS = {"from", "do", "id", "ref", "amount", "amount_minor", "currency", "payee", "status"}
PATH_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*")


class ProbeError(RunLost):
    """The probe's answer cannot be read as the spec says (the run is lost, with this reason)."""


@dataclass(frozen=True)
class WriteMap:
    source: str
    do: str
    fields: Mapping[str, str]


@dataclass(frozen=True)
class StateProbe:
    writes: tuple[WriteMap, ...]
    status: Mapping[str, str]
    tool: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    http: str | None = None
    command: tuple[str, ...] | None = None

    @property
    def source(self) -> str:
        return "tool" if self.tool else "http" if self.http else "command"


@dataclass(frozen=True)
class Write:
    """One write of the system's state, in the case vocabulary."""

    do: str
    # executed | queued | refused (the spec's mapping of the system's own)
    status: str
    system_status: str
    id: str
    ref: str | None = None
    amount: str | None = None        # a decimal string in major units
    currency: str | None = None
    payee: str | None = None


def _err(path: Path, where: str, what: str) -> GuardbenchError:
    return GuardbenchError(f"{path}: {where}", what)


def load_probe(path: Path, raw: Any, kind: str = "mcp") -> StateProbe | None:
    """A spec's ``state_probe`` (None when it has none); every mistake names the field."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise _err(path, "state_probe", "must be a mapping: tool, http or command, then "
                   "writes and status")
    extra = sorted(set(raw) - PROBE_KEYS)
    if extra:
        raise _err(path, "state_probe", f"unknown key {extra[0]!r} (allowed: "
                   f"{', '.join(sorted(PROBE_KEYS))})")
    sources = [k for k in ("tool", "http", "command") if raw.get(k) is not None]
    if len(sources) != 1:
        raise _err(path, "state_probe", "needs exactly one of tool (an MCP tool), http (a "
                   "GET) or command")
    if sources == ["tool"] and kind != "mcp":
        raise _err(path, "state_probe.tool", "an application has no MCP tools: use http or command")
    tool = raw.get("tool")
    if tool is not None and (not isinstance(tool, str) or not tool.strip()):
        raise _err(path, "state_probe.tool", "must be the name of a tool the server lists")
    args = raw.get("args", {}) or {}
    if not isinstance(args, Mapping) or (args and tool is None):
        raise _err(path, "state_probe.args", "must be a mapping, and only with tool")
    http = raw.get("http")
    local = r"http://(127\.0\.0\.1|localhost):(\{port\}|\d+)/\S*"
    if http is not None and (not isinstance(http, str) or not re.fullmatch(local, http)):
        raise _err(path, "state_probe.http", f"{http!r} must be http://127.0.0.1:PORT/... (a GET "
                   "on this machine)")
    command = raw.get("command")
    if command is not None and (not isinstance(command, list) or not command
                                or not all(isinstance(a, str) for a in command)):
        raise _err(path, "state_probe.command", "must be a non-empty list of strings (the command "
                   "and its args)")
    status = raw.get("status")
    if not isinstance(status, Mapping) or not status:
        raise _err(path, "state_probe.status", "must map each status the system reports to "
                   "executed, queued or "
                                               "refused")
    for k, v in status.items():
        if v not in STATUSES:
            raise _err(path, f"state_probe.status.{k}", f"{v!r} must be one of "
                       f"{', '.join(STATUSES)}")
    writes = raw.get("writes")
    if not isinstance(writes, list) or not writes:
        raise _err(path, "state_probe.writes", "must be a list of {from, do, id, status, ...}")
    maps = tuple(_write_map(path, i, w) for i, w in enumerate(writes))
    return StateProbe(maps, {str(k): v for k, v in status.items()}, tool, dict(args), http,
                      tuple(command) if command else None)


def _write_map(path: Path, i: int, w: Any) -> WriteMap:
    where = f"state_probe.writes[{i}]"
    if not isinstance(w, Mapping):
        raise _err(path, where, "must be a mapping {from, do, id, status, ...}")
    extra = sorted(set(w) - WRITE_KEYS)
    if extra:
        raise _err(path, where, f"unknown key {extra[0]!r} (allowed: "
                   f"{', '.join(sorted(WRITE_KEYS))})")
    if w.get("do") not in WRITE_ACTIONS:
        raise _err(path, f"{where}.do", f"{w.get('do')!r} must be a case action that writes "
                                        f"({', '.join(WRITE_ACTIONS)})")
    for k in ("from", "id", "status"):
        if k not in w:
            raise _err(path, f"{where}.{k}", "is required")
    for k, v in w.items():
        if k != "do" and (not isinstance(v, str) or not PATH_RE.fullmatch(v)):
            raise _err(path, f"{where}.{k}", f"{v!r} must be a field name or dotted path (a.b)")
    if "amount" in w and "amount_minor" in w:
        raise _err(path, f"{where}.amount_minor", "give amount (major units) or "
                   "amount_minor, not both")
    return WriteMap(w["from"], w["do"], {k: v for k, v in w.items() if k not in ("from", "do")})


# -- reading an answer -----------------------------------------------------------------------------

def _at(doc: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(part)
    return doc


def _decimals(currency: str | None) -> int:
    from guardbench.paypal.standin_core import CURRENCY_DECIMALS
    return CURRENCY_DECIMALS.get(currency or "", 2)


def _amount(value: Any, minor: bool, currency: str | None, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, str)
                                                                        and not value.strip()):
        raise ProbeError(f"{where}: {value!r} is no amount (a "
                         f"{'whole number' if minor else 'decimal string'})")
    try:
        d = Decimal(str(value).strip())
    except InvalidOperation:
        raise ProbeError(f"{where}: {value!r} is no amount") from None
    if minor:
        if d != d.to_integral_value():
            raise ProbeError(f"{where}: {value!r} is not a whole number of minor units")
        places = _decimals(currency)
        return str((d / (Decimal(10) ** places)).quantize(Decimal(1).scaleb(-places)))
    return str(d)


def writes_of(probe: StateProbe, text: str) -> list[Write]:
    """The writes a probe's answer shows, in the case vocabulary (ProbeError: it cannot be read
    so)."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        raise ProbeError(f"the state probe's answer is not JSON: {str(text)[:120]!r}") from None
    out = []
    for wm in probe.writes:
        items = _at(doc, wm.source)
        if items is None:
            continue                                  # nothing of this kind written
        if not isinstance(items, list):
            raise ProbeError(f"the state probe's {wm.source!r} is not a list")
        for n, item in enumerate(items):
            where = f"{wm.source}[{n}]"
            f = wm.fields
            raw_status = _at(item, f["status"])
            status = probe.status.get(str(raw_status))
            if status is None:
                raise ProbeError(f"{where}.{f['status']}: status {raw_status!r} is not "
                                 "in the spec's "
                                 f"state_probe.status ({', '.join(probe.status)})")
            wid = _at(item, f["id"])
            if not isinstance(wid, (str, int)) or isinstance(wid, bool):
                raise ProbeError(f"{where}.{f['id']}: no id")
            currency = _at(item, f["currency"]) if "currency" in f else None
            amount = None
            for key, minor in (("amount", False), ("amount_minor", True)):
                if key in f and _at(item, f[key]) is not None:
                    amount = _amount(_at(item, f[key]), minor, currency, f"{where}.{f[key]}")
            ref = _at(item, f["ref"]) if "ref" in f else None
            payee = _at(item, f["payee"]) if "payee" in f else None
            out.append(Write(wm.do, status, str(raw_status), str(wid), None if ref is None
                             else str(ref), amount,
                             None if currency is None else str(currency), None if payee is None
                             else str(payee)))
    return out


def exchange_of(write: Write, settings: Mapping[str, str]) -> tuple[WireRequest, WireResponse]:
    """The PayPal request a write is equivalent to, and a successful answer (settings: the
    operator's merchant_id, supplier_email, currency: what a missing payee or currency is)."""
    from guardbench.paypal.bodies import compose_call
    call = compose_call(write.do, api_base=f"https://{SANDBOX_HOST}", token="state-probe",
                        merchant_id=settings["merchant_id"],
                        supplier_email=settings["supplier_email"],
                        currency=write.currency or settings["currency"],
                        request_id=f"state-{write.id}",
                        amount=write.amount, payee=write.payee, ref=write.ref)
    headers = {k: v for k, v in call["headers"].items() if k != "Authorization"}
    headers["X-Guardbench-State"] = f"{write.status} ({write.system_status}) {write.id}"
    req = WireRequest.make(call["method"], call["url"], headers, call.get("body"))
    body: dict[str, Any] = {"id": write.id, "status": "COMPLETED" if write.status == "executed"
                            else "PENDING"}
    if write.amount is not None:
        body["amount"] = {"currency_code": write.currency or settings["currency"],
                          "value": write.amount}
    return req, WireResponse.make(201, body)

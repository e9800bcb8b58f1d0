"""The operator's policy: which operations an agent may run and what it may choose in each.

Every field of a request belongs to one class:

* **bound**: operator constants (payee, currency, intent, destination), applied last to the
  body, so no agent value survives on those paths;
* **agent**: the agent's choices, in a closed schema (decimal ranges written as strings,
  enums, bounded free text);
* **derived**: computed by the broker (idempotency key, OAuth token); the agent can neither
  read nor set them.

``load_policy(path=None)`` reads a YAML file (default: the shipped example) and refuses,
with ``PolicyError("FILE: operation X", rule)``, a policy that would weaken itself: an agent
field aimed at a bound, derived, payee or currency path; an agent maximum above the per-call
limit; a money-moving operation without limits, or whose amount the limits would not count
(a bound constant amount, a second decimal field, an amount declared as text); two paths of
which one is a prefix of the other; a live environment without GUARDBENCH_ALLOW_LIVE=1; and
malformed YAML, unknown keys, unknown endpoints, bad decimals.
"""
from __future__ import annotations

import os
import re
from decimal import Decimal
from pathlib import Path as FsPath
from typing import Any

from guardbench.broker.money import MoneyError, fmt, parse_decimal
from guardbench.broker.paths import Path, parse_path, path_text
from guardbench.broker.policy_model import (  # noqa: F401  (re-exported)
    ACCOUNT_REFERENCE_KINDS,
    AMOUNT_KEYS,
    CURRENCY_KEYS,
    DERIVED_SOURCES,
    ENVIRONMENTS,
    EXAMPLE_POLICY,
    FIELD_KEYS,
    FIELD_TYPES,
    LIMIT_KEYS,
    NAME_RE,
    OP_KEYS,
    OPERATOR_REF_RE,
    PAYEE_KEYS,
    REFERENCE_KINDS,
    RESPONSE_KEYS,
    RESPONSE_TYPES,
    SKU_RE,
    TOP_KEYS,
    AgentField,
    Operation,
    Policy,
    ResponseField,
)
from guardbench.broker.policy_rules import check_paths, check_weakening
from guardbench.errors import PolicyError
from guardbench.paypal.endpoints import ENDPOINTS


# ------------------------------------------------------------------------------- loading
def load_policy(path: str | os.PathLike | None = None) -> Policy:
    """Load and check a policy file; PolicyError names the file, the operation and the rule."""
    from guardbench.util import yamldoc

    src = FsPath(path) if path is not None else EXAMPLE_POLICY
    where = str(src)
    try:
        text = src.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(where, f"cannot read the file ({exc.__class__.__name__})") from None
    try:
        doc = yamldoc.load(text)
    except yamldoc.YamlTooLarge as exc:
        raise PolicyError(where, str(exc)) from None
    except yamldoc.YamlError as exc:
        raise PolicyError(where,
                          f"malformed YAML{f' at line {exc.line}' if exc.line else ''}") from None
    return policy_from_dict(doc, where)


def policy_from_dict(doc: Any, where: str = "<policy>") -> Policy:
    if not isinstance(doc, dict):
        raise PolicyError(where, "a policy is a YAML mapping")
    _keys(doc, TOP_KEYS, where, "policy")
    env = doc.get("environment", "sandbox")
    if env not in ENVIRONMENTS:
        raise PolicyError(where, f"environment must be sandbox or live, not {env!r}")
    # safeguard: policy_live_opt_in
    if env == "live" and os.environ.get("GUARDBENCH_ALLOW_LIVE") != "1":
        raise PolicyError(where, "environment live without the explicit opt-in "
                          "GUARDBENCH_ALLOW_LIVE=1")
    operator = doc.get("operator") or {}
    if not isinstance(operator, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in operator.items()):
        raise PolicyError(where, "operator must map names to string constants")
    for k in ("merchant_id", "supplier_email", "currency"):
        if k not in operator:
            raise PolicyError(where, f"operator lacks {k}")
    if not re.fullmatch(r"[A-Z]{3}", operator["currency"]):
        raise PolicyError(where, "operator currency must be a 3-letter code, not "
                          f"{operator['currency']!r}")
    catalogue, names = _catalogue(doc.get("catalogue") or {}, where)
    ops_doc = doc.get("operations")
    if not isinstance(ops_doc, dict) or not ops_doc:
        raise PolicyError(where, "operations must be a non-empty mapping")
    ops = {}
    for name, spec in ops_doc.items():
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise PolicyError(where, f"operation name {name!r} must match [a-z][a-z0-9_]*")
        ops[name] = _operation(name, spec, f"{where}: operation {name}", operator, catalogue)
    return Policy(where, env, dict(operator), catalogue, names, ops)


def _keys(d: dict, allowed: set, where: str, what: str) -> None:
    # safeguard: policy_unknown_keys
    for k in d:
        if k not in allowed:
            raise PolicyError(where, f"unknown key {k!r} in {what}")


def _decimal(value: Any, where: str, what: str) -> Decimal:
    if isinstance(value, float):
        raise PolicyError(where, f"bad decimal for {what}: {value!r} is a float; write it as a "
                          "string like \"1.00\"")
    try:
        d = parse_decimal(value)
    except MoneyError as exc:
        raise PolicyError(where, f"bad decimal for {what}: {value!r} ({exc})") from None
    if d < 0:
        raise PolicyError(where, f"bad decimal for {what}: {value!r} is negative")
    return d


def _catalogue(doc: Any, where: str) -> tuple[dict, dict]:
    if not isinstance(doc, dict):
        raise PolicyError(where, "catalogue must map SKUs to prices")
    prices, names = {}, {}
    for sku, entry in doc.items():
        if not isinstance(sku, str) or not SKU_RE.fullmatch(sku):
            raise PolicyError(where, f"catalogue SKU {sku!r} is not a plain identifier")
        if isinstance(entry, dict):
            _keys(entry, {"price", "name"}, where, f"catalogue entry {sku}")
            price, name = entry.get("price"), entry.get("name", sku)
        else:
            price, name = entry, sku
        if not isinstance(name, str) or not name or len(name) > 127:
            raise PolicyError(where, f"catalogue entry {sku}: name must be a short string")
        prices[sku] = _decimal(price, where, f"catalogue price of {sku}")
        names[sku] = name
    return prices, names


def _path(text: Any, where: str, what: str) -> Path:
    try:
        return parse_path(text)
    except ValueError:
        raise PolicyError(where, f"{what}: {text!r} is not a path like a.b[0].c") from None


# complexity over 20, kept: one check per key an operation of the policy may have
def _operation(name: str, spec: Any, where: str, operator: dict,  # noqa: C901
               catalogue: dict) -> Operation:
    if not isinstance(spec, dict):
        raise PolicyError(where, "an operation is a mapping")
    _keys(spec, OP_KEYS, where, "operation")
    ep_name = spec.get("endpoint")
    endpoint = ENDPOINTS.get(ep_name) if isinstance(ep_name, str) else None
    if endpoint is None or ep_name == "oauth.token":
        raise PolicyError(where, f"unknown endpoint {ep_name!r}")
    description = spec.get("description", "")
    if not isinstance(description, str):
        raise PolicyError(where, "description must be a string")

    # bound constants
    bound, bound_paths = {}, {}
    for p, v in (spec.get("bound") or {}).items():
        path = _path(p, where, "bound path")
        if isinstance(v, str):
            m = OPERATOR_REF_RE.fullmatch(v)
            if m:
                if m.group(1) not in operator:
                    raise PolicyError(where, f"bound path {p}: unknown operator constant "
                                      f"{m.group(1)!r}")
                v = operator[m.group(1)]
            elif "${" in v:
                raise PolicyError(where, f"bound path {p}: only whole ${{operator.NAME}} "
                                  "references are allowed")
        elif not isinstance(v, (int, bool)) or isinstance(v, float):
            raise PolicyError(where, f"bound path {p}: a bound value must be a string, "
                              "integer or boolean")
        bound[path_text(path)] = v
        bound_paths[path_text(path)] = path

    # derived values
    derived, derived_paths = {}, {}
    for p, src in (spec.get("derived") or {}).items():
        path = _path(p, where, "derived path")
        if src not in DERIVED_SOURCES:
            raise PolicyError(where, f"derived path {p}: unknown source {src!r} (known: "
                              "idempotency_key)")
        derived[path_text(path)] = src
        derived_paths[path_text(path)] = path

    # agent fields
    agent_doc = spec.get("agent") or {}
    if not isinstance(agent_doc, dict):
        raise PolicyError(where, "agent must map field names to field specs")
    agent = {fname: _field(fname, fspec, where, catalogue) for fname, fspec in agent_doc.items()}
    if endpoint.method == "GET" and (agent or bound or derived):
        raise PolicyError(where, f"endpoint {endpoint.name} takes no body: no agent, bound or "
                          "derived fields")

    # limits and approval
    limits_doc = spec.get("limits") or {}
    if not isinstance(limits_doc, dict):
        raise PolicyError(where, "limits must be a mapping")
    _keys(limits_doc, set(LIMIT_KEYS), where, "limits")
    limits: dict[str, Any] = {}
    for k in ("per_call_max", "daily_total_max"):
        if k in limits_doc:
            limits[k] = _decimal(limits_doc[k], where, f"limits.{k}")
    if "max_calls_per_hour" in limits_doc:
        n = limits_doc["max_calls_per_hour"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise PolicyError(where, "limits.max_calls_per_hour must be a non-negative integer")
        limits["max_calls_per_hour"] = n
    approval_doc = spec.get("approval") or {}
    if not isinstance(approval_doc, dict):
        raise PolicyError(where, "approval must be a mapping like {over_amount: \"200.00\"}")
    _keys(approval_doc, {"over_amount"}, where, "approval")
    approval = {}
    if "over_amount" in approval_doc:
        approval["over_amount"] = _decimal(approval_doc["over_amount"], where,
                                           "approval.over_amount")

    reference = spec.get("reference")
    if reference is not None and reference not in REFERENCE_KINDS:
        raise PolicyError(where, f"reference must be one of {sorted(REFERENCE_KINDS)}, not "
                          f"{reference!r}")
    if ("{id}" in endpoint.path) != (reference is not None):
        raise PolicyError(where, f"endpoint {endpoint.name} "
                          f"{'needs' if '{id}' in endpoint.path else 'takes no'}"
                                 " reference: declare reference: "
                                 "order|capture|payout_batch|dispute|subscription|"
                                 "invoice accordingly")
    amount_from = spec.get("amount_from")
    if amount_from not in (None, "reference"):
        raise PolicyError(where, f"amount_from must be 'reference', not {amount_from!r}")
    if amount_from and reference is None:
        raise PolicyError(where, "amount_from: reference needs a reference")
    if amount_from and reference in ACCOUNT_REFERENCE_KINDS:
        raise PolicyError(where, "amount_from: reference needs an id this broker issued, not "
                          f"a {reference}")

    response = _response(spec.get("response") or {}, where)

    check_paths(where, bound_paths, derived_paths, agent)
    check_weakening(where, endpoint, bound_paths, agent, limits, amount_from)
    return Operation(name, endpoint, description, bound, agent, derived, limits, approval, response,
                     reference, amount_from, bound_paths, derived_paths)


def _field(fname: Any, spec: Any, where: str, catalogue: dict) -> AgentField:
    if not isinstance(fname, str) or not NAME_RE.fullmatch(fname):
        raise PolicyError(where, f"agent field name {fname!r} must match [a-z][a-z0-9_]*")
    if not isinstance(spec, dict):
        raise PolicyError(where, f"agent field {fname!r}: a field is a mapping")
    _keys(spec, FIELD_KEYS, where, f"agent field {fname!r}")
    ftype = spec.get("type")
    if ftype not in FIELD_TYPES:
        raise PolicyError(where,
                          f"agent field {fname!r}: type must be one of decimal, enum, text, "
                          f"not {ftype!r}")
    path = _path(spec.get("path"), where, f"agent field {fname!r} path")
    copies = spec.get("copies") or []
    if not isinstance(copies, list):
        raise PolicyError(where, f"agent field {fname!r}: copies must be a list of paths")
    copy_paths = tuple(_path(c, where, f"agent field {fname!r} copy") for c in copies)
    required = spec.get("required", True)
    if not isinstance(required, bool):
        raise PolicyError(where, f"agent field {fname!r}: required must be true or false")
    desc = spec.get("description", "")
    if not isinstance(desc, str):
        raise PolicyError(where, f"agent field {fname!r}: description must be a string")
    lo = hi = None
    values: tuple[str, ...] = ()
    max_length = None
    label_path = None
    if ftype == "decimal":
        if "max" not in spec:
            raise PolicyError(where, f"agent field {fname!r}: a decimal field needs a max")
        hi = _decimal(spec["max"], where, f"agent field {fname!r} max")
        lo = _decimal(spec.get("min", "0.01"), where, f"agent field {fname!r} min")
        if lo > hi:
            raise PolicyError(where, f"agent field {fname!r}: min {fmt(lo)} is above max {fmt(hi)}")
        extra = {"values", "max_length", "label_path"} & set(spec)
    elif ftype == "enum":
        raw = spec.get("values")
        if raw == "catalogue":
            values = tuple(catalogue)
        elif (isinstance(raw, list) and raw
              and all(isinstance(v, str) and 0 < len(v) <= 127 for v in raw)):
            values = tuple(raw)
        else:
            raise PolicyError(where, f"agent field {fname!r}: values must be a list of strings "
                              "or 'catalogue'")
        if not values:
            raise PolicyError(where, f"agent field {fname!r}: the catalogue is empty")
        if "label_path" in spec:
            if raw != "catalogue":
                raise PolicyError(where, f"agent field {fname!r}: label_path needs "
                                  "values: catalogue")
            label_path = _path(spec["label_path"], where, f"agent field {fname!r} label_path")
        extra = {"min", "max", "max_length"} & set(spec)
    else:
        max_length = spec.get("max_length")
        if (not isinstance(max_length, int) or isinstance(max_length, bool)
            or not 0 < max_length <= 1000):
            raise PolicyError(where, f"agent field {fname!r}: a text field needs max_length "
                              "between 1 and 1000")
        extra = {"min", "max", "values", "label_path"} & set(spec)
    if extra:
        raise PolicyError(where, f"agent field {fname!r}: {sorted(extra)[0]} does not apply to a "
                          f"{ftype} field")
    return AgentField(fname, path, ftype, lo, hi, values, max_length, copy_paths, required,
                      label_path, desc)


def _response(doc: Any, where: str) -> tuple[ResponseField, ...]:
    if not isinstance(doc, dict):
        raise PolicyError(where, "response must map result names to {path, type}")
    out = []
    for rname, spec in doc.items():
        if not isinstance(rname, str) or not NAME_RE.fullmatch(rname):
            raise PolicyError(where, f"response field name {rname!r} must match [a-z][a-z0-9_]*")
        if not isinstance(spec, dict):
            raise PolicyError(where, f"response field {rname!r}: a mapping {{path, type}}")
        _keys(spec, RESPONSE_KEYS, where, f"response field {rname!r}")
        try:
            path = parse_path(spec.get("path"), filters=True)
        except ValueError:
            raise PolicyError(where,
                              f"response field {rname!r}: bad path {spec.get('path')!r}") from None
        rtype = spec.get("type")
        if rtype not in RESPONSE_TYPES:
            raise PolicyError(where, f"response field {rname!r}: type must be one of "
                              f"{sorted(RESPONSE_TYPES)}")
        issues = spec.get("issues")
        if issues is not None and (rtype != "id" or issues not in REFERENCE_KINDS):
            raise PolicyError(where, f"response field {rname!r}: issues must be a reference kind "
                              "on an id field")
        out.append(ResponseField(rname, path, rtype, issues))
    return tuple(out)

"""Validate an agent's parameters against an operation's closed schema.

Unknown or extra parameters, wrong types and malformed decimals are refused
(``parameter_not_allowed``); decimals outside the declared range answer
``parameter_above_max`` / ``parameter_below_min``; free text must pass freetext.violation.
A refusal never echoes the agent's value, only the parameter's name and the rule.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

from guardbench.broker.freetext import violation
from guardbench.broker.money import MoneyError, fmt, parse_decimal
from guardbench.broker.policy import Operation
from guardbench.errors import Refusal

_SAFE_NAME = re.compile(r"[A-Za-z0-9_]{1,40}")


class ParamRefusal(Refusal):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


@dataclass(frozen=True)
class Validated:
    values: Mapping[str, str]        # normalised: decimals as "12.50", enums, text
    amount: Decimal | None           # the operation's decimal field, when it has one


def _name(k: Any) -> str:
    return k if isinstance(k, str) and _SAFE_NAME.fullmatch(k) else "?"


def validate(op: Operation, params: Any) -> Validated:
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ParamRefusal("parameter_not_allowed", "params must be an object of named parameters")
    allowed = ", ".join(op.agent) or "none"
    # safeguard: schema_closed_unknown_params
    for k in params:
        if not isinstance(k, str) or k not in op.agent:
            raise ParamRefusal("parameter_not_allowed",
                               f"parameter {_name(k)!r} is not allowed for {op.name} "
                               f"(allowed: {allowed})")
    values: dict[str, str] = {}
    amount = None
    for name, f in op.agent.items():
        v = params.get(name)
        if v is None:
            if f.required:
                raise ParamRefusal("parameter_not_allowed", f"parameter {name!r} is required")
            continue
        if f.type == "decimal":
            try:
                d = parse_decimal(v)
            except MoneyError as exc:
                raise ParamRefusal("parameter_not_allowed", f"parameter {name!r}: {exc}") from None
            # safeguard: schema_decimal_max
            if f.max is not None and d > f.max:
                raise ParamRefusal("parameter_above_max", f"parameter {name!r} is above its "
                                   f"maximum {fmt(f.max)}")
            # safeguard: schema_decimal_min
            if f.min is not None and d < f.min:
                raise ParamRefusal("parameter_below_min", f"parameter {name!r} is below its "
                                   f"minimum {fmt(f.min)}")
            values[name] = fmt(d)
            amount = d
        elif f.type == "enum":
            # safeguard: schema_enum_values
            if not isinstance(v, str) or v not in f.values:
                raise ParamRefusal("parameter_not_allowed",
                                   f"parameter {name!r} must be one of {', '.join(f.values)}")
            values[name] = v
        else:
            if not isinstance(v, str):
                raise ParamRefusal("parameter_not_allowed", f"parameter {name!r} must be a string")
            # safeguard: freetext_max_length
            if f.max_length is not None and len(v) > f.max_length:
                raise ParamRefusal("parameter_not_allowed",
                                   f"parameter {name!r} is longer than {f.max_length} characters")
            rule = violation(v)
            # safeguard: freetext_rules
            if rule:
                raise ParamRefusal("parameter_not_allowed", f"parameter {name!r}: {rule} not "
                                   "allowed in free text")
            if not v.strip():
                if f.required:
                    raise ParamRefusal("parameter_not_allowed", f"parameter {name!r} is empty")
                continue
            values[name] = v
    return Validated(values, amount)
